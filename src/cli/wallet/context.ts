/**
 * What every wallet command shares: the global options (--node, --keystore, --key, --json), the
 * passphrase, a client whose network errors say what to do, output and progress.
 */
import { createInterface } from 'node:readline'
import { Writable } from 'node:stream'
import type { Command } from 'commander'
import { ApiError, KithClient, addressOf } from '../../client/index.js'
import type { Transaction } from '../../chain/index.js'
import { resolveAccount } from '../../chain/index.js'
import { foldUsername, USERNAME_RE } from '../../contracts/index.js'
import { CliError } from './errors.js'
import { Keystore, defaultKeystoreDir, type KeyInfo, type UnlockedKey } from './keystore.js'

export const DEFAULT_NODE = 'http://localhost:8080'
const CONFIRM_TIMEOUT_MS = 60_000

export interface GlobalOptions {
  node?: string
  keystore?: string
  key?: string
  json?: boolean
}

/** Adds the options every wallet command takes; each is defined here once. */
export function withGlobals (cmd: Command): Command {
  return cmd
    .option('--node <url>', `node to talk to (env KITH_NODE; default ${DEFAULT_NODE})`)
    .option('--keystore <dir>', 'keystore directory (env KITH_KEYSTORE; default ~/.kith/keys)')
    .option('--key <name>', 'which key of the keystore to use (env KITH_KEY; default: "default" or the only key)')
    .option('--json', 'machine-readable output on stdout')
}

/** `args`: the positional arguments; an optional one that was not given is undefined (read those as `string | undefined`). */
export type Action = (ctx: Context, args: string[], opts: Record<string, unknown>) => Promise<void>

/** Wraps an action: the Context from the command's options, the positional arguments. */
export function run (action: Action): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command
    const opts = cmd.opts<GlobalOptions & Record<string, unknown>>()
    await action(new Context(opts), args.slice(0, -2) as string[], opts)
  }
}

export class Context {
  readonly keystore: Keystore
  readonly nodeUrl: string
  readonly json: boolean
  private readonly client: KithClient
  private localNames: Map<string, string> | undefined

  constructor (readonly opts: GlobalOptions, private readonly env: NodeJS.ProcessEnv = process.env) {
    this.keystore = new Keystore(opts.keystore ?? defaultKeystoreDir(env))
    this.nodeUrl = opts.node ?? env.KITH_NODE ?? DEFAULT_NODE
    this.json = opts.json === true
    this.client = new KithClient({ baseUrl: this.nodeUrl, ...(env.KITH_TOKEN !== undefined ? { token: env.KITH_TOKEN } : {}) })
  }

  /** The node's WebSocket (`/api/ws`), with the token when KITH_TOKEN is set. */
  wsUrl (): string {
    const url = new URL('/api/ws', this.nodeUrl)
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:'
    if (this.env.KITH_TOKEN !== undefined) url.searchParams.set('token', this.env.KITH_TOKEN)
    return url.toString()
  }

  /** A name for a sender: its key name in the keystore, else its nickname on the node. */
  async peerName (peer: string, isEd25519: boolean): Promise<string | undefined> {
    this.localNames ??= new Map((await this.keystore.list()).map((k) => [k.pub_key, k.name]))
    let name = this.localNames.get(peer)
    if (name === undefined && isEd25519) {
      name = await this.api(async (client) => (await client.identity(peer)).nickname).catch(() => undefined)
    }
    return name === '' ? undefined : name
  }

  unreachable (why: string): CliError {
    return new CliError('NODE_UNREACHABLE', `cannot reach a node at ${this.nodeUrl} (${why}); is a node running there? start one with \`npm start\` (bin/kith start --dev) or pass --node URL`)
  }

  /** A node call whose failures say what to do. */
  async api<T> (call: (client: KithClient) => Promise<T>): Promise<T> {
    try {
      return await call(this.client)
    } catch (err) {
      if (err instanceof ApiError || err instanceof CliError) throw err
      const cause = (err as { cause?: { code?: string } }).cause
      if (err instanceof TypeError || cause?.code !== undefined) {
        throw this.unreachable(cause?.code ?? (err as Error).message)
      }
      throw err
    }
  }

  /** A node call whose refusal (an HTTP error answer) is reported as a refusal of `what`. */
  async refusable<T> (what: string, call: (client: KithClient) => Promise<T>): Promise<T> {
    return await this.api(call).catch((err: unknown) => {
      if (err instanceof ApiError) throw new CliError('NODE_REFUSED', `the node refused the ${what} (${err.status}): ${err.message}`)
      throw err
    })
  }

  async passphrase (opts: { confirm?: boolean } = {}): Promise<string> {
    const fromEnv = this.env.KITH_PASSPHRASE
    if (fromEnv !== undefined) return fromEnv
    if (process.stdin.isTTY !== true) throw new CliError('NO_PASSPHRASE', 'no passphrase: set KITH_PASSPHRASE or run the command in a terminal to be asked for it')
    const first = await prompt('passphrase: ')
    if (opts.confirm === true && await prompt('again: ') !== first) throw new CliError('BAD_PASSPHRASE', 'the two passphrases differ; nothing was written')
    return first
  }

  async keyInfo (name?: string): Promise<KeyInfo> {
    return await this.keystore.find(name ?? this.opts.key ?? this.env.KITH_KEY)
  }

  async unlock (name?: string): Promise<UnlockedKey> {
    const info = await this.keyInfo(name)
    return await this.keystore.unlock(info, await this.passphrase())
  }

  /**
   * An account from a pubkey, an address, a username of the node's username registry, or the
   * name of a key in the local keystore (tried in that order).
   */
  async resolve (target: string): Promise<{ pub: string, label: string }> {
    const pub = resolveAccount(target)
    if (pub !== undefined) return { pub, label: target }
    const username = foldUsername(target.replace(/^@/, ''))
    if (USERNAME_RE.test(username)) {
      const owner = await this.api(async (c) => await c.usernameRecord(`name:${username}`))
      if (owner !== undefined) return { pub: owner, label: `@${username} (${addressOf(owner)})` }
    }
    const local = (await this.keystore.list()).find((k) => k.name === target)
    if (local !== undefined) return { pub: local.pub_key, label: `${target} (${local.address})` }
    throw new CliError('BAD_RECIPIENT', `"${target}" is not a 64-hex pubkey, a kith address (${addressOf('00'.repeat(32)).slice(0, 5)}…), a registered username, or a key name in ${this.keystore.dir}`)
  }

  progress (text: string): void {
    process.stderr.write(`${text}\n`)
  }

  /** Submits, then polls until the transaction is in a block, telling stderr how it goes. */
  async submitAndWait (tx: Transaction, what: string): Promise<Record<string, unknown>> {
    await this.refusable(what, async (c) => await c.submit(tx))
    this.progress(`${what}: submitted ${tx.id}, waiting for a block…`)
    const started = Date.now()
    const ticker = setInterval(() => this.progress(`  still waiting (${Math.round((Date.now() - started) / 1000)} s)…`), 2000)
    try {
      const detail = await this.api(async (c) => await c.waitForConfirmation(tx.id, { timeoutMs: CONFIRM_TIMEOUT_MS }))
      this.progress(`${what}: confirmed in block ${String(detail.block_index)}`)
      return detail
    } catch (err) {
      if (err instanceof Error && /not confirmed in time/.test(err.message)) {
        throw new CliError('TIMEOUT', `${tx.id} was accepted but not in a block after ${CONFIRM_TIMEOUT_MS / 1000} s; check it later with GET ${this.nodeUrl}/api/tx/${tx.id}`)
      }
      throw err
    } finally {
      clearInterval(ticker)
    }
  }

  /** `--json`: the value as JSON; otherwise the readable lines. */
  print (value: unknown, lines: string[] | (() => string[])): void {
    if (this.json) process.stdout.write(JSON.stringify(value, null, 2) + '\n')
    else process.stdout.write((typeof lines === 'function' ? lines() : lines).join('\n') + '\n')
  }
}

async function prompt (question: string): Promise<string> {
  let muted = false
  const output = new Writable({
    write (chunk: Buffer, _enc, done) {
      if (!muted) process.stderr.write(chunk)
      done()
    }
  })
  const rl = createInterface({ input: process.stdin, output, terminal: true })
  process.stderr.write(question)
  muted = true
  try {
    return await new Promise((resolve) => rl.question('', resolve))
  } finally {
    rl.close()
    process.stderr.write('\n')
  }
}
