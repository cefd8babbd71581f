/**
 * Network benchmark: four validators (`bin/kith testnet`, four `bin/kith start` processes on
 * this machine's cores) agreeing on signed TRANSFERs over libp2p on loopback.
 *
 * - TRANSFERs from SENDERS funded accounts are signed and serialised before any timed phase;
 * - **saturation**: on a fresh testnet per C, C concurrent keep-alive HTTP submitters, spread
 *   evenly over the four nodes, POST back to back for DURATION; confirmed tx/s = transactions
 *   committed (node 0's `total_txs`, polled every 25 ms) / (first POST → the block holding the
 *   last one seen committed), after waiting until every node has committed every accepted
 *   transaction; steady = the commit rate while submitting (from 3 s in), which shows a stall
 *   that the end-to-end figure hides (the backlog is committed once the load stops);
 *   sustained = the lower of the two, the headline;
 * - **latency**: on a fresh testnet per RATE (default 500 and 1,000 tx/s), an open-loop sender
 *   offers that fixed rate, round-robin over the nodes, each POST at its scheduled time whatever
 *   the answers do; a watcher polls GET /api/blocks/latest on every node every 25 ms (and
 *   fetches any height it skipped), and the latency of a transaction is (first time its block
 *   was seen on the node it was submitted to) − (its scheduled send time), for every accepted
 *   transaction;
 * - CPU seconds of each node (all threads, and the main thread), of this client, and of the rest
 *   of the machine (/proc/stat), which tells a run disturbed by other processes.
 *
 * All node processes are killed if this process exits early; homes live in temporary
 * directories removed after each run (a profile, when asked for, is kept).
 *
 * With `profile`, node 0 of the first saturation testnet runs under `node --cpu-prof`.
 *
 * Run alone: node dist/bench/network.js [--quick] [--profile]; KITH_BENCH_NODE_LOGS=DIR keeps each
 * node's log, at level info, in DIR (slow proposal checks, rounds that timed out).
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { createWriteStream, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { summariseProfile, type ProfileSummary } from './lib/cpuprofile.js'
import { REPO_ROOT, nodeBinary, prepareWorkload, request, sleep, stopChild, type HttpTarget, type Workload } from './lib/harness.js'
import { WAN_HTTP_PORT, placeOnWan, type WanNetwork } from '../test/netns/wan.js'
import { DEFAULT_TIMEOUTS } from '../src/consensus/index.js'
import { pickBasePort } from './lib/ports.js'
import { processCpuSeconds, selfCpuSeconds } from './lib/proc.js'
import { percentiles, type Percentiles } from './lib/load.js'
import { RawHttpConnection } from './lib/raw-http.js'
import { PROFILE_INCLUSIVE, formatProfile } from './throughput.js'

const execFileP = promisify(execFile)


// ---------------------------------------------------------------------------------------
// configuration

export interface NetworkBenchConfig {
  validators: number
  /** funded sender accounts */
  senders: number
  blockIntervalMs: number
  /** transactions signed in advance, shared by every run (each is a fresh chain) */
  poolSize: number
  /** closed-loop submitters spread over the nodes, one fresh testnet per entry; null to skip */
  saturation: { concurrencies: number[], durationMs: number } | null
  /** open-loop offered loads, one fresh testnet each; null to skip */
  latency: { ratesPerSec: number[], durationMs: number } | null
  /** run node 0 of the first saturation testnet under `node --cpu-prof` */
  profile: boolean
}

export const DEFAULT_NETWORK_CONFIG: NetworkBenchConfig = {
  validators: 4,
  senders: 400,
  blockIntervalMs: 250,
  poolSize: 80_000,
  saturation: { concurrencies: [64, 512, 2048], durationMs: 20_000 },
  latency: { ratesPerSec: [500, 1000], durationMs: 20_000 },
  profile: false
}

/** The goals of the issue this benchmark answers. */
export const NETWORK_GOALS = { saturationTxPerSec: 3000, latencyP99Ms: 3000, atRatePerSec: 500, overloadShare: 0.9 }

const SENDER_BALANCE_UT = 1_000_000_000_000
const POLL_MS = 25
const DRAIN_TIMEOUT_MS = 60_000
// a bound on a hung start, not a speed check: on a machine shared with other test runs four nodes took more than 40 s
const STARTUP_TIMEOUT_MS = 90_000
/** the open-loop sender drops (and counts) a send when this many requests are unanswered */
const MAX_IN_FLIGHT = 4000

// ---------------------------------------------------------------------------------------
// results

export interface NodeCpu {
  /** CPU seconds / wall seconds over the phase, all threads */
  cores: number
  /** the JavaScript main thread alone */
  mainCores: number
}

export interface PhaseCommon {
  submitted: number
  accepted: number
  rejected: Record<string, number>
  firstErrors: string[]
  committed: number
  /** accepted but not committed on every node when the drain wait ended (should be 0) */
  unconfirmed: number
  blocks: number
  maxTxsPerBlock: number
  peakMempool: number
  /** blocks of the phase (node 0) decided in a round above 0, the highest such round, and the longest wait between two commits */
  /** … and when, in seconds from the start of the phase, the longest wait ended */
  rounds: { late: number, maxRound: number, maxGapMs: number, maxGapEndS: number }
  nodes: NodeCpu[]
  /** sum over the nodes, per committed transaction, µs */
  networkCpuUsPerTx: number
  clientCores: number
  /** cores the rest of the machine used over the phase (all CPU time in /proc/stat minus the nodes and this client): other sessions' load */
  otherCores: number
  loadavg: [number, number]
  wallSeconds: number
}

export interface SaturationResult extends PhaseCommon {
  concurrency: number
  profiled: boolean
  acceptedPerSec: number
  /** committed / (first POST → block holding the last one seen on node 0) */
  confirmedPerSec: number
  /** commit rate from 3 s after the start to the end of submission */
  steadyPerSec: number
  /** min(confirmedPerSec, steadyPerSec) */
  sustainedPerSec: number
  ackLatencyMs: Percentiles
  /** from sending the submission that was accepted to its block seen on that node */
  confirmLatencyMs: Percentiles
  /** 503 answers (each retried after its Retry-After) */
  busy: number
}

export interface LatencyResult extends PhaseCommon {
  offeredPerSec: number
  /** accepted / send window */
  acceptedPerSec: number
  /** committed / (first send → last accepted tx seen committed) */
  confirmedPerSec: number
  /** scheduled send → its block first seen on the node it was sent to */
  confirmLatencyMs: Percentiles
  ackLatencyMs: Percentiles
  /** how late the sender was against its schedule (client overload shows here) */
  sendLagMs: Percentiles
  /** sends skipped because MAX_IN_FLIGHT requests were unanswered */
  dropped: number
  /** per node, CPU cores used by the idle testnet (consensus, status, pollers) over 3 s before the load */
  idleCores: number[]
}

export interface NetworkBenchResult {
  config: NetworkBenchConfig
  signPerSec: number
  saturation: SaturationResult[]
  latency: LatencyResult[]
  profile?: { summary: ProfileSummary, file: string }
  elapsedMs: number
}

// ---------------------------------------------------------------------------------------
// helpers

// ---------------------------------------------------------------------------------------
// workload

// ---------------------------------------------------------------------------------------
// the testnet

interface TestnetNode {
  child: ChildProcess
  http: HttpTarget
  output: () => string
}

export interface RunningTestnet {
  dir: string
  nodes: TestnetNode[]
  profileDir: string | undefined
}

const running = new Set<ChildProcess>()
process.on('exit', () => {
  for (const child of running) {
    try { child.kill('SIGKILL') } catch { /* gone */ }
  }
})

/** With `wan`, node i runs in the WAN harness's namespace i (test/netns/wan.ts, bench/wan.ts). */
export async function startTestnet (work: Workload, cfg: NetworkBenchConfig, profile: boolean, wan?: WanNetwork): Promise<RunningTestnet> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kith-bench-net-'))
  const bin = path.join(REPO_ROOT, 'bin', 'kith')
  const nodeBin = nodeBinary()
  const basePort = await pickBasePort(cfg.validators)
  const alloc = work.senders.flatMap((s) => ['--alloc', `${s.pub}=${SENDER_BALANCE_UT}`])
  let info: { nodes: Array<{ home: string, httpPort: number, peerId: string }> }
  try {
    const { stdout } = await execFileP(nodeBin, [bin, 'testnet', '--validators', String(cfg.validators), '--output', path.join(dir, 'net'),
      '--base-port', String(basePort), '--chain-id', 'bench-net', ...alloc], { maxBuffer: 1 << 22, timeout: STARTUP_TIMEOUT_MS })
    info = JSON.parse(stdout) as typeof info
  } catch (err) {
    rmSync(dir, { recursive: true, force: true })
    const stderr = (err as { stderr?: string }).stderr ?? ''
    throw new Error(`\`kith testnet\` failed: ${stderr.trim() || String(err).slice(0, 300)}`, { cause: err })
  }
  if (wan !== undefined) await placeOnWan(info.nodes, wan)
  const profileDir = profile ? mkdtempSync(path.join(os.tmpdir(), 'kith-bench-net-prof-')) : undefined
  const nodes: TestnetNode[] = info.nodes.map((m, i) => {
    const nodeArgs = i === 0 && profileDir !== undefined ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []
    const logDir = process.env.KITH_BENCH_NODE_LOGS
    const argv = [...nodeArgs, bin, 'start', '--home', m.home, '--block-interval-ms', String(cfg.blockIntervalMs), '--empty-blocks', 'true', '--log-level', logDir !== undefined ? 'info' : 'warn']
    // `ip netns exec` execs in place: the child's pid is still the node's (CPU figures)
    const child = spawn(wan !== undefined ? 'ip' : nodeBin, wan !== undefined ? [...wan.exec(i).slice(1), nodeBin, ...argv] : argv, {
      env: { ...process.env, SVC_RATE_LIMIT_RPS: '0' },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    if (logDir !== undefined) child.stdout?.pipe(createWriteStream(path.join(logDir, `node${i}-${Date.now()}.log`)))
    running.add(child)
    child.once('exit', () => running.delete(child))
    let out = ''
    const onData = (d: Buffer): void => { if (out.length < 20_000) out += d.toString() }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    return { child, http: wan !== undefined ? { host: wan.addr(i), port: WAN_HTTP_PORT } : m.httpPort, output: () => out }
  })
  const testnet: RunningTestnet = { dir, nodes, profileDir }
  try {
    const agent = new http.Agent({ keepAlive: false })
    const deadline = Date.now() + STARTUP_TIMEOUT_MS
    // every node answers, and all are past height 2 (so they found each other and agree)
    for (;;) {
      const hs = await Promise.all(nodes.map(async (n) => {
        if (n.child.exitCode !== null) throw new Error(`a node exited during startup (code ${n.child.exitCode}):\n${n.output()}`)
        try {
          const res = await request(agent, n.http, 'GET', '/api/netstats')
          return res.status === 200 ? (JSON.parse(res.body) as { height: number }).height : -1
        } catch {
          return -1
        }
      }))
      if (hs.every((h) => h >= 2)) break
      if (Date.now() > deadline) throw new Error(`the testnet did not reach height 2 within ${STARTUP_TIMEOUT_MS} ms (heights ${hs.join(', ')}):\n${nodes[0].output()}`)
      await sleep(100)
    }
    agent.destroy()
  } catch (err) {
    await stopTestnet(testnet)
    throw err
  }
  return testnet
}

export async function stopTestnet (t: RunningTestnet): Promise<void> {
  await Promise.all(t.nodes.map(async ({ child }) => await stopChild(child)))
  rmSync(t.dir, { recursive: true, force: true })
}

// ---------------------------------------------------------------------------------------
// observation: netstats of every node

interface NetSample { t: number, height: number, totalTxs: number, mempool: number }

/** Polls GET /api/netstats of every node (node 0 every 25 ms, the others every 100 ms). */
class NetstatsPoller {
  readonly samples: NetSample[][]
  private polling = true
  private readonly loops: Array<Promise<void>>
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 8 })

  constructor (private readonly testnet: RunningTestnet) {
    this.samples = testnet.nodes.map(() => [])
    this.loops = testnet.nodes.map(async (n, i) => {
      while (this.polling) {
        try {
          const res = await request(this.agent, n.http, 'GET', '/api/netstats')
          const t = Date.now()
          if (res.status === 200) {
            const s = JSON.parse(res.body) as { height: number, total_txs: number, mempool_size: number }
            this.samples[i].push({ t, height: s.height, totalTxs: s.total_txs, mempool: s.mempool_size })
          }
        } catch { /* keep polling */ }
        await sleep(i === 0 ? POLL_MS : 4 * POLL_MS)
      }
    })
  }

  last (i: number): NetSample | undefined {
    return this.samples[i].at(-1)
  }

  /** waits until every node has committed `accepted` transactions and node 0's mempool is empty */
  async drain (accepted: number, after: number): Promise<void> {
    const deadline = Date.now() + DRAIN_TIMEOUT_MS
    while (Date.now() < deadline) {
      const all = this.testnet.nodes.map((_, i) => this.last(i))
      if (all.every((s) => s !== undefined && s.t > after && s.totalTxs >= accepted) && (all[0]?.mempool ?? 1) === 0) return
      for (const n of this.testnet.nodes) if (n.child.exitCode !== null) throw new Error(`a node exited during the run:\n${n.output()}`)
      await sleep(POLL_MS)
    }
  }

  async stop (): Promise<void> {
    this.polling = false
    await Promise.all(this.loops)
    this.agent.destroy()
  }
}

function blockStats (samples: NetSample[], startHeight: number): { blocks: number, maxTxsPerBlock: number, peakMempool: number } {
  let maxTxsPerBlock = 0
  let peakMempool = 0
  for (let k = 1; k < samples.length; k++) {
    peakMempool = Math.max(peakMempool, samples[k].mempool)
    if (samples[k].height === samples[k - 1].height + 1) maxTxsPerBlock = Math.max(maxTxsPerBlock, samples[k].totalTxs - samples[k - 1].totalTxs)
  }
  return { blocks: (samples.at(-1)?.height ?? startHeight) - startHeight, maxTxsPerBlock, peakMempool }
}

/** Rounds in which node 0's blocks of the phase were decided (GET /api/blocks/{h} `commit.round`), and the longest gap between commits. */
async function roundStats (testnet: RunningTestnet, samples: NetSample[], fromHeight: number): Promise<PhaseCommon['rounds']> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })
  const top = samples.at(-1)?.height ?? fromHeight
  let late = 0
  let maxRound = 0
  for (let h = fromHeight + 1; h <= top; h++) {
    try {
      const res = await request(agent, testnet.nodes[0].http, 'GET', `/api/blocks/${h}`)
      const round = (JSON.parse(res.body) as { commit: { round: number } | null }).commit?.round ?? 0
      if (round > 0) late += 1
      maxRound = Math.max(maxRound, round)
    } catch { /* leave it out */ }
  }
  agent.destroy()
  let maxGapMs = 0
  let maxGapEndS = 0
  let lastChange: NetSample | undefined
  const start = samples[0]?.t ?? 0
  for (const x of samples) {
    if (lastChange === undefined || x.height > lastChange.height) {
      if (lastChange !== undefined && x.t - lastChange.t > maxGapMs) {
        maxGapMs = x.t - lastChange.t
        maxGapEndS = (x.t - start) / 1000
      }
      lastChange = x
    }
  }
  return { late, maxRound, maxGapMs, maxGapEndS }
}

/** Busy CPU seconds of the whole machine so far (/proc/stat: all but idle and iowait); NaN where unreadable. */
function machineBusySeconds (): number {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]
    const f = line.trim().split(/\s+/).slice(1, 9).map(Number)
    const total = f.reduce((a, b) => a + b, 0)
    return (total - f[3] - f[4]) / USER_HZ
  } catch {
    return NaN
  }
}
const USER_HZ = 100

class CpuMeter {
  private readonly machine0 = machineBusySeconds()
  private readonly node0: Array<[number, number]>
  private readonly self0 = selfCpuSeconds()
  private readonly load0 = os.loadavg()[0]
  private readonly t0 = Date.now()

  constructor (private readonly testnet: RunningTestnet) {
    this.node0 = testnet.nodes.map(({ child }) => [processCpuSeconds(child.pid ?? 0) ?? NaN, processCpuSeconds(child.pid ?? 0, child.pid) ?? NaN])
  }

  read (committed: number): Pick<PhaseCommon, 'nodes' | 'networkCpuUsPerTx' | 'clientCores' | 'otherCores' | 'loadavg' | 'wallSeconds'> {
    const wall = (Date.now() - this.t0) / 1000
    let total = 0
    const nodes = this.testnet.nodes.map(({ child }, i): NodeCpu => {
      const all = (processCpuSeconds(child.pid ?? 0) ?? NaN) - this.node0[i][0]
      const main = (processCpuSeconds(child.pid ?? 0, child.pid) ?? NaN) - this.node0[i][1]
      total += all
      return { cores: all / wall, mainCores: main / wall }
    })
    const client = selfCpuSeconds() - this.self0
    return {
      nodes,
      networkCpuUsPerTx: (total * 1e6) / committed,
      clientCores: client / wall,
      otherCores: Math.max(0, (machineBusySeconds() - this.machine0 - total - client) / wall),
      loadavg: [this.load0, os.loadavg()[0]],
      wallSeconds: wall
    }
  }
}

function recordError (rejected: Record<string, number>, firstErrors: string[], key: string, text: string): void {
  rejected[key] = (rejected[key] ?? 0) + 1
  if (firstErrors.length < 5) firstErrors.push(text.slice(0, 200))
}

// ---------------------------------------------------------------------------------------
// saturation

export async function runSaturation (work: Workload, testnet: RunningTestnet, concurrency: number, durationMs: number, profiled: boolean): Promise<SaturationResult> {
  const poller = new NetstatsPoller(testnet)
  const watcher = new BlockWatcher(testnet)
  await sleep(300)
  const startHeight = poller.last(0)?.height ?? 0
  const startTxs = poller.last(0)?.totalTxs ?? 0
  const nodeCount = testnet.nodes.length
  const n = work.bodies.length
  const sentAt = new Float64Array(n)
  const ackAt = new Float64Array(n)
  const ok = new Uint8Array(n)
  const sentTo = new Uint8Array(n)
  let accepted = 0
  let busy = 0
  const rejected: Record<string, number> = {}
  const firstErrors: string[] = []
  let next = 0
  const cpu = new CpuMeter(testnet)
  const t0 = Date.now()
  const deadline = t0 + durationMs
  // closed loop; a 503 is retried after its Retry-After, as a well-behaved app does
  const worker = async (w: number): Promise<void> => {
    const target = w % nodeCount
    // raw sockets (bench/lib/raw-http.ts): node:http's client would take 35-60 µs per request from the cores the nodes share
    const to = testnet.nodes[target].http
    const connection = typeof to === 'number' ? new RawHttpConnection(to) : new RawHttpConnection(to.port, to.host)
    let i = -1
    while (Date.now() < deadline) {
      if (i < 0) {
        if (next >= n) break
        i = next++
        sentTo[i] = target
      }
      sentAt[i] = Date.now()
      try {
        const res = await connection.request('POST', '/api/tx', work.bodies[i])
        ackAt[i] = Date.now()
        if (res.status === 503) {
          busy += 1
          await sleep((res.retryAfter ?? 1) * 1000)
          continue
        }
        if (res.status === 200) {
          accepted += 1
          ok[i] = 1
        } else recordError(rejected, firstErrors, String(res.status), `${res.status} ${res.body.toString('utf8')}`)
      } catch (err) {
        ackAt[i] = Date.now()
        recordError(rejected, firstErrors, 'network', String(err))
      }
      i = -1
    }
    connection.close()
  }
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)))
  const submitted = next
  let lastAck = t0
  for (let i = 0; i < submitted; i++) if (ackAt[i] > lastAck) lastAck = ackAt[i]
  const submitEnd = Date.now()
  await poller.drain(startTxs + accepted, submitEnd)
  await sleep(2 * POLL_MS)
  await watcher.stop()
  await poller.stop()
  const confirm: number[] = []
  for (let i = 0; i < submitted; i++) {
    const seen = ok[i] === 1 ? watcher.seen[sentTo[i]].get(work.ids[i]) : undefined
    if (seen !== undefined) confirm.push(seen - sentAt[i])
  }
  const s0 = poller.samples[0]
  const final = s0.at(-1) as NetSample
  const committed = final.totalTxs - startTxs
  const committedEverywhere = Math.min(...poller.samples.map((s) => (s.at(-1)?.totalTxs ?? 0) - startTxs))
  const done = s0.find((s) => s.totalTxs >= final.totalTxs) as NetSample
  const a = s0.find((s) => s.t >= t0 + 3000)
  const b = [...s0].reverse().find((s) => s.t <= submitEnd)
  const ack: number[] = []
  for (let i = 0; i < submitted; i++) ack.push(ackAt[i] - sentAt[i])
  const cpuRead = cpu.read(committed)
  const rounds = await roundStats(testnet, s0.filter((s) => s.t >= t0), startHeight)
  const confirmedPerSec = committed / ((done.t - t0) / 1000)
  const steadyPerSec = a !== undefined && b !== undefined && b.t > a.t ? (b.totalTxs - a.totalTxs) / ((b.t - a.t) / 1000) : NaN
  return {
    concurrency,
    profiled,
    submitted,
    accepted,
    rejected,
    firstErrors,
    committed,
    unconfirmed: Math.max(0, accepted - committedEverywhere),
    ...blockStats(s0.filter((s) => s.t >= t0), startHeight),
    ...cpuRead,
    rounds,
    acceptedPerSec: accepted / ((lastAck - t0) / 1000),
    confirmedPerSec,
    steadyPerSec,
    sustainedPerSec: Number.isFinite(steadyPerSec) ? Math.min(confirmedPerSec, steadyPerSec) : confirmedPerSec,
    ackLatencyMs: percentiles(ack),
    confirmLatencyMs: percentiles(confirm),
    busy
  }
}

// ---------------------------------------------------------------------------------------
// latency at a fixed offered load

/**
 * First time each transaction's block was seen on each node: GET /api/netstats every 25 ms, and
 * each new block read once (polling /api/blocks/latest instead would make every node decode its
 * latest block 40 times a second, a load the benchmark itself put on what it measures).
 */
class BlockWatcher {
  /** per node: tx id → first time its block was seen committed there */
  readonly seen: Array<Map<string, number>>
  private polling = true
  private readonly loops: Array<Promise<void>>
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 8 })

  constructor (testnet: RunningTestnet) {
    this.seen = testnet.nodes.map(() => new Map())
    this.loops = testnet.nodes.map(async (n, i) => {
      let lastHeight: number | undefined
      while (this.polling) {
        try {
          const res = await request(this.agent, n.http, 'GET', '/api/netstats')
          const t = Date.now()
          if (res.status === 200) {
            const { height } = JSON.parse(res.body) as { height: number }
            if (lastHeight === undefined) lastHeight = height
            // every block up to `height` was committed no later than now
            for (let h = lastHeight + 1; h <= height; h++) {
              const block = await request(this.agent, n.http, 'GET', `/api/blocks/${h}`)
              if (block.status !== 200) break
              this.mark(i, (JSON.parse(block.body) as { tx_ids: string[] }).tx_ids, t)
              lastHeight = h
            }
          }
        } catch { /* keep polling */ }
        await sleep(POLL_MS)
      }
    })
  }

  private mark (node: number, ids: string[], t: number): void {
    const m = this.seen[node]
    for (const id of ids) if (!m.has(id)) m.set(id, t)
  }

  async stop (): Promise<void> {
    this.polling = false
    await Promise.all(this.loops)
    this.agent.destroy()
  }
}

export async function runLatency (work: Workload, testnet: RunningTestnet, ratePerSec: number, durationMs: number): Promise<LatencyResult> {
  const idle = new CpuMeter(testnet)
  await sleep(3000)
  const idleCores = idle.read(1).nodes.map((x) => x.cores)
  const poller = new NetstatsPoller(testnet)
  const watcher = new BlockWatcher(testnet)
  await sleep(300)
  const startHeight = poller.last(0)?.height ?? 0
  const startTxs = poller.last(0)?.totalTxs ?? 0
  const nodeCount = testnet.nodes.length
  const agents = testnet.nodes.map(() => new http.Agent({ keepAlive: true, maxSockets: 512 }))
  const total = Math.min(work.bodies.length, Math.floor(ratePerSec * durationMs / 1000))
  const scheduled = new Float64Array(total)
  const sentAt = new Float64Array(total)
  const ackAt = new Float64Array(total)
  const ok = new Uint8Array(total)
  const rejected: Record<string, number> = {}
  const firstErrors: string[] = []
  let inFlight = 0
  let dropped = 0
  const answers: Array<Promise<void>> = []
  const cpu = new CpuMeter(testnet)
  const t0 = Date.now() + 20
  const intervalMs = 1000 / ratePerSec
  let i = 0
  while (i < total) {
    const now = Date.now()
    while (i < total && t0 + i * intervalMs <= now) {
      const k = i++
      scheduled[k] = t0 + k * intervalMs
      if (inFlight >= MAX_IN_FLIGHT) { dropped += 1; continue }
      const target = k % nodeCount
      sentAt[k] = Date.now()
      inFlight += 1
      answers.push(request(agents[target], testnet.nodes[target].http, 'POST', '/api/tx', work.bodies[k]).then((res) => {
        ackAt[k] = Date.now()
        if (res.status === 200) ok[k] = 1
        else recordError(rejected, firstErrors, String(res.status), `${res.status} ${res.body}`)
      }, (err: unknown) => {
        ackAt[k] = Date.now()
        recordError(rejected, firstErrors, 'network', String(err))
      }).finally(() => { inFlight -= 1 }))
    }
    const wait = t0 + i * intervalMs - Date.now()
    await sleep(Math.max(1, Math.min(10, wait)))
  }
  await Promise.all(answers)
  const submitEnd = Date.now()
  let accepted = 0
  for (let k = 0; k < total; k++) accepted += ok[k]
  // every accepted transaction seen committed on the node it was sent to
  const deadline = Date.now() + DRAIN_TIMEOUT_MS
  const pendingOn = (): number => {
    let pending = 0
    for (let k = 0; k < total; k++) if (ok[k] === 1 && !watcher.seen[k % nodeCount].has(work.ids[k])) pending += 1
    return pending
  }
  while (pendingOn() > 0 && Date.now() < deadline) await sleep(100)
  await poller.drain(startTxs + accepted, submitEnd)
  await watcher.stop()
  await poller.stop()

  const confirm: number[] = []
  const ack: number[] = []
  const lag: number[] = []
  let lastSeen = t0
  let unseen = 0
  for (let k = 0; k < total; k++) {
    if (sentAt[k] === 0) continue
    ack.push(ackAt[k] - sentAt[k])
    lag.push(sentAt[k] - scheduled[k])
    if (ok[k] !== 1) continue
    const seen = watcher.seen[k % nodeCount].get(work.ids[k])
    if (seen === undefined) { unseen += 1; continue }
    confirm.push(seen - scheduled[k])
    if (seen > lastSeen) lastSeen = seen
  }
  const s0 = poller.samples[0]
  const committed = (s0.at(-1)?.totalTxs ?? startTxs) - startTxs
  const committedEverywhere = Math.min(...poller.samples.map((s) => (s.at(-1)?.totalTxs ?? 0) - startTxs))
  for (const agent of agents) agent.destroy()
  const cpuRead = cpu.read(committed)
  const rounds = await roundStats(testnet, s0.filter((s) => s.t >= t0), startHeight)
  return {
    offeredPerSec: ratePerSec,
    submitted: total - dropped,
    accepted,
    rejected,
    firstErrors,
    committed,
    unconfirmed: Math.max(unseen, accepted - committedEverywhere),
    ...blockStats(s0.filter((s) => s.t >= t0), startHeight),
    ...cpuRead,
    rounds,
    acceptedPerSec: accepted / (total * intervalMs / 1000),
    confirmedPerSec: committed / ((lastSeen - t0) / 1000),
    confirmLatencyMs: percentiles(confirm),
    ackLatencyMs: percentiles(ack),
    sendLagMs: percentiles(lag),
    dropped,
    idleCores
  }
}

// ---------------------------------------------------------------------------------------
// the benchmark

export async function runNetworkBench (config: Partial<NetworkBenchConfig> = {}, log: (line: string) => void = (l) => console.error(l)): Promise<NetworkBenchResult> {
  const cfg: NetworkBenchConfig = { ...DEFAULT_NETWORK_CONFIG, ...config }
  const started = Date.now()
  log(`network: signing ${cfg.poolSize} TRANSFERs from ${cfg.senders} senders...`)
  const signStart = performance.now()
  const work = prepareWorkload(cfg.senders, cfg.poolSize, 'net')
  const signPerSec = cfg.poolSize / ((performance.now() - signStart) / 1000)
  const result: NetworkBenchResult = { config: cfg, signPerSec, saturation: [], latency: [], elapsedMs: 0 }

  if (cfg.saturation !== null) {
    const { concurrencies, durationMs } = cfg.saturation
    for (const [k, concurrency] of concurrencies.entries()) {
      const profiled = cfg.profile && k === 0
      log(`network: saturation, ${cfg.validators} validators, C=${concurrency}, ${durationMs / 1000} s${profiled ? ' (node 0 profiled)' : ''}...`)
      const testnet = await startTestnet(work, cfg, profiled)
      let r: SaturationResult
      try {
        r = await runSaturation(work, testnet, concurrency, durationMs, profiled)
      } finally {
        await stopTestnet(testnet)
      }
      result.saturation.push(r)
      log(`network: C=${concurrency}: ${Math.round(r.confirmedPerSec)} confirmed tx/s, steady ${Math.round(r.steadyPerSec)}, confirm p50 ${Math.round(r.confirmLatencyMs.p50)} ms p99 ${Math.round(r.confirmLatencyMs.p99)} ms, 503 ${r.busy}, longest commit gap ${r.rounds.maxGapMs} ms (ending ${r.rounds.maxGapEndS.toFixed(1)} s in), ` +
        `${r.nodes.map((x) => x.cores.toFixed(2)).join('/')} cores per node, client ${r.clientCores.toFixed(2)}`)
      if (testnet.profileDir !== undefined) {
        const files = readdirSync(testnet.profileDir).filter((f) => f.endsWith('.cpuprofile'))
        if (files.length === 0) log('network: the profiled node wrote no .cpuprofile')
        else {
          const file = path.join(testnet.profileDir, files[0])
          result.profile = { summary: summariseProfile(file, { top: 30, inclusive: [...PROFILE_INCLUSIVE, 'onGossip', 'onTx', 'checkBlock', 'executeBlock', 'acceptProposal', 'acceptVote'] }), file }
        }
      }
    }
  }

  if (cfg.latency !== null) {
    const { ratesPerSec, durationMs } = cfg.latency
    for (const ratePerSec of ratesPerSec) {
      log(`network: latency at ${ratePerSec} tx/s offered, ${durationMs / 1000} s...`)
      const testnet = await startTestnet(work, cfg, false)
      let r: LatencyResult
      try {
        r = await runLatency(work, testnet, ratePerSec, durationMs)
      } finally {
        await stopTestnet(testnet)
      }
      result.latency.push(r)
      log(`network: ${ratePerSec} tx/s: p50 ${Math.round(r.confirmLatencyMs.p50)} ms, p99 ${Math.round(r.confirmLatencyMs.p99)} ms, ` +
        `${Math.round(r.confirmedPerSec)} confirmed tx/s, ${r.nodes.map((x) => x.cores.toFixed(2)).join('/')} cores per node, other load ${r.otherCores.toFixed(2)}`)
    }
  }
  result.elapsedMs = Date.now() - started
  return result
}

// ---------------------------------------------------------------------------------------
// formatting

const fmt = (x: number, digits = 0): string => Number.isFinite(x) ? x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a'

function rejectedText (r: Record<string, number>): string {
  return Object.keys(r).length === 0 ? '0' : Object.entries(r).map(([k, v]) => `${fmt(v)}×${k}`).join(', ')
}

function cpuText (p: PhaseCommon): string {
  return p.nodes.map((x) => `${x.cores.toFixed(2)} (${x.mainCores.toFixed(2)})`).join(' · ')
}

/** The saturation run the headline comes from: the highest sustained rate. */
export function bestSaturation (r: NetworkBenchResult): SaturationResult | undefined {
  return r.saturation.filter((x) => !x.profiled).reduce<SaturationResult | undefined>((m, x) => (m === undefined || x.sustainedPerSec > m.sustainedPerSec ? x : m), undefined) ??
    r.saturation[0]
}

/** Markdown; `singleNode` is the one-node figure of bench/throughput.ts from the same run, if any. */
export function formatNetwork (r: NetworkBenchResult, singleNode?: { confirmedPerSec: number, concurrency: number }): string {
  const c = r.config
  const lines: string[] = [
    `${c.validators} validators (\`bin/kith testnet\`), ${c.validators} \`bin/kith start\` processes on this machine's ${os.availableParallelism()} cores, ` +
      `libp2p on loopback, block interval ${c.blockIntervalMs} ms, log level warn, no rate limit. Signed TRANSFERs from ${fmt(c.senders)} funded senders ` +
      `(${fmt(c.poolSize)} pre-signed at ${fmt(r.signPerSec)}/s), a fresh testnet per run.`,
    ''
  ]
  const best = bestSaturation(r)
  if (r.saturation.length > 0) {
    lines.push(`**Saturation**: C keep-alive submitters spread evenly over the nodes, ${fmt((c.saturation?.durationMs ?? 0) / 1000)} s of submission per run.`, '',
      '| C | submitted | accepted/s | 503 (retried) | confirmed tx/s (end to end) | steady tx/s (while submitting) | **sustained tx/s** | ack p50 / p99 ms | confirm p50 / p99 ms | blocks (max txs) | blocks after round 0 (max round) | longest commit gap ms | peak mempool | cores per node: all (main) | network CPU µs/tx | client cores | other load, cores | rejected | unconfirmed |',
      '|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|---|--:|')
    for (const s of r.saturation) {
      lines.push(`| ${s.concurrency}${s.profiled ? ' (node 0 profiled)' : ''} | ${fmt(s.submitted)} | ${fmt(s.acceptedPerSec)} | ${fmt(s.busy)} | ${fmt(s.confirmedPerSec)} | ${fmt(s.steadyPerSec)} | **${fmt(s.sustainedPerSec)}** | ` +
        `${fmt(s.ackLatencyMs.p50, 1)} / ${fmt(s.ackLatencyMs.p99, 1)} | ${fmt(s.confirmLatencyMs.p50)} / ${fmt(s.confirmLatencyMs.p99)} | ${fmt(s.blocks)} (${fmt(s.maxTxsPerBlock)}) | ${s.rounds.late} (${s.rounds.maxRound}) | ${fmt(s.rounds.maxGapMs)} | ` +
        `${fmt(s.peakMempool)} | ${cpuText(s)} | ${fmt(s.networkCpuUsPerTx)} | ${s.clientCores.toFixed(2)} | ${s.otherCores.toFixed(2)} | ` +
        `${rejectedText(s.rejected)} | ${fmt(s.unconfirmed)} |`)
    }
    if (best !== undefined) {
      lines.push('', `Goal ≥ ${fmt(NETWORK_GOALS.saturationTxPerSec)} confirmed tx/s: **${fmt(best.sustainedPerSec)}** sustained at C=${best.concurrency} — ` +
        `${best.sustainedPerSec >= NETWORK_GOALS.saturationTxPerSec ? 'met' : '**not met**'}.`)
    }
    const top = r.saturation.filter((x) => !x.profiled).reduce<SaturationResult | undefined>((m, x) => (m === undefined || x.concurrency > m.concurrency ? x : m), undefined)
    const below = r.saturation.filter((x) => !x.profiled && x !== top)
    if (top !== undefined && below.length > 0) {
      const bestBelow = Math.max(...below.map((x) => x.sustainedPerSec))
      const maxGap = 3 * c.blockIntervalMs + DEFAULT_TIMEOUTS.propose
      const share = top.sustainedPerSec / bestBelow
      lines.push('', `Overload at C=${top.concurrency}: sustained ${fmt(top.sustainedPerSec)} tx/s = ${fmt(100 * share)}% of the best at lower concurrency ` +
        `(goal ≥ ${fmt(100 * NETWORK_GOALS.overloadShare)}%: ${share >= NETWORK_GOALS.overloadShare ? 'met' : '**not met**'}); ` +
        `longest commit gap ${fmt(top.rounds.maxGapMs)} ms (limit 3 × block interval + round 0's propose timeout = ${fmt(maxGap)} ms: ` +
        `${top.rounds.maxGapMs < maxGap ? 'met' : '**not met**'}).`)
    }
    lines.push('')
  }
  if (r.latency.length > 0) {
    lines.push(`**Latency at a fixed offered load**: open loop, round-robin over the nodes, ${fmt((c.latency?.durationMs ?? 0) / 1000)} s per rate, a fresh testnet per rate.`, '',
      '| offered tx/s | accepted | confirmed tx/s | **confirm p50 / p90 / p99 / max ms** | ack p50 / p99 ms | send lag p99 ms | blocks (max txs) | blocks after round 0 (max round) | longest commit gap ms | cores per node: all (main) | idle cores per node | network CPU µs/tx | client cores | other load, cores | rejected | unconfirmed |',
      '|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|--:|--:|--:|---|--:|')
    for (const l of r.latency) {
      lines.push(`| ${fmt(l.offeredPerSec)} | ${fmt(l.accepted)} | ${fmt(l.confirmedPerSec)} | **${fmt(l.confirmLatencyMs.p50)} / ${fmt(l.confirmLatencyMs.p90)} / ${fmt(l.confirmLatencyMs.p99)} / ${fmt(l.confirmLatencyMs.max)}** | ` +
        `${fmt(l.ackLatencyMs.p50, 1)} / ${fmt(l.ackLatencyMs.p99, 1)} | ${fmt(l.sendLagMs.p99, 1)} | ${fmt(l.blocks)} (${fmt(l.maxTxsPerBlock)}) | ${l.rounds.late} (${l.rounds.maxRound}) | ${fmt(l.rounds.maxGapMs)} | ` +
        `${cpuText(l)} | ${l.idleCores.map((x) => x.toFixed(2)).join(' · ')} | ${fmt(l.networkCpuUsPerTx)} | ${l.clientCores.toFixed(2)} | ` +
        `${l.otherCores.toFixed(2)} | ${rejectedText(l.rejected)}${l.dropped > 0 ? `, ${fmt(l.dropped)} not sent` : ''} | ${fmt(l.unconfirmed)} |`)
    }
    const goal = r.latency.find((x) => x.offeredPerSec === NETWORK_GOALS.atRatePerSec)
    if (goal !== undefined) {
      lines.push('', `Goal p99 < ${fmt(NETWORK_GOALS.latencyP99Ms)} ms at ${fmt(NETWORK_GOALS.atRatePerSec)} tx/s: **${fmt(goal.confirmLatencyMs.p99)} ms** — ` +
        `${goal.confirmLatencyMs.p99 < NETWORK_GOALS.latencyP99Ms ? 'met' : '**not met**'}.`)
    }
    lines.push('')
  }
  if (singleNode !== undefined && best !== undefined) {
    lines.push(`One node alone (bench/throughput.ts, same run, C=${singleNode.concurrency}): **${fmt(singleNode.confirmedPerSec)}** confirmed tx/s; ` +
      `${c.validators} validators on the same cores: **${fmt(best.sustainedPerSec)}** (${(best.sustainedPerSec / singleNode.confirmedPerSec * 100).toFixed(0)}%).`, '')
  }
  lines.push('- confirmed tx/s = committed transactions (node 0) / (first POST → block holding the last one seen committed), after every node committed every accepted one; ' +
      'steady = commit rate from 3 s after the start to the end of submission; sustained = the lower of the two;',
    '- confirm latency = scheduled send time → first poll (every 25 ms, GET /api/netstats, then each new block once) showing the transaction\'s block on the node it was submitted to, for every accepted transaction (saturation: from sending the submission that was accepted);',
    '- blocks after round 0 = blocks of the run that needed more than one round (GET /api/blocks/{h} `commit.round`); longest commit gap = the longest time node 0\'s height stood still;',
    '- cores per node = CPU seconds / wall seconds over the run, all threads (main = the JavaScript thread); network CPU µs/tx = the four nodes\' CPU seconds / committed transactions; ' +
      'other load = busy CPU of the whole machine (/proc/stat) minus the nodes and the client: work of other processes that competed for the cores (above ~0.1 the run was disturbed);',
    '- comparison points: Hyperledger Besu QBFT with 4 validators 520–645 tx/s; the CometBFT QA network (200 nodes) saturates near 400 tx/s (see docs/benchmarks.md).')
  const errs = [...r.saturation, ...r.latency].flatMap((x) => x.firstErrors)
  if (errs.length > 0) lines.push('', 'First errors:', ...errs.slice(0, 8).map((e) => `    ${e}`))
  if (r.profile !== undefined) lines.push('', 'Node 0 of the first saturation testnet, main thread:', '', formatProfile(r.profile.summary), '', `Profile: \`${r.profile.file}\`.`)
  lines.push('', `Network benchmark wall time: ${fmt(r.elapsedMs / 1000, 1)} s`)
  return lines.join('\n')
}

export const QUICK_NETWORK_CONFIG: Partial<NetworkBenchConfig> = {
  poolSize: 40_000, saturation: { concurrencies: [64], durationMs: 8000 }, latency: { ratesPerSec: [500], durationMs: 8000 }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const config: Partial<NetworkBenchConfig> = process.argv.includes('--quick') ? { ...QUICK_NETWORK_CONFIG } : {}
  if (process.argv.includes('--profile')) config.profile = true
  runNetworkBench(config).then((r) => {
    console.log(formatNetwork(r))
  }, (err: unknown) => {
    // the stack, not the cause: a failed `kith testnet` carries a command line with 400 --alloc flags
    console.error(err instanceof Error ? err.stack ?? err.message : err)
    process.exitCode = 1
  })
}
