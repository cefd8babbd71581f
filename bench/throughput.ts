/**
 * Throughput benchmark: sustained submit-to-commit rate of signed TRANSFERs on one real node
 * (a `bin/kith start` child process) fed by C concurrent keep-alive HTTP clients on loopback.
 *
 * - `kith init` a fresh home per run with SENDERS funded accounts (so no account is hot);
 * - all transactions are signed and serialised before the timed phase (the client only
 *   writes prepared bytes); they are reused across runs, each run being a fresh chain;
 * - C workers POST /api/tx back to back for DURATION (or until the prepared pool runs out);
 * - a poller reads GET /api/netstats every 25 ms, which gives the time each height became
 *   visible (commit as seen by a client) and the committed-transaction count over time;
 * - after the timed phase, the run waits until every accepted transaction is committed;
 * - confirmation latency is measured on a random sample: GET /api/tx/{id} gives the block,
 *   latency = (time that block was first seen committed) - (time the POST was sent); the
 *   block's own timestamp (set when the proposer starts building it) is reported too;
 * - CPU seconds of the node (/proc/<pid>/stat, all threads incl. lmdb's) and of this client
 *   process over the same window show where the cores go.
 *
 * A separate profiled run starts the node under `node --cpu-prof` and summarises self time.
 *
 * Run alone: node dist/bench/throughput.js [--quick]
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { summariseProfile, type ProfileSummary } from './lib/cpuprofile.js'
import { REPO_ROOT, freePort, nodeBinary, prepareWorkload, request, sleep, stopChild, type Workload } from './lib/harness.js'
import { percentiles, type Percentiles } from './lib/load.js'
import { RawHttpConnection } from './lib/raw-http.js'
import { processCpuSeconds, selfCpuSeconds } from './lib/proc.js'

const execFileP = promisify(execFile)


// ---------------------------------------------------------------------------------------
// configuration

export interface ThroughputConfig {
  /** concurrent HTTP clients, one run (fresh node) each */
  concurrencies: number[]
  /** submission phase of each run */
  durationMs: number
  /** funded sender accounts */
  senders: number
  blockIntervalMs: number
  /** transactions signed in advance (shared by the runs); a run stops early if it uses them all */
  poolSize: number
  /** confirmed transactions looked up for latency, per run */
  latencySample: number
  /**
   * profiled run; null to skip. With `httpWorkers` ≥ 1 the core thread's profile holds only the
   * ordered work (admission, blocks, commit), which is what bounds a node with edges.
   */
  profile: { concurrency: number, durationMs: number, httpWorkers?: number } | null
  /** `--http-workers` of the node; every concurrency runs once with each (0: HTTP on the core thread) */
  httpWorkers: number[]
}

export const DEFAULT_THROUGHPUT_CONFIG: ThroughputConfig = {
  concurrencies: [16, 64, 256],
  durationMs: 15_000,
  senders: 200,
  blockIntervalMs: 250,
  poolSize: 200_000,
  latencySample: 2_000,
  profile: { concurrency: 256, durationMs: 10_000, httpWorkers: 1 },
  httpWorkers: [0, 1]
}

/** Each sender's genesis balance, µT: far more than any run spends. */
const SENDER_BALANCE_UT = 1_000_000_000_000
const NETSTATS_POLL_MS = 25
const DRAIN_TIMEOUT_MS = 90_000
const STARTUP_TIMEOUT_MS = 30_000

// ---------------------------------------------------------------------------------------
// results


export interface RunResult {
  concurrency: number
  /** the node's --http-workers */
  httpWorkers: number
  profiled: boolean
  submitted: number
  accepted: number
  rejected: Record<string, number>
  firstErrors: string[]
  /** first POST sent -> last POST answered, s */
  submitSeconds: number
  /** accepted / submitSeconds */
  acceptedPerSec: number
  committed: number
  /** accepted but not committed when the drain wait gave up (should be 0) */
  unconfirmed: number
  /** first POST sent -> block holding the last accepted tx seen committed, s */
  endToEndSeconds: number
  /** committed / endToEndSeconds: the headline figure */
  confirmedPerSec: number
  /** commit rate between 3 s after the start and the end of submission (warm JIT, steady load) */
  steadyPerSec: number
  /** POST answer latency, ms, all requests */
  ackLatencyMs: Percentiles
  /** POST sent -> its block seen committed by the poller, ms, sample */
  confirmLatencyMs: Percentiles
  /** POST sent -> its block's header time, ms, sample */
  blockTimeLatencyMs: Percentiles
  blocks: number
  maxTxsPerBlock: number
  peakMempool: number
  /** CPU seconds / wall seconds over the end-to-end window (1.0 = one full core) */
  nodeCores: number
  /** the node's main (JavaScript) thread alone: the serial part */
  nodeMainCores: number
  clientCores: number
  /** node CPU per committed transaction, µs: all threads, and the main thread alone */
  nodeCpuUsPerTx: number
  nodeMainCpuUsPerTx: number
  /** 1-minute load average when the run started and ended: other work on the machine shows here */
  loadavg: [number, number]
  nodeWarnLines: number
}

export interface ThroughputResult {
  config: ThroughputConfig
  signPerSec: number
  signSeconds: number
  runs: RunResult[]
  profile?: { run: RunResult, summary: ProfileSummary, file: string }
  elapsedMs: number
}

// ---------------------------------------------------------------------------------------
// helpers

// ---------------------------------------------------------------------------------------
// prepared workload

// ---------------------------------------------------------------------------------------
// node process

interface RunningNode {
  child: ChildProcess
  port: number
  home: string
  warnLines: () => number
  output: () => string
}

async function startNode (work: Workload, cfg: ThroughputConfig, httpWorkers: number, profileDir?: string): Promise<RunningNode> {
  const home = mkdtempSync(path.join(os.tmpdir(), 'kith-bench-'))
  const bin = path.join(REPO_ROOT, 'bin', 'kith')
  const nodeBin = nodeBinary()
  const alloc = work.senders.flatMap((s) => ['--alloc', `${s.pub}=${SENDER_BALANCE_UT}`])
  try {
    await execFileP(nodeBin, [bin, 'init', '--home', home, '--chain-id', 'bench', ...alloc], { maxBuffer: 1 << 20, timeout: STARTUP_TIMEOUT_MS })
  } catch (err) {
    rmSync(home, { recursive: true, force: true })
    const stderr = (err as { stderr?: string }).stderr ?? ''
    throw new Error(`\`kith init\` failed: ${stderr.trim() || String(err).slice(0, 300)}`, { cause: err })
  }
  const port = await freePort()
  const nodeArgs = profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', profileDir]
  const child = spawn(nodeBin, [...nodeArgs, bin, 'start', '--home', home, '--http-addr', `127.0.0.1:${port}`,
    '--block-interval-ms', String(cfg.blockIntervalMs), '--log-level', 'warn', '--http-workers', String(httpWorkers)], {
    env: { ...process.env, SVC_RATE_LIMIT_RPS: '0' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let warn = 0
  let out = ''
  const onData = (d: Buffer): void => {
    const text = d.toString()
    warn += text.split('\n').filter((l) => l.trim() !== '').length
    if (out.length < 20_000) out += text
  }
  child.stdout?.on('data', onData)
  child.stderr?.on('data', onData)
  const node: RunningNode = { child, port, home, warnLines: () => warn, output: () => out }
  const agent = new http.Agent({ keepAlive: false })
  const deadline = Date.now() + STARTUP_TIMEOUT_MS
  for (;;) {
    if (child.exitCode !== null) throw new Error(`node exited during startup (code ${child.exitCode}):\n${out}`)
    try {
      const res = await request(agent, port, 'GET', '/api/well-known-version')
      if (res.status === 200) break
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) { child.kill('SIGKILL'); throw new Error(`node did not answer on port ${port} within ${STARTUP_TIMEOUT_MS} ms:\n${out}`) }
    await sleep(50)
  }
  agent.destroy()
  return node
}

async function stopNode (node: RunningNode): Promise<void> {
  await stopChild(node.child)
  rmSync(node.home, { recursive: true, force: true })
}

// ---------------------------------------------------------------------------------------
// one run

interface NetSample { t: number, height: number, totalTxs: number, mempool: number }

async function runOnce (work: Workload, cfg: ThroughputConfig, concurrency: number, httpWorkers: number, durationMs: number, profileDir?: string): Promise<RunResult> {
  const node = await startNode(work, cfg, httpWorkers, profileDir)
  try {
    const pid = node.child.pid as number
    const pollAgent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    const samples: NetSample[] = []
    let polling = true
    const poller = (async () => {
      while (polling) {
        try {
          const res = await request(pollAgent, node.port, 'GET', '/api/netstats')
          const t = Date.now()
          if (res.status === 200) {
            const s = JSON.parse(res.body) as { height: number, total_txs: number, mempool_size: number }
            samples.push({ t, height: s.height, totalTxs: s.total_txs, mempool: s.mempool_size })
          }
        } catch { /* keep polling */ }
        await sleep(NETSTATS_POLL_MS)
      }
    })()
    await sleep(200)
    const startHeight = samples.at(-1)?.height ?? 0

    // raw sockets (bench/lib/raw-http.ts): node:http's client spends 35-60 µs per request on
    // these 2 cores, which would be taken from the node it measures
    const connections = Array.from({ length: concurrency }, () => new RawHttpConnection(node.port))
    const n = work.bodies.length
    const sentAt = new Float64Array(n)
    const ackAt = new Float64Array(n)
    const ok = new Uint8Array(n)
    const rejected: Record<string, number> = {}
    const firstErrors: string[] = []
    let next = 0

    const nodeCpu0 = processCpuSeconds(pid) ?? NaN
    const mainCpu0 = processCpuSeconds(pid, pid) ?? NaN
    const load0 = os.loadavg()[0]
    const selfCpu0 = selfCpuSeconds()
    const t0 = Date.now()
    const deadline = t0 + durationMs
    const worker = async (connection: RawHttpConnection): Promise<void> => {
      while (next < n && Date.now() < deadline) {
        const i = next++
        sentAt[i] = Date.now()
        try {
          const res = await connection.request('POST', '/api/tx', work.bodies[i])
          ackAt[i] = Date.now()
          if (res.status === 200) ok[i] = 1
          else {
            const key = String(res.status)
            rejected[key] = (rejected[key] ?? 0) + 1
            if (firstErrors.length < 5) firstErrors.push(`${res.status} ${res.body.toString('utf8', 0, 200)}`)
          }
        } catch (err) {
          ackAt[i] = Date.now()
          rejected.network = (rejected.network ?? 0) + 1
          if (firstErrors.length < 5) firstErrors.push(String(err))
        }
      }
    }
    await Promise.all(connections.map(worker))
    for (const connection of connections) connection.close()
    const submitted = next
    let lastAck = t0
    let accepted = 0
    for (let i = 0; i < submitted; i++) {
      if (ackAt[i] > lastAck) lastAck = ackAt[i]
      accepted += ok[i]
    }
    const submitEnd = Date.now()

    // Wait until every accepted transaction is committed (and seen by the poller).
    const drainDeadline = Date.now() + DRAIN_TIMEOUT_MS
    while (Date.now() < drainDeadline) {
      const last = samples.at(-1)
      if (last !== undefined && last.t > submitEnd && last.totalTxs >= accepted && last.mempool === 0) break
      if (node.child.exitCode !== null) throw new Error(`node exited during the run:\n${node.output()}`)
      await sleep(NETSTATS_POLL_MS)
    }
    const nodeCpu1 = processCpuSeconds(pid) ?? NaN
    const mainCpu1 = processCpuSeconds(pid, pid) ?? NaN
    const load1 = os.loadavg()[0]
    const selfCpu1 = selfCpuSeconds()
    polling = false
    await poller
    const final = samples.at(-1) as NetSample
    const committed = final.totalTxs
    const doneSample = samples.find((s) => s.totalTxs >= committed) as NetSample
    const endToEndSeconds = (doneSample.t - t0) / 1000
    const wall = (Date.now() - t0) / 1000

    // Steady state: commits between t0+3s and the end of submission.
    const steadyFrom = t0 + 3000
    const a = samples.find((s) => s.t >= steadyFrom)
    const b = [...samples].reverse().find((s) => s.t <= submitEnd)
    const steadyPerSec = a !== undefined && b !== undefined && b.t > a.t ? (b.totalTxs - a.totalTxs) / ((b.t - a.t) / 1000) : NaN

    // Latency sample.
    const acceptedIdx: number[] = []
    for (let i = 0; i < submitted; i++) if (ok[i] === 1) acceptedIdx.push(i)
    for (let i = acceptedIdx.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [acceptedIdx[i], acceptedIdx[j]] = [acceptedIdx[j], acceptedIdx[i]]
    }
    const sample = acceptedIdx.slice(0, cfg.latencySample)
    const confirm: number[] = []
    const blockTime: number[] = []
    const lookupAgent = new http.Agent({ keepAlive: true, maxSockets: 16 })
    let cursor = 0
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (cursor < sample.length) {
        const i = sample[cursor++]
        const res = await request(lookupAgent, node.port, 'GET', `/api/tx/${work.ids[i]}`)
        if (res.status !== 200) continue
        const detail = JSON.parse(res.body) as { block_index?: number, block_time?: string }
        if (detail.block_index === undefined || detail.block_time === undefined) continue
        blockTime.push(Date.parse(detail.block_time) - sentAt[i])
        // The first height seen at or above this block: the poller may skip heights.
        let seen: number | undefined
        for (const s of samples) if (s.height >= detail.block_index) { seen = s.t; break }
        if (seen !== undefined) confirm.push(seen - sentAt[i])
      }
    }))
    lookupAgent.destroy()
    pollAgent.destroy()

    const ackLatency: number[] = []
    for (let i = 0; i < submitted; i++) ackLatency.push(ackAt[i] - sentAt[i])
    const blocks = final.height - startHeight
    let maxTxsPerBlock = 0
    let peakMempool = 0
    for (let k = 1; k < samples.length; k++) {
      peakMempool = Math.max(peakMempool, samples[k].mempool)
      if (samples[k].height === samples[k - 1].height + 1) maxTxsPerBlock = Math.max(maxTxsPerBlock, samples[k].totalTxs - samples[k - 1].totalTxs)
    }
    const submitSeconds = (lastAck - t0) / 1000
    return {
      concurrency,
      httpWorkers,
      profiled: profileDir !== undefined,
      submitted,
      accepted,
      rejected,
      firstErrors,
      submitSeconds,
      acceptedPerSec: accepted / submitSeconds,
      committed,
      unconfirmed: Math.max(0, accepted - committed),
      endToEndSeconds,
      confirmedPerSec: committed / endToEndSeconds,
      steadyPerSec,
      ackLatencyMs: percentiles(ackLatency),
      confirmLatencyMs: percentiles(confirm),
      blockTimeLatencyMs: percentiles(blockTime),
      blocks,
      maxTxsPerBlock,
      peakMempool,
      nodeCores: (nodeCpu1 - nodeCpu0) / wall,
      nodeMainCores: (mainCpu1 - mainCpu0) / wall,
      clientCores: (selfCpu1 - selfCpu0) / wall,
      nodeCpuUsPerTx: ((nodeCpu1 - nodeCpu0) * 1e6) / committed,
      nodeMainCpuUsPerTx: ((mainCpu1 - mainCpu0) * 1e6) / committed,
      loadavg: [load0, load1],
      nodeWarnLines: node.warnLines()
    }
  } finally {
    await stopNode(node)
  }
}

// ---------------------------------------------------------------------------------------
// the benchmark

/** Functions whose inclusive time the profile summary reports. */
export const PROFILE_INCLUSIVE = [
  'readJsonBody', 'submitTx', 'submitParsedTx', 'parseOrThrow', 'checkSubmission', 'verifyTxSignature', 'verify', 'add', 'tryApplyTx',
  'putPending', 'build', 'check', 'selectBlockTxs', 'executeBlock', 'stateHashAfter', 'nextStateRoot', 'txRoot', 'commitBlock',
  'forgetDecided', 'putConsensusRecord', 'rebase', 'mapErrors', 'pack', 'unpack', 'encodeBlock', 'decodeBlock',
  'lookupTx', 'parserOnHeadersComplete', 'parserOnIncoming', 'emit', 'dispatch'
]

export async function runThroughputBench (config: Partial<ThroughputConfig> = {}, log: (line: string) => void = (l) => console.error(l)): Promise<ThroughputResult> {
  const cfg: ThroughputConfig = { ...DEFAULT_THROUGHPUT_CONFIG, ...config }
  const started = Date.now()
  log(`throughput: signing ${cfg.poolSize} TRANSFERs from ${cfg.senders} senders...`)
  const signStart = performance.now()
  const work = prepareWorkload(cfg.senders, cfg.poolSize, 'bench')
  const signSeconds = (performance.now() - signStart) / 1000
  log(`throughput: signed in ${signSeconds.toFixed(1)} s (${Math.round(cfg.poolSize / signSeconds)}/s)`)

  const runs: RunResult[] = []
  for (const c of cfg.concurrencies) {
    for (const edges of cfg.httpWorkers) {
      log(`throughput: C=${c}, --http-workers ${edges}, ${cfg.durationMs / 1000} s...`)
      const r = await runOnce(work, cfg, c, edges, cfg.durationMs)
      log(`throughput: C=${c}, --http-workers ${edges}: ${Math.round(r.confirmedPerSec)} confirmed tx/s, p50 ${Math.round(r.confirmLatencyMs.p50)} ms, p99 ${Math.round(r.confirmLatencyMs.p99)} ms, ` +
        `node ${r.nodeCores.toFixed(2)} cores (main ${r.nodeMainCores.toFixed(2)}, ${Math.round(r.nodeMainCpuUsPerTx)} µs/tx), client ${r.clientCores.toFixed(2)} cores, load ${r.loadavg[0].toFixed(1)}`)
      runs.push(r)
    }
  }

  let profile: ThroughputResult['profile']
  if (cfg.profile !== null) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kith-bench-prof-'))
    log(`throughput: profiled run (node --cpu-prof), C=${cfg.profile.concurrency}, ${cfg.profile.durationMs / 1000} s...`)
    const run = await runOnce(work, cfg, cfg.profile.concurrency, cfg.profile.httpWorkers ?? 0, cfg.profile.durationMs, dir)
    // CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile: thread 0 is the core thread; the
    // edges and the pools write their own
    const name = readdirSync(dir).find((f) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f))
    if (name === undefined) {
      log('throughput: the profiled node wrote no .cpuprofile for its core thread (did it exit cleanly?)')
    } else {
      const file = path.join(dir, name)
      profile = { run, summary: summariseProfile(file, { top: 30, inclusive: PROFILE_INCLUSIVE }), file }
    }
  }
  return { config: cfg, signPerSec: cfg.poolSize / signSeconds, signSeconds, runs, profile, elapsedMs: Date.now() - started }
}

// ---------------------------------------------------------------------------------------
// formatting

const fmt = (x: number, digits = 0): string => Number.isFinite(x) ? x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a'
const pct = (x: number): string => `${(x * 100).toFixed(1)}%`

export function formatThroughput (r: ThroughputResult): string {
  const c = r.config
  const lines: string[] = [
    `Signed TRANSFERs from ${c.senders} funded senders, one node (\`bin/kith start\`, block interval ${c.blockIntervalMs} ms, ` +
      `log level warn, no rate limit), C keep-alive HTTP clients on loopback, ${c.durationMs / 1000} s of submission per run, ` +
      `fresh chain per run. ${fmt(c.poolSize)} transactions pre-signed before the timed phase (${fmt(r.signPerSec)}/s).`,
    '',
    '| C | edges | submitted | accepted/s | **confirmed tx/s** (end to end) | steady commit tx/s | confirm p50 ms | confirm p99 ms | ack p50 / p99 ms | blocks (max txs) | peak mempool | node cores: all (main thread) | node CPU µs/tx: all (main) | client cores | load avg | rejected |',
    '|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|'
  ]
  const row = (x: RunResult): string => `| ${x.concurrency}${x.profiled ? ' (profiled)' : ''} | ${x.httpWorkers} | ${fmt(x.submitted)} | ${fmt(x.acceptedPerSec)} | **${fmt(x.confirmedPerSec)}** | ${fmt(x.steadyPerSec)} | ` +
    `${fmt(x.confirmLatencyMs.p50)} | ${fmt(x.confirmLatencyMs.p99)} | ${fmt(x.ackLatencyMs.p50, 1)} / ${fmt(x.ackLatencyMs.p99, 1)} | ` +
    `${fmt(x.blocks)} (${fmt(x.maxTxsPerBlock)}) | ${fmt(x.peakMempool)} | ${x.nodeCores.toFixed(2)} (${x.nodeMainCores.toFixed(2)}) | ` +
    `${fmt(x.nodeCpuUsPerTx)} (${fmt(x.nodeMainCpuUsPerTx)}) | ${x.clientCores.toFixed(2)} | ${x.loadavg.map((l) => l.toFixed(1)).join('→')} | ` +
    `${Object.keys(x.rejected).length === 0 ? '0' : Object.entries(x.rejected).map(([k, v]) => `${v}×${k}`).join(', ')} |`
  for (const x of r.runs) lines.push(row(x))
  if (r.profile !== undefined) lines.push(row(r.profile.run))
  lines.push('',
    '- edges = the node\'s --http-workers: HTTP edge threads in front of the core thread (0: the core thread serves HTTP itself);',
    '- confirmed tx/s = committed transactions / (first POST sent → block holding the last one seen committed);',
    '- steady = commit rate from 3 s after the start to the end of submission;',
    '- confirm latency = POST sent → its block seen committed by a 25 ms netstats poller (random sample of ' +
      `${fmt(c.latencySample)} per run); block-timestamp latency p50/p99: ` +
      r.runs.map((x) => `C=${x.concurrency}/${x.httpWorkers} ${fmt(x.blockTimeLatencyMs.p50)}/${fmt(x.blockTimeLatencyMs.p99)} ms`).join(', ') + ';',
    '- ack = POST answered (accepted into the persisted mempool); cores = CPU seconds / wall seconds over the run ' +
      '(node: /proc/<pid>/stat, all threads incl. lmdb\'s writer; main = the JavaScript thread, /proc/<pid>/task/<pid>/stat);',
    '- node CPU µs/tx = node CPU seconds / committed transactions. The main thread is serial, so 1e6 / (main µs/tx) is the ' +
      'rate one dedicated core could sustain: ' + r.runs.map((x) => `C=${x.concurrency}/${x.httpWorkers} ≈ ${fmt(1e6 / x.nodeMainCpuUsPerTx)} tx/s`).join(', ') + ';',
    '- load avg = 1-minute load average at the start → end of the run; above ~2.5 on this 2-core machine, other processes took CPU from the run.')
  for (const x of [...r.runs, ...(r.profile !== undefined ? [r.profile.run] : [])]) {
    if (x.unconfirmed > 0) lines.push('', `**C=${x.concurrency}: ${fmt(x.unconfirmed)} accepted transactions were not committed within ${DRAIN_TIMEOUT_MS / 1000} s of the end of submission.**`)
  }
  const errs = [...r.runs, ...(r.profile !== undefined ? [r.profile.run] : [])].flatMap((x) => x.firstErrors.map((e) => `C=${x.concurrency}: ${e}`))
  if (errs.length > 0) lines.push('', 'First errors:', ...errs.slice(0, 10).map((e) => `    ${e}`))
  if (r.profile !== undefined) lines.push('', formatProfile(r.profile.summary), '', `Profile: \`${r.profile.file}\` (open in Chrome DevTools, Performance tab).`)
  lines.push('', `Throughput benchmark wall time: ${fmt(r.elapsedMs / 1000, 1)} s`)
  return lines.join('\n')
}

export function formatProfile (s: ProfileSummary): string {
  const lines = [
    `Node main-thread CPU profile: ${fmt(s.busyMs)} ms busy of ${fmt(s.totalMs)} ms sampled (${pct(s.busyMs / s.totalMs)}).`,
    '',
    '| component (self time) | ms | share of busy |',
    '|---|--:|--:|'
  ]
  for (const x of s.components) if (x.share >= 0.005) lines.push(`| ${x.name} | ${fmt(x.ms)} | ${pct(x.share)} |`)
  lines.push('', '| function (self time) | ms | share of busy |', '|---|--:|--:|')
  for (const x of s.topFunctions) lines.push(`| \`${x.name}\` | ${fmt(x.ms)} | ${pct(x.share)} |`)
  lines.push('', '| function (inclusive, outermost frame) | ms | share of busy |', '|---|--:|--:|')
  for (const x of s.inclusive) if (x.ms > 0) lines.push(`| \`${x.name}\` | ${fmt(x.ms)} | ${pct(x.share)} |`)
  return lines.join('\n')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const quick = process.argv.includes('--quick')
  runThroughputBench(quick ? { concurrencies: [64], durationMs: 5000, poolSize: 40_000, profile: null, httpWorkers: [0, 1] } : {}).then((r) => {
    console.log(formatThroughput(r))
  }, (err: unknown) => {
    console.error(err)
    process.exitCode = 1
  })
}
