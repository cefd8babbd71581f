/**
 * Test harness that runs the real node the way users do: `bin/kith init` then `bin/kith start`
 * as a child process. `bin/kith` is spawned directly with the pinned Node (>= 22) first on
 * PATH, so its shebang execs that Node in place: the child's pid IS the node (checked against
 * the pid in the node's own log lines), and `kill9()` kills the node, not a wrapper.
 *
 * Every node started here is registered; `stopAllNodes()` (call it from an `after` hook) and a
 * process 'exit' hook kill whatever is still running (SIGKILL) and remove the temporary homes,
 * even when a test fails half-way.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { KithClient } from '../../src/client/index.js'

const execFileP = promisify(execFile)

/** Repository root: this file is test/helpers/ in src form and dist/test/helpers/ when built. */
function findRoot (): string {
  const here = dirname(fileURLToPath(import.meta.url))
  const up2 = resolve(here, '..', '..')
  return up2.endsWith('/dist') || up2.endsWith('\\dist') ? resolve(up2, '..') : up2
}

export const REPO_ROOT = findRoot()
export const KITH_BIN = join(REPO_ROOT, 'bin', 'kith')
const PINNED_NODE_DIR = join(REPO_ROOT, 'node_modules', '.bin')

// A bound on a hung start, not a speed check: a node starts in ~1-2 s on a quiet machine, ~12 s on one shared with other builds
const READY_TIMEOUT_MS = 60_000
const STOP_TIMEOUT_MS = 15_000
const LOG_LINES_KEPT = 400

export interface AllocEntry {
  pub: string
  amountUt: number
}

export interface StartOptions {
  /** genesis allocations (only used when the home is created here) */
  alloc?: AllocEntry[]
  /** extra environment; SVC_* variables of the test process are never inherited */
  env?: Record<string, string>
  /** --block-interval-ms; default 150 */
  blockIntervalMs?: number
  /**
   * --empty-blocks; default true here (a block every interval, which most tests time by),
   * where the node's own default is false; tests of the idle chain pass false
   */
  emptyBlocks?: boolean
  /** an existing, initialised home; when absent a temporary one is created (and removed) */
  home?: string
  chainId?: string
  /** bearer token for the returned client */
  token?: string
  /** the flags make bin/kith run the node as its child (resource caps): `pid` is then the child's */
  relaunches?: boolean
  /** sees every log line as it comes, from before the node is ready */
  onLog?: (line: LogLine) => void
  /** more `bin/kith start` flags */
  args?: string[]
  /**
   * The node is expected to exit on its own (a crash point): if it exits before it is ready,
   * start() resolves instead of failing, and `whenExited()` tells how it ended. A crash point
   * reached during start-up sync comes before the HTTP listener on a slow machine.
   */
  mayExitBeforeReady?: boolean
  /**
   * Run the node inside a network namespace (test/netns/wan.ts): `prefix` is the argv that
   * enters it (`ip netns exec NS`, which execs in place, so the pid is still the node's) and
   * `host` the address its HTTP listens on there.
   */
  netns?: { prefix: string[], host: string }
}

export interface InitInfo {
  home: string
  chain_id: string
  node_key: string
  validator_key: string
}

export interface LogLine {
  level?: number
  msg?: string
  pid?: number
  port?: number
  [key: string]: unknown
}

export interface ExitInfo {
  code: number | null
  signal: NodeJS.Signals | null
}

/** The environment a node child runs with: pinned Node first on PATH, no inherited SVC_*. */
export function childEnv (extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('SVC_')) env[key] = value
  }
  env.PATH = `${PINNED_NODE_DIR}:${dirname(process.execPath)}:${process.env.PATH ?? ''}`
  // Rate limiting is off unless a test asks for it.
  env.SVC_RATE_LIMIT_RPS = '0'
  return { ...env, ...extra }
}

export async function kithInit (home: string, opts: { chainId?: string, alloc?: AllocEntry[] }): Promise<InitInfo> {
  const args = ['init', '--home', home, '--chain-id', opts.chainId ?? 'kith-test']
  for (const { pub, amountUt } of opts.alloc ?? []) args.push('--alloc', `${pub}=${amountUt}`)
  const { stdout } = await execFileP(KITH_BIN, args, { env: childEnv({}), cwd: REPO_ROOT, timeout: READY_TIMEOUT_MS })
  return JSON.parse(stdout) as InitInfo
}

/** The listener a home made by `kith init` has (config/default.json); a test that sets its own keeps it. */
const DEFAULT_P2P_LISTEN = '/ip4/0.0.0.0/tcp/4001'

/** Whether the home's config.json leaves p2p_listen at the default. */
function listensOnDefaultPort (home: string): boolean {
  try {
    const config = JSON.parse(readFileSync(join(home, 'config.json'), 'utf8')) as { p2p_listen?: string[] }
    return config.p2p_listen === undefined || (config.p2p_listen.length === 1 && config.p2p_listen[0] === DEFAULT_P2P_LISTEN)
  } catch {
    return false
  }
}

export class NodeProcess {
  url = ''
  port = 0
  pid = 0
  client: KithClient = new KithClient({ baseUrl: 'http://127.0.0.1:1' })
  readonly logs: LogLine[] = []
  /** stdout lines that are not JSON, and stderr */
  readonly rawOutput: string[] = []
  private readonly logWaiters = new Set<(line: LogLine) => void>()
  private child: ChildProcess | undefined
  private exited: Promise<ExitInfo> = Promise.resolve({ code: 0, signal: null })
  private running = false

  constructor (
    readonly home: string,
    readonly init: InitInfo,
    private readonly opts: StartOptions,
    /** temporary directory to remove on cleanup (undefined when the caller owns the home) */
    private readonly tempDir: string | undefined
  ) {}

  get validatorPub (): string {
    return this.init.validator_key
  }

  get isRunning (): boolean {
    return this.running
  }

  /** Spawns `bin/kith start` on the home and waits for the "http listening" log line. */
  async start (): Promise<void> {
    if (this.running) throw new Error('node is already running')
    const args = ['start', '--home', this.home, '--block-interval-ms', String(this.opts.blockIntervalMs ?? 150), '--empty-blocks', String(this.opts.emptyBlocks ?? true)]
    // any free port for HTTP, unless the caller names the listener (by either of its names)
    if (!(this.opts.args ?? []).some((arg) => arg === '--http-addr' || arg === '--stats-addr')) args.push('--http-addr', '127.0.0.1:0')
    // A home made here is a lone node: any free port for libp2p (testnet homes keep their own).
    // So is a given home whose config leaves the default listener: two tests must never both
    // bind 0.0.0.0:4001, where the second node would fail to start or a stranger could dial it.
    if (this.tempDir !== undefined || listensOnDefaultPort(this.home)) args.push('--p2p-listen', '/ip4/127.0.0.1/tcp/0')
    // KITH_TEST_HTTP_WORKERS=N runs every test node behind N HTTP edge threads (a whole-suite check of src/api/edge)
    const edges = process.env.KITH_TEST_HTTP_WORKERS
    if (edges !== undefined && edges !== '' && !(this.opts.args ?? []).includes('--http-workers')) args.push('--http-workers', edges)
    args.push(...this.opts.args ?? [])
    const [cmd, ...argv] = [...this.opts.netns?.prefix ?? [], KITH_BIN, ...args]
    const child = spawn(cmd, argv, { env: childEnv(this.opts.env ?? {}), cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    this.child = child
    this.running = true
    this.exited = new Promise<ExitInfo>((resolveExit) => {
      child.once('exit', (code, signal) => {
        this.running = false
        resolveExit({ code, signal })
      })
      // a process that could not be spawned emits 'error' and no 'exit'
      child.once('error', () => {
        if (child.pid !== undefined) return
        this.running = false
        resolveExit({ code: null, signal: null })
      })
    })
    const ready = new Promise<LogLine>((resolveReady, rejectReady) => {
      const timer = setTimeout(() => rejectReady(new Error(`node did not log "http listening" within ${READY_TIMEOUT_MS} ms\n${this.tail()}`)), READY_TIMEOUT_MS)
      child.once('error', (err) => { clearTimeout(timer); rejectReady(err) })
      void this.exited.then(({ code, signal }) => {
        clearTimeout(timer)
        rejectReady(new Error(`node exited before it was ready (code ${String(code)}, signal ${String(signal)})\n${this.tail()}`))
      })
      this.readLines(child, (line) => {
        this.opts.onLog?.(line)
        if (line.msg === 'http listening') { clearTimeout(timer); resolveReady(line) }
      })
    })
    let line: LogLine
    try {
      line = await ready
    } catch (err) {
      const exitedOnItsOwn = !this.running
      this.killSync()
      await this.exited
      if (this.opts.mayExitBeforeReady === true && exitedOnItsOwn) return
      throw err
    }
    if (typeof line.port !== 'number') throw new Error(`"http listening" line has no port: ${JSON.stringify(line)}`)
    if (this.opts.relaunches === true && typeof line.pid === 'number') {
      // --max-ram-mb / --max-cpu: bin/kith runs the node as its child (src/cli/resource-caps.ts)
      this.pid = line.pid
    } else if (child.pid === undefined || line.pid !== child.pid) {
      this.killSync()
      throw new Error(`the spawned process (pid ${String(child.pid)}) is not the node (log pid ${String(line.pid)}): bin/kith re-ran itself in a wrapper`)
    } else {
      this.pid = child.pid
    }
    this.port = line.port
    this.url = `http://${this.opts.netns?.host ?? '127.0.0.1'}:${line.port}`
    this.client = new KithClient({ baseUrl: this.url, ...(this.opts.token !== undefined ? { token: this.opts.token } : {}) })
  }

  private readLines (child: ChildProcess, onLine: (line: LogLine) => void): void {
    let buffered = ''
    child.stdout?.setEncoding('utf8')
    child.stdout?.on('data', (chunk: string) => {
      buffered += chunk
      let nl = buffered.indexOf('\n')
      while (nl >= 0) {
        const text = buffered.slice(0, nl)
        buffered = buffered.slice(nl + 1)
        nl = buffered.indexOf('\n')
        if (text.trim() === '') continue
        let parsed: LogLine | undefined
        try {
          const value: unknown = JSON.parse(text)
          if (value !== null && typeof value === 'object' && !Array.isArray(value)) parsed = value as LogLine
        } catch {
          parsed = undefined
        }
        if (parsed === undefined) {
          this.keep(this.rawOutput, text)
        } else {
          this.keep(this.logs, parsed)
          onLine(parsed)
          for (const waiter of [...this.logWaiters]) waiter(parsed)
        }
      }
    })
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', (chunk: string) => { this.keep(this.rawOutput, chunk.trimEnd()) })
  }

  private keep<T> (list: T[], item: T): void {
    list.push(item)
    if (list.length > LOG_LINES_KEPT) list.splice(0, list.length - LOG_LINES_KEPT)
  }

  /**
   * Resolves with the next log line (logged after this call) that matches `predicate`. Call it
   * before triggering what should log, then await it.
   */
  async nextLog (predicate: (line: LogLine) => boolean, timeoutMs: number): Promise<LogLine> {
    return await new Promise<LogLine>((resolveLine, rejectLine) => {
      const timer = setTimeout(() => {
        this.logWaiters.delete(waiter)
        rejectLine(new Error(`no matching log line within ${timeoutMs} ms\n${this.tail()}`))
      }, timeoutMs)
      const waiter = (line: LogLine): void => {
        if (!predicate(line)) return
        clearTimeout(timer)
        this.logWaiters.delete(waiter)
        resolveLine(line)
      }
      this.logWaiters.add(waiter)
    })
  }

  /** The last output lines, for error messages. */
  tail (n = 30): string {
    const logs = this.logs.slice(-n).map((l) => JSON.stringify(l))
    const raw = this.rawOutput.slice(-n)
    return [...logs, ...(raw.length > 0 ? ['--- other output ---', ...raw] : [])].join('\n')
  }

  /** SIGTERM, then waits for the exit and asserts a clean one (code 0, no signal). */
  async stop (): Promise<ExitInfo> {
    if (!this.running || this.child === undefined) return await this.exited
    this.child.kill('SIGTERM')
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<'timeout'>((resolveTimeout) => { timer = setTimeout(() => resolveTimeout('timeout'), STOP_TIMEOUT_MS) })
    const result = await Promise.race([this.exited, timedOut])
    clearTimeout(timer)
    if (result === 'timeout') {
      this.killSync()
      await this.exited
      throw new Error(`node did not exit within ${STOP_TIMEOUT_MS} ms of SIGTERM\n${this.tail()}`)
    }
    if (result.code !== 0 || result.signal !== null) {
      throw new Error(`node did not stop cleanly on SIGTERM (code ${String(result.code)}, signal ${String(result.signal)})\n${this.tail()}`)
    }
    return result
  }

  /** Resolves when the running process exits on its own (a crash point, a fatal error). */
  whenExited (): Promise<ExitInfo> {
    return this.exited
  }

  /** SIGKILL: no shutdown code runs. Resolves once the process is gone. */
  async kill9 (): Promise<ExitInfo> {
    this.killSync()
    return await this.exited
  }

  /** Sends SIGKILL now without waiting (usable from a synchronous code path). */
  killSync (): void {
    if (this.running && this.child !== undefined) {
      try {
        this.child.kill('SIGKILL')
      } catch {
        // already gone
      }
    }
  }

  /** Starts the node again on the same home (it must be stopped or killed first). */
  async restart (): Promise<void> {
    if (this.running) throw new Error('restart: the node is still running; stop() or kill9() it first')
    await this.start()
  }

  /** Kills the node if it still runs and removes its temporary home. */
  async cleanup (): Promise<void> {
    if (this.running) await this.kill9()
    if (this.tempDir !== undefined) await rm(this.tempDir, { recursive: true, force: true })
  }

  /** Synchronous variant for the process 'exit' hook. */
  cleanupSync (): void {
    this.killSync()
    if (this.tempDir !== undefined) rmSync(this.tempDir, { recursive: true, force: true })
  }

  async genesis (): Promise<{ params: { block_reward_ut: number, max_block_txs: number }, alloc: Array<{ pub_key: string, amount_ut: number }> }> {
    return JSON.parse(await readFile(join(this.home, 'genesis.json'), 'utf8')) as { params: { block_reward_ut: number, max_block_txs: number }, alloc: Array<{ pub_key: string, amount_ut: number }> }
  }
}

const created = new Set<NodeProcess>()

process.on('exit', () => {
  for (const node of created) node.cleanupSync()
})
// When the test runner cancels this file (timeout, Ctrl-C) it signals us: take the nodes along.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const node of created) node.cleanupSync()
    process.exit(signal === 'SIGINT' ? 130 : 143)
  })
}

/** Starts a node registered for cleanup; one that fails to start is cleaned up at once. */
async function startRegistered (node: NodeProcess): Promise<NodeProcess> {
  created.add(node)
  try {
    await node.start()
  } catch (err) {
    await node.cleanup()
    created.delete(node)
    throw err
  }
  return node
}

/** Creates (or reuses) a home, starts the node on it and waits until it listens. */
export async function startNode (opts: StartOptions = {}): Promise<NodeProcess> {
  let home = opts.home
  let tempDir: string | undefined
  let init: InitInfo
  if (home === undefined) {
    tempDir = await mkdtemp(join(tmpdir(), 'kith-it-'))
    home = join(tempDir, 'home')
    try {
      init = await kithInit(home, { chainId: opts.chainId, alloc: opts.alloc })
    } catch (err) {
      await rm(tempDir, { recursive: true, force: true })
      throw err
    }
  } else {
    const genesis = JSON.parse(await readFile(join(home, 'genesis.json'), 'utf8')) as { chain_id: string }
    const nodeKey = JSON.parse(await readFile(join(home, 'node_key.json'), 'utf8')) as { pub_key: string }
    const validatorKey = JSON.parse(await readFile(join(home, 'validator_key.json'), 'utf8')) as { pub_key: string }
    init = { home, chain_id: genesis.chain_id, node_key: nodeKey.pub_key, validator_key: validatorKey.pub_key }
  }
  const node = new NodeProcess(home, init, opts, tempDir)
  return await startRegistered(node)
}

/**
 * Starts `bin/kith start --dev` on a new temporary home, as `npm start` does on a clone: the home
 * gets the dev account (`dev_account.json`, 1,000,000 T) and the onboarding faucet.
 */
export async function startDevNode (opts: Omit<StartOptions, 'home' | 'alloc' | 'chainId'> = {}): Promise<NodeProcess> {
  const tempDir = await mkdtemp(join(tmpdir(), 'kith-dev-'))
  const home = join(tempDir, 'home')
  // the keys exist once the node has initialised the home; nothing here reads them before
  const init: InitInfo = { home, chain_id: 'kith-dev', node_key: '', validator_key: '' }
  const node = new NodeProcess(home, init, { ...opts, args: ['--dev', ...opts.args ?? []] }, tempDir)
  return await startRegistered(node)
}

/** Kills every node this process started and still runs, and removes their temporary homes. */
export async function stopAllNodes (): Promise<void> {
  const nodes = [...created]
  created.clear()
  await Promise.all(nodes.map(async (node) => { await node.cleanup() }))
}

/**
 * Polls `predicate` until it returns something other than undefined/false (which is then
 * returned) or `timeoutMs` passes. Errors thrown by the predicate count as "not yet"; the last
 * one is reported on timeout.
 */
export async function waitFor<T> (
  predicate: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs: number,
  opts: { intervalMs?: number, message?: string } = {}
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    try {
      const value = await predicate()
      if (value !== undefined && value !== false) return value
    } catch (err) {
      lastError = err
    }
    if (Date.now() >= deadline) {
      const why = lastError instanceof Error ? `; last error: ${lastError.message}` : ''
      throw new Error(`${opts.message ?? 'condition'} not met within ${timeoutMs} ms${why}`)
    }
    await new Promise((resolveSleep) => setTimeout(resolveSleep, opts.intervalMs ?? 50))
  }
}

export interface HttpResult {
  status: number
  headers: Headers
  text: string
  /** parsed body, undefined when it is not JSON */
  json: unknown
}

/** A raw HTTP request (status, headers and body as sent), for asserting error shapes. */
export async function http (baseUrl: string, method: string, path: string, opts: { body?: unknown, rawBody?: string, headers?: Record<string, string> } = {}): Promise<HttpResult> {
  const headers: Record<string, string> = { ...opts.headers }
  let body: string | undefined
  if (opts.rawBody !== undefined) body = opts.rawBody
  else if (opts.body !== undefined) body = JSON.stringify(opts.body)
  if (body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json'
  const res = await fetch(new URL(path, baseUrl), { method, headers, body })
  const text = await res.text()
  let json: unknown
  try {
    json = text === '' ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, headers: res.headers, text, json }
}

/** The `error` string of a `{"error": string}` body; throws when the body has another shape. */
export function errorMessage (res: HttpResult): string {
  const body = res.json
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new Error(`expected a JSON error object, got status ${res.status} body ${JSON.stringify(res.text)}`)
  }
  const keys = Object.keys(body)
  const error = (body as Record<string, unknown>).error
  if (keys.length !== 1 || typeof error !== 'string' || error === '') {
    throw new Error(`expected exactly {"error": string}, got ${res.text}`)
  }
  return error
}

export { pickBasePort } from '../../bench/lib/ports.js'

/** A `bin/kith sidecar` child process, ready once it logged its URL. */
export interface SidecarProcess {
  url: string
  child: ChildProcess
  exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
  output: string[]
}

export async function startSidecar (args: string[] = [], env: Record<string, string> = {}): Promise<SidecarProcess> {
  const child = spawn(KITH_BIN, ['sidecar', '--listen', '127.0.0.1:0', ...args], { env: childEnv(env), cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = new Promise<{ code: number | null, signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  const output: string[] = []
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk))
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sidecar did not log "sidecar listening"\n${output.join('')}`)), READY_TIMEOUT_MS)
    let buffered = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output.push(chunk)
      buffered += chunk
      for (const line of buffered.split('\n').slice(0, -1)) {
        let log: { msg?: string, url?: string } = {}
        try {
          log = JSON.parse(line) as { msg?: string, url?: string }
        } catch { /* not a log line */ }
        if (log.msg === 'sidecar listening' && typeof log.url === 'string') { clearTimeout(timer); resolve(log.url) }
      }
      buffered = buffered.slice(buffered.lastIndexOf('\n') + 1)
    })
    void exited.then(({ code }) => { clearTimeout(timer); reject(new Error(`sidecar exited (code ${String(code)}) before it listened\n${output.join('')}`)) })
  }).catch((err: unknown) => {
    child.kill('SIGKILL')
    throw err
  })
  return { url, child, exited, output }
}
