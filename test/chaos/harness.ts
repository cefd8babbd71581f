/**
 * Shared pieces of the chaos tests (test/chaos/*.test.ts, `npm run chaos`): a 4-validator
 * testnet made with `bin/kith testnet` and run as real processes on loopback, each with its own
 * KITH_DENY_PEERS_FILE (the partition hook, src/node/faults.ts); an open-loop load generator of
 * signed TRANSFERs that records every transaction a node answered `accepted`; and the checks
 * that close every run: no fork at any height, every accepted transaction confirmed on every
 * node in the same block.
 *
 * `npm run chaos` runs them (about four minutes); `npm test` leaves test/chaos/ out.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { newAccount, transfer, type Account } from '../../src/client/index.js'
import { KITH_BIN, REPO_ROOT, pickBasePort, startNode, stopAllNodes, type NodeProcess } from '../helpers/node-process.js'
import { WAN_HTTP_PORT, placeOnWan, type WanNetwork } from '../netns/wan.js'

const run = promisify(execFile)

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** One line of progress on stderr (node:test keeps stdout for its own report). */
export function note (line: string): void {
  process.stderr.write(`[chaos ${new Date().toISOString().slice(11, 23)}] ${line}\n`)
}

// ---------------------------------------------------------------------------------------
// HTTP

const REQUEST_TIMEOUT_MS = 5000

export class HttpFailure extends Error {
  constructor (readonly status: number, message: string) {
    super(message)
    this.name = 'HttpFailure'
  }
}

/** GET/POST with a timeout; resolves with the parsed JSON of a 2xx answer, throws otherwise. */
export async function callJson<T> (baseUrl: string, method: string, path: string, body?: string, timeoutMs = REQUEST_TIMEOUT_MS): Promise<T> {
  const res = await fetch(new URL(path, baseUrl), {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body,
    signal: AbortSignal.timeout(timeoutMs)
  })
  const text = await res.text()
  if (!res.ok) throw new HttpFailure(res.status, `${method} ${path}: ${res.status} ${text.slice(0, 200)}`)
  return JSON.parse(text) as T
}

export async function heightOf (node: NodeProcess): Promise<number> {
  return (await callJson<{ height: number }>(node.url, 'GET', '/api/netstats')).height
}

/** Heights of the nodes that answer; a node that does not answer (down, busy) is left out. */
export async function heights (nodes: NodeProcess[]): Promise<Array<number | undefined>> {
  return await Promise.all(nodes.map(async (n) => {
    if (!n.isRunning) return undefined
    try {
      return await heightOf(n)
    } catch {
      return undefined
    }
  }))
}

export interface BlockInfo {
  height: number
  hash: string
  /** ISO 8601, the header's time */
  time: string
  tx_ids: string[]
  commit: { round: number } | null
}

export async function blockAt (node: NodeProcess, height: number): Promise<BlockInfo> {
  return await callJson<BlockInfo>(node.url, 'GET', `/api/blocks/${height}`)
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function mapLimit<T, R> (items: T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await fn(items[i], i)
    }
  }))
  return out
}

// ---------------------------------------------------------------------------------------
// the testnet

export interface TestnetMember {
  home: string
  peerId: string
  validatorPub: string
}

export interface Testnet {
  dir: string
  members: TestnetMember[]
  nodes: NodeProcess[]
  /** one funded account per entry, each holding FUNDED_UT */
  accounts: Account[]
  /** KITH_DENY_PEERS_FILE of node i */
  denyFiles: string[]
  /** replaces node i's deny list (atomically: a half-written file would read as "deny none") */
  deny: (i: number, peerIds: string[]) => Promise<void>
  /** kills every node and removes the directory */
  close: () => Promise<void>
}

export const FUNDED_UT = 1_000_000_000_000

/**
 * `bin/kith testnet --validators N`, funded accounts in the genesis, an empty deny file per
 * node (present before start, as the hook wants), and N `kith start` processes. With `wan`,
 * node i runs in the WAN harness's namespace i instead, and no deny file is given to the
 * nodes: partitions are the harness's, in the network.
 */
export async function startTestnet (opts: { validators?: number, accounts?: number, blockIntervalMs: number, prefix: string, wan?: WanNetwork }): Promise<Testnet> {
  const validators = opts.validators ?? 4
  const dir = await mkdtemp(join(tmpdir(), `kith-chaos-${opts.prefix}-`))
  const accounts = Array.from({ length: opts.accounts ?? 8 }, () => newAccount())
  const basePort = await pickBasePort(validators)
  const args = ['testnet', '--validators', String(validators), '--output', join(dir, 'net'), '--base-port', String(basePort), '--chain-id', `chaos-${opts.prefix}`]
  for (const a of accounts) args.push('--alloc', `${a.pub}=${FUNDED_UT}`)
  const { stdout } = await run(KITH_BIN, args, {
    cwd: REPO_ROOT, env: { ...process.env, PATH: `${join(REPO_ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}` }
  })
  const members = (JSON.parse(stdout) as { nodes: TestnetMember[] }).nodes
  const denyFiles = members.map((_, i) => join(dir, `deny-${i}.json`))
  const deny = async (i: number, peerIds: string[]): Promise<void> => {
    const tmp = `${denyFiles[i]}.tmp`
    await writeFile(tmp, JSON.stringify(peerIds))
    await rename(tmp, denyFiles[i])
  }
  for (let i = 0; i < validators; i++) await deny(i, [])
  const wan = opts.wan
  if (wan !== undefined) await placeOnWan(members, wan)
  const nodes = await Promise.all(members.map(async (m, i) => await startNode(wan === undefined
    ? { home: m.home, blockIntervalMs: opts.blockIntervalMs, env: { KITH_DENY_PEERS_FILE: denyFiles[i] } }
    : { home: m.home, blockIntervalMs: opts.blockIntervalMs, netns: { prefix: wan.exec(i), host: wan.addr(i) }, args: ['--http-addr', `${wan.addr(i)}:${WAN_HTTP_PORT}`] })))
  const close = async (): Promise<void> => {
    await stopAllNodes()
    await rm(dir, { recursive: true, force: true })
  }
  return { dir, members, nodes, accounts, denyFiles, deny, close }
}

/** Fails fast when a node died without being killed by the test. */
export class ExitWatch {
  private readonly expected = new Set<NodeProcess>()
  readonly unexpected: string[] = []

  constructor (nodes: NodeProcess[]) {
    nodes.forEach((n, i) => this.watch(n, i))
  }

  /** call after every (re)start: the exit promise is per process */
  watch (node: NodeProcess, index: number): void {
    this.expected.delete(node)
    void node.whenExited().then((exit) => {
      if (this.expected.has(node)) return
      this.unexpected.push(`node${index} exited by itself (code ${String(exit.code)}, signal ${String(exit.signal)})\n${node.tail(40)}`)
    })
  }

  /** the test is about to kill or stop this node */
  expect (node: NodeProcess): void {
    this.expected.add(node)
  }

  assertNone (): void {
    if (this.unexpected.length > 0) throw new Error(this.unexpected.join('\n\n'))
  }
}

// ---------------------------------------------------------------------------------------
// load

export interface LoadStats {
  sent: number
  accepted: number
  /** answered, but not `accepted` (status → count) */
  refused: Record<string, number>
  /** no answer: connection refused (node down), reset, timeout */
  failed: number
  firstRefusals: string[]
}

/**
 * Open-loop TRANSFERs at `ratePerSec`, spread round-robin over the nodes that run, from the
 * funded accounts in turn. Bounded by `maxTxs` and `maxMs`; `stop()` ends it early. Every
 * transaction answered `{"status": "accepted"}` is recorded with the node that accepted it.
 */
export class LoadGenerator {
  readonly accepted = new Map<string, { node: number, at: number }>()
  readonly stats: LoadStats = { sent: 0, accepted: 0, refused: {}, failed: 0, firstRefusals: [] }
  private stopped = false
  private inFlight = 0
  private done: Promise<void> | undefined
  private rr = 0
  private readonly sink = newAccount().pub

  constructor (
    private readonly nodes: () => NodeProcess[],
    private readonly accounts: Account[],
    private readonly opts: { ratePerSec: number, maxTxs: number, maxMs: number, maxInFlight?: number, only?: () => number[] }
  ) {}

  start (): void {
    this.done = this.loop()
  }

  async stop (): Promise<void> {
    this.stopped = true
    await this.done
    // let the requests in flight settle (each has a timeout)
    const deadline = Date.now() + REQUEST_TIMEOUT_MS + 1000
    while (this.inFlight > 0 && Date.now() < deadline) await sleep(20)
  }

  private async loop (): Promise<void> {
    const tickMs = 50
    const perTick = this.opts.ratePerSec * tickMs / 1000
    const t0 = Date.now()
    let owed = 0
    let tick = 0
    while (!this.stopped && Date.now() - t0 < this.opts.maxMs && this.stats.sent < this.opts.maxTxs) {
      owed += perTick
      while (owed >= 1 && this.stats.sent < this.opts.maxTxs) {
        owed -= 1
        if (this.inFlight >= (this.opts.maxInFlight ?? 400)) continue
        this.sendOne()
      }
      tick += 1
      const wait = t0 + tick * tickMs - Date.now()
      if (wait > 0) await sleep(wait)
    }
  }

  private sendOne (): void {
    const all = this.nodes()
    const allowed = this.opts.only?.() ?? all.map((_, i) => i)
    const candidates = allowed.filter((i) => all[i].isRunning && all[i].url !== '')
    if (candidates.length === 0) return
    const index = candidates[this.rr++ % candidates.length]
    const node = all[index]
    const from = this.accounts[this.stats.sent % this.accounts.length]
    const tx = transfer(from, this.sink, 1 + (this.stats.sent % 1000))
    this.stats.sent += 1
    this.inFlight += 1
    callJson<{ id: string, status: string }>(node.url, 'POST', '/api/tx', JSON.stringify(tx)).then((answer) => {
      if (answer.status === 'accepted' && answer.id === tx.id) {
        this.stats.accepted += 1
        this.accepted.set(tx.id, { node: index, at: Date.now() })
      } else {
        this.refuse(String(answer.status), JSON.stringify(answer))
      }
    }, (err: unknown) => {
      if (err instanceof HttpFailure) this.refuse(String(err.status), err.message)
      else this.stats.failed += 1
    }).finally(() => { this.inFlight -= 1 })
  }

  private refuse (key: string, text: string): void {
    this.stats.refused[key] = (this.stats.refused[key] ?? 0) + 1
    if (this.stats.firstRefusals.length < 5) this.stats.firstRefusals.push(text.slice(0, 300))
  }
}

// ---------------------------------------------------------------------------------------
// end-of-run checks

/** Every node's blocks from 1 up to a height, fetched once and kept. */
export class ChainWalker {
  /** per node: height → block */
  readonly blocks: Array<Map<number, BlockInfo>>
  /** per node: tx id → height */
  readonly txHeight: Array<Map<string, number>>

  constructor (private readonly nodes: NodeProcess[]) {
    this.blocks = nodes.map(() => new Map())
    this.txHeight = nodes.map(() => new Map())
  }

  /** fetches node i's blocks it has not fetched yet, up to `top` */
  async walk (i: number, top: number): Promise<void> {
    const missing: number[] = []
    for (let h = 1; h <= top; h++) if (!this.blocks[i].has(h)) missing.push(h)
    await mapLimit(missing, 8, async (h) => {
      const b = await blockAt(this.nodes[i], h)
      this.blocks[i].set(h, b)
      for (const id of b.tx_ids) this.txHeight[i].set(id, h)
    })
  }

  /** heights (up to `top`) at which the fetched hashes are not all equal */
  forks (top: number): Array<{ height: number, hashes: string[] }> {
    const out: Array<{ height: number, hashes: string[] }> = []
    for (let h = 1; h <= top; h++) {
      const hashes = this.blocks.map((m) => m.get(h)?.hash ?? '?')
      if (new Set(hashes).size !== 1) out.push({ height: h, hashes })
    }
    return out
  }
}

export interface ConfirmReport {
  /** accepted ids not in any block of node i, per node, when the wait ended */
  missing: string[][]
  /** ids whose GET /api/tx detail disagrees between nodes or with the block walk */
  mismatched: string[]
  forks: Array<{ height: number, hashes: string[] }>
  commonHeight: number
  waitedMs: number
}

/**
 * Waits (at most `timeoutMs`) until every accepted id is in a block on every node, then checks
 * that every node holds the same block at every height up to the common height, and that
 * GET /api/tx/{id} on every node names the same block (index and hash) for every accepted id.
 */
export async function confirmEverywhere (nodes: NodeProcess[], accepted: Iterable<string>, timeoutMs: number): Promise<ConfirmReport> {
  const ids = [...accepted]
  const walker = new ChainWalker(nodes)
  const t0 = Date.now()
  let missing: string[][]
  for (;;) {
    const hs = await heights(nodes)
    await Promise.all(nodes.map(async (_, i) => {
      const h = hs[i]
      if (h !== undefined) await walker.walk(i, h).catch(() => {})
    }))
    missing = nodes.map((_, i) => ids.filter((id) => !walker.txHeight[i].has(id)))
    if (missing.every((m) => m.length === 0) || Date.now() - t0 > timeoutMs) break
    await sleep(500)
  }
  const waitedMs = Date.now() - t0
  const finalHeights = await heights(nodes)
  const commonHeight = Math.min(...finalHeights.map((h) => h ?? 0))
  await Promise.all(nodes.map(async (_, i) => await walker.walk(i, commonHeight)))
  const forks = walker.forks(commonHeight)
  const mismatched: string[] = []
  await mapLimit(ids, 16, async (id) => {
    const details = await Promise.all(nodes.map(async (n) => {
      try {
        return await callJson<{ block_index?: number, block_hash?: string }>(n.url, 'GET', `/api/tx/${encodeURIComponent(id)}`)
      } catch {
        return {}
      }
    }))
    const indexes = new Set(details.map((d) => d.block_index))
    const hashes = new Set(details.map((d) => d.block_hash))
    const walked = walker.txHeight[0].get(id)
    if (indexes.size !== 1 || hashes.size !== 1 || typeof details[0].block_index !== 'number' || (walked !== undefined && walked !== details[0].block_index)) {
      mismatched.push(`${id}: ${JSON.stringify(details.map((d) => [d.block_index, d.block_hash?.slice(0, 12)]))}`)
    }
  })
  return { missing, mismatched, forks, commonHeight, waitedMs }
}

/** Lines of the kept logs that report a validator signing two different votes. */
export function equivocationLines (nodes: NodeProcess[]): string[] {
  return nodes.flatMap((n, i) => n.logs
    .filter((l) => typeof l.msg === 'string' && l.msg.includes('equivocat'))
    .map((l) => `node${i}: ${JSON.stringify(l)}`))
}

export function percentile (values: number[], q: number): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}
