/**
 * WAN benchmark: the 4-validator network of bench/network.ts with each `bin/kith start` in its
 * own network namespace (test/netns/wan.ts), at 0, 50 and 100 ms round-trip time between any
 * two validators and 1 % loss on every packet between them (each direction), beside the same
 * testnet on loopback. Per setting, on a fresh testnet each:
 * - saturation at C=512 keep-alive submitters (closed loop, bench/network.ts): confirmed and
 *   sustained tx/s, confirmation p50/p99, the longest gap between commits;
 * - an open-loop offered load well below saturation (100 tx/s: below what four nodes confirm
 *   even on this machine when other sessions take two thirds of it): confirmation p50/p99,
 *   the figure the latency goal is judged on (at saturation the queue, not the network, sets it).
 * The client talks to the nodes over the harness's management address, undelayed and lossless:
 * the delay and loss are between validators only.
 *
 * Goals (issue 27): at 100 ms RTT, sustained tx/s ≥ 80 % of loopback's, and p50 confirmation
 * < 3 × RTT + block interval + 200 ms.
 *
 * Run alone (as root): node dist/bench/wan.js [--quick] [--json] (--json: the raw result as the last
 * line of stderr; `node dist/bench/wan.js --format < that-line` renders it again)
 */
import os from 'node:os'
import { pathToFileURL } from 'node:url'
import { prepareWorkload } from './lib/harness.js'
import { processCpuSeconds } from './lib/proc.js'
import {
  DEFAULT_NETWORK_CONFIG, runLatency, runSaturation, startTestnet, stopTestnet,
  type LatencyResult, type NetworkBenchConfig, type SaturationResult
} from './network.js'
import { WanNetwork, wanUnavailable } from '../test/netns/wan.js'

export interface WanBenchConfig {
  rttsMs: number[]
  loss: number
  concurrency: number
  durationMs: number
  latencyRatePerSec: number
  latencyDurationMs: number
}

export const DEFAULT_WAN_CONFIG: WanBenchConfig = {
  rttsMs: [0, 50, 100], loss: 0.01, concurrency: 512, durationMs: 20_000, latencyRatePerSec: 100, latencyDurationMs: 15_000
}
export const QUICK_WAN_CONFIG: Partial<WanBenchConfig> = { rttsMs: [0, 100], durationMs: 8000, latencyDurationMs: 8000 }
export const WAN_GOALS = { throughputShare: 0.8, p50RttFactor: 3, p50SlackMs: 200, atRttMs: 100 }

export interface WanRun {
  /** undefined: loopback, no namespaces */
  rttMs: number | undefined
  loss: number
  saturation: SaturationResult
  latency: LatencyResult
  /** CPU cores the four delay lines used during the saturation run (they share the machine with the nodes) */
  delaylineCores: number
  /** between the validators during the saturation run: bytes per committed transaction, MB/s per directed link, TCP retransmitted share */
  traffic: { bytesPerTx: number, linkMBps: number, retransShare: number } | undefined
}

export interface WanBenchResult {
  config: WanBenchConfig
  blockIntervalMs: number
  runs: WanRun[]
  /** settings that failed to run, with the reason */
  failed?: string[]
  skipped?: string
  elapsedMs: number
}

async function oneRun (work: ReturnType<typeof prepareWorkload>, cfg: WanBenchConfig, net: NetworkBenchConfig, rttMs: number | undefined, log: (l: string) => void): Promise<WanRun> {
  const where = rttMs === undefined ? 'loopback' : `${rttMs} ms RTT, ${cfg.loss * 100} % loss`
  let delaylineCores = 0
  let traffic: WanRun['traffic']
  const phase = async <T>(fn: (t: Awaited<ReturnType<typeof startTestnet>>) => Promise<T>, meter = false): Promise<T> => {
    const wan = rttMs === undefined ? undefined : await WanNetwork.create(net.validators)
    try {
      // every link carries half the RTT: i → j waits (rtt_i + rtt_j) / 2
      wan?.shapeAll({ rttMs: (rttMs ?? 0) / 2, jitterMs: 0, loss: cfg.loss })
      const testnet = await startTestnet(work, net, false, wan)
      const cpu = (): number => (wan?.delaylinePids ?? []).reduce((sum, pid) => sum + (processCpuSeconds(pid) ?? 0), 0)
      const cpu0 = cpu()
      const traffic0 = wan?.traffic()
      const t0 = Date.now()
      let result: T | undefined
      try {
        result = await fn(testnet)
        return result
      } finally {
        const seconds = (Date.now() - t0) / 1000
        if (meter) delaylineCores = cpu() - cpu0 > 0 ? (cpu() - cpu0) / seconds : 0
        const traffic1 = wan?.traffic()
        const committed = (result as { committed?: number } | undefined)?.committed ?? 0
        if (meter && traffic0 !== undefined && traffic1 !== undefined && committed > 0) {
          const bytes = traffic1.peerBytes - traffic0.peerBytes
          const links = net.validators * (net.validators - 1)
          traffic = {
            bytesPerTx: bytes / committed,
            linkMBps: bytes / links / seconds / 1e6,
            retransShare: (traffic1.tcpRetransSegs - traffic0.tcpRetransSegs) / Math.max(1, traffic1.tcpOutSegs - traffic0.tcpOutSegs)
          }
        }
        await stopTestnet(testnet)
      }
    } finally {
      wan?.destroy()
    }
  }
  log(`wan: ${where}: saturation C=${cfg.concurrency}, ${cfg.durationMs / 1000} s...`)
  const saturation = await phase(async (t) => await runSaturation(work, t, cfg.concurrency, cfg.durationMs, false), true)
  log(`wan: ${where}: ${Math.round(saturation.sustainedPerSec)} sustained tx/s, confirm p50 ${Math.round(saturation.confirmLatencyMs.p50)} p99 ${Math.round(saturation.confirmLatencyMs.p99)} ms, ` +
    `longest gap ${saturation.rounds.maxGapMs} ms, ${saturation.rounds.late} blocks after round 0`)
  log(`wan: ${where}: open loop ${cfg.latencyRatePerSec} tx/s, ${cfg.latencyDurationMs / 1000} s...`)
  const latency = await phase(async (t) => await runLatency(work, t, cfg.latencyRatePerSec, cfg.latencyDurationMs))
  log(`wan: ${where}: open loop confirm p50 ${Math.round(latency.confirmLatencyMs.p50)} p99 ${Math.round(latency.confirmLatencyMs.p99)} ms, longest gap ${latency.rounds.maxGapMs} ms`)
  if (traffic !== undefined) log(`wan: ${where}: ${Math.round(traffic.bytesPerTx)} bytes between validators per committed tx, ${traffic.linkMBps.toFixed(2)} MB/s per directed link, ${(100 * traffic.retransShare).toFixed(1)} % of TCP segments retransmitted`)
  return { rttMs, loss: rttMs === undefined ? 0 : cfg.loss, saturation, latency, delaylineCores, traffic }
}

export async function runWanBench (config: Partial<WanBenchConfig> = {}, log: (line: string) => void = (l) => console.error(l)): Promise<WanBenchResult> {
  const cfg: WanBenchConfig = { ...DEFAULT_WAN_CONFIG, ...config }
  const net: NetworkBenchConfig = { ...DEFAULT_NETWORK_CONFIG, poolSize: 60_000, profile: false }
  const started = Date.now()
  const skipped = wanUnavailable()
  if (skipped !== undefined) {
    log(`wan: skipped: ${skipped}`)
    return { config: cfg, blockIntervalMs: net.blockIntervalMs, runs: [], skipped, elapsedMs: 0 }
  }
  const runs: WanRun[] = []
  const failed: string[] = []
  for (const rtt of [undefined, ...cfg.rttsMs]) {
    // signed afresh per setting: a transaction's timestamp must be within 5 minutes of the node's clock
    log(`wan: signing ${net.poolSize} TRANSFERs...`)
    const work = prepareWorkload(net.senders, net.poolSize, `wan${rtt ?? 'lo'}`)
    try {
      runs.push(await oneRun(work, cfg, net, rtt, log))
    } catch (err) {
      // one setting that could not run (a testnet that did not start on a busy machine) does not lose the others
      const message = err instanceof Error ? err.message.split('\n')[0] : String(err)
      log(`wan: ${rtt === undefined ? 'loopback' : `${rtt} ms RTT`}: failed: ${message}`)
      failed.push(`${rtt === undefined ? 'loopback' : `${rtt} ms RTT`}: ${message}`)
    }
  }
  return { config: cfg, blockIntervalMs: net.blockIntervalMs, runs, failed, elapsedMs: Date.now() - started }
}

const fmt = (x: number): string => Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : 'n/a'

export function formatWanBench (r: WanBenchResult): string {
  if (r.skipped !== undefined) return `WAN benchmark skipped: ${r.skipped}.`
  const c = r.config
  const lines = [
    `4 validators, each \`bin/kith start\` in its own network namespace on one bridge (test/netns/wan.ts), on this machine's ${os.availableParallelism()} cores; ` +
      `block interval ${r.blockIntervalMs} ms; RTT between any two validators as given, ${c.loss * 100} % of packets between validators lost (each direction); ` +
      `the client reaches every node undelayed. Saturation: C=${c.concurrency}, ${c.durationMs / 1000} s; open loop: ${c.latencyRatePerSec} tx/s for ${c.latencyDurationMs / 1000} s; a fresh testnet per run.`,
    '',
    '| network | sustained tx/s (C=512) | CPU of the 4 nodes per tx, µs (C=512) | confirm p50 / p99 ms (C=512) | longest commit gap ms (C=512) | blocks after round 0 (max round) | open loop confirm p50 / p99 ms | open loop longest gap ms | bytes between validators per tx (C=512) | MB/s per directed link (C=512) | TCP segments retransmitted (C=512) | delay lines, cores (C=512) | other load, cores (C=512) |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|'
  ]
  for (const run of r.runs) {
    const s = run.saturation
    const l = run.latency
    lines.push(`| ${run.rttMs === undefined ? 'loopback' : `${run.rttMs} ms RTT, ${run.loss * 100} % loss`} | ${fmt(s.sustainedPerSec)} | ${fmt(s.networkCpuUsPerTx)} | ${fmt(s.confirmLatencyMs.p50)} / ${fmt(s.confirmLatencyMs.p99)} | ` +
      `${fmt(s.rounds.maxGapMs)} | ${s.rounds.late} (${s.rounds.maxRound}) | ${fmt(l.confirmLatencyMs.p50)} / ${fmt(l.confirmLatencyMs.p99)} | ${fmt(l.rounds.maxGapMs)} | ${run.traffic === undefined ? '—' : fmt(run.traffic.bytesPerTx)} | ${run.traffic === undefined ? '—' : run.traffic.linkMBps.toFixed(2)} | ` +
      `${run.traffic === undefined ? '—' : `${(100 * run.traffic.retransShare).toFixed(1)} %`} | ${run.delaylineCores.toFixed(2)} | ${s.otherCores.toFixed(2)} |`)
  }
  const base = r.runs.find((x) => x.rttMs === undefined)
  const at = r.runs.find((x) => x.rttMs === WAN_GOALS.atRttMs)
  if (base !== undefined && at !== undefined) {
    const share = at.saturation.sustainedPerSec / base.saturation.sustainedPerSec
    const p50Limit = WAN_GOALS.p50RttFactor * WAN_GOALS.atRttMs + r.blockIntervalMs + WAN_GOALS.p50SlackMs
    lines.push('', `Goals at ${WAN_GOALS.atRttMs} ms RTT: throughput ${fmt(100 * share)} % of loopback's (goal ≥ ${WAN_GOALS.throughputShare * 100} %: ${share >= WAN_GOALS.throughputShare ? 'met' : '**not met**'}); ` +
      `open-loop p50 ${fmt(at.latency.confirmLatencyMs.p50)} ms (goal < 3 × RTT + block interval + 200 ms = ${fmt(p50Limit)} ms: ${at.latency.confirmLatencyMs.p50 < p50Limit ? 'met' : '**not met**'}).`)
  }
  if ((r.failed ?? []).length > 0) lines.push('', 'Settings that did not run:', ...(r.failed ?? []).map((f) => `- ${f}`))
  const errs = r.runs.flatMap((x) => [...x.saturation.firstErrors, ...x.latency.firstErrors])
  if (errs.length > 0) lines.push('', 'First errors:', ...errs.slice(0, 6).map((e) => `    ${e}`))
  lines.push('', `WAN benchmark wall time: ${(r.elapsedMs / 1000).toFixed(1)} s`)
  return lines.join('\n')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href && process.argv.includes('--format')) {
  // re-renders the JSON a run printed with --json (stdin), e.g. after the table gained a column
  let text = ''
  process.stdin.setEncoding('utf8').on('data', (d: string) => { text += d }).on('end', () => { console.log(formatWanBench(JSON.parse(text) as WanBenchResult)) })
} else if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runWanBench(process.argv.includes('--quick') ? QUICK_WAN_CONFIG : {}).then((r) => {
    console.log(formatWanBench(r))
    if (process.argv.includes('--json')) console.error(JSON.stringify(r))
  }, (err: unknown) => {
    console.error(err instanceof Error ? err.stack ?? err.message : err)
    process.exitCode = 1
  })
}
