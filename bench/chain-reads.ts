/**
 * Committed chain reads, with and without HTTP edge threads: a node is given some thousands of
 * committed transfers, then closed-loop clients read it back: GET /api/tx/{id}, GET
 * /api/address/{pubkey}?limit=20 and GET /api/blocks/{height}, in turn. With edges these are
 * answered on the edge from its read-only view of the store; without, on the core thread.
 * Reported per run: reads/s, latency, the node's CPU and the core thread's CPU per read (what a
 * read takes from the thread that orders transactions). Beside them, the same machine's bare Koa
 * GET, one thread, as the ceiling of one thread serving HTTP.
 *
 *   node dist/bench/chain-reads.js [--quick]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { prepareWorkload, sleep, stopChild, type Workload } from './lib/harness.js'
import { bareGet, kithInit, startBareKoa, startKith, type KithProcess } from './lib/processes.js'
import { closedLoop, type Percentiles, type LoadRequest } from './lib/load.js'
import { describeMachine, machineInfo, processCpuSeconds } from './lib/proc.js'

export interface ChainReadsConfig {
  /** committed transfers the reads draw on */
  transactions: number
  senders: number
  concurrencies: number[]
  httpWorkers: number[]
  /** what the clients read: one run per entry and concurrency ('mix' cycles the three) */
  reads: ReadKind[]
  /**
   * clients submitting transfers during a last run per concurrency, of GET /api/tx/{id} (what a
   * wallet polls while its transfer waits); 0: no such run
   */
  writers: number
  durationMs: number
}

export type ReadKind = 'tx' | 'address' | 'block' | 'mix'

export const DEFAULT_CHAIN_READS_CONFIG: ChainReadsConfig = {
  transactions: 6_000,
  senders: 200,
  concurrencies: [16, 64],
  httpWorkers: [0, 1],
  reads: ['tx', 'address', 'block', 'mix'],
  writers: 64,
  durationMs: 8_000
}

export const QUICK_CHAIN_READS_CONFIG: Partial<ChainReadsConfig> = { transactions: 1_000, concurrencies: [16], reads: ['tx'], writers: 16, durationMs: 3_000 }

export interface ChainReadsRun {
  reads: ReadKind
  /** transfers accepted per second beside the reads (a run with writers) */
  writesPerSec?: number
  httpWorkers: number
  concurrency: number
  readsPerSec: number
  latencyMs: Percentiles
  errors: Record<string, number>
  nodeCores: number
  /** CPU of the node's core thread (the one that orders transactions) per wall second */
  coreCores: number
  coreUsPerRead: number
}

export interface ChainReadsResult {
  config: ChainReadsConfig
  machine: string
  bareKoaGetPerSec: number
  runs: ChainReadsRun[]
}

const SENDER_BALANCE_UT = 1_000_000_000_000
const SUBMIT_CONCURRENCY = 64
/** transfers signed for the runs with writers: more than a node accepts in their time */
const WRITE_POOL = 60_000
const COMMIT_TIMEOUT_MS = 120_000

async function getJson (port: number, urlPath: string): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${port}${urlPath}`)
  return await res.json()
}

/** A node on a fresh home, given `work` and waited for until every transfer is committed; `alsoFunded`'s senders get a balance too. */
async function loadedNode (work: Workload, alsoFunded: Workload | undefined, httpWorkers: number, log: (line: string) => void): Promise<{ node: KithProcess, home: string, height: number }> {
  const home = mkdtempSync(path.join(os.tmpdir(), 'kith-bench-reads-'))
  const funded = [...work.senders, ...(alsoFunded?.senders ?? [])]
  await kithInit(home, ['--chain-id', 'bench', ...funded.flatMap((s) => ['--alloc', `${s.pub}=${SENDER_BALANCE_UT}`])])
  const node = await startKith({ home, args: ['--http-workers', String(httpWorkers), '--block-interval-ms', '250'], env: { SVC_RATE_LIMIT_RPS: '0' }, log })
  let next = 0
  const submitted = await closedLoop({
    port: node.port,
    pid: node.pid,
    concurrency: SUBMIT_CONCURRENCY,
    durationMs: COMMIT_TIMEOUT_MS,
    next: () => next < work.bodies.length ? { method: 'POST', path: '/api/tx', body: work.bodies[next++] } : undefined
  })
  if (submitted.ok !== work.bodies.length) throw new Error(`only ${submitted.ok} of ${work.bodies.length} transfers were accepted: ${submitted.firstErrors.join('; ')}`)
  const deadline = Date.now() + COMMIT_TIMEOUT_MS
  for (;;) {
    const stats = await getJson(node.port, '/api/netstats') as { total_txs: number, height: number, mempool_size: number }
    if (stats.mempool_size === 0 && stats.total_txs >= work.bodies.length) return { node, home, height: stats.height }
    if (Date.now() > deadline) throw new Error(`transfers not committed within ${COMMIT_TIMEOUT_MS} ms: ${JSON.stringify(stats)}`)
    await sleep(200)
  }
}

/** The reads of one kind, spread over the whole chain; 'mix' has each client cycle the three. */
function readsOf (kind: ReadKind, work: Workload, height: number): (client: number) => LoadRequest {
  const turn: number[] = []
  const kinds = ['tx', 'address', 'block'] as const
  return (client) => {
    const k = (turn[client] = (turn[client] ?? client * 7919) + 1)
    switch (kind === 'mix' ? kinds[k % 3] : kind) {
      case 'tx': return { method: 'GET', path: `/api/tx/${work.ids[k % work.ids.length]}` }
      case 'address': return { method: 'GET', path: `/api/address/${work.senders[k % work.senders.length].pub}?limit=20` }
      default: return { method: 'GET', path: `/api/blocks/${1 + (k % height)}` }
    }
  }
}

export async function runChainReadsBench (config: Partial<ChainReadsConfig> = {}, log: (line: string) => void = (l) => console.error(l)): Promise<ChainReadsResult> {
  const cfg: ChainReadsConfig = { ...DEFAULT_CHAIN_READS_CONFIG, ...config }
  const work = prepareWorkload(cfg.senders, cfg.transactions, 'reads')
  // transfers for the runs with writers, from the same funded senders, fresh ids for every node
  const writePool = cfg.writers > 0 ? prepareWorkload(cfg.senders, WRITE_POOL, 'writes') : undefined
  const runs: ChainReadsRun[] = []
  for (const httpWorkers of cfg.httpWorkers) {
    log(`chain reads: --http-workers ${httpWorkers}: committing ${cfg.transactions} transfers...`)
    const { node, home, height } = await loadedNode(work, writePool, httpWorkers, log)
    let written = 0
    const nextWrite = (): LoadRequest | undefined => writePool !== undefined && written < writePool.bodies.length ? { method: 'POST', path: '/api/tx', body: writePool.bodies[written++] } : undefined
    try {
      const phases = [
        ...cfg.reads.flatMap((reads) => cfg.concurrencies.map((concurrency) => ({ reads, concurrency, writers: 0 }))),
        ...(cfg.writers > 0 ? cfg.concurrencies.map((concurrency) => ({ reads: 'tx' as const, concurrency, writers: cfg.writers })) : [])
      ]
      for (const { reads, concurrency, writers } of phases) {
        const core0 = processCpuSeconds(node.pid, node.pid) ?? NaN
        const t0 = performance.now()
        const writing = writers > 0 ? closedLoop({ port: node.port, pid: node.pid, concurrency: writers, durationMs: cfg.durationMs, next: () => nextWrite() }) : undefined
        const phase = await closedLoop({ port: node.port, pid: node.pid, concurrency, durationMs: cfg.durationMs, next: readsOf(reads, work, height) })
        const written = await writing
        const wall = (performance.now() - t0) / 1000
        const coreCores = ((processCpuSeconds(node.pid, node.pid) ?? NaN) - core0) / wall
        const run: ChainReadsRun = {
          reads,
          ...(written !== undefined ? { writesPerSec: written.okPerSec } : {}),
          httpWorkers,
          concurrency,
          readsPerSec: phase.okPerSec,
          latencyMs: phase.latencyMs,
          errors: phase.errors,
          nodeCores: phase.serverCores,
          coreCores,
          coreUsPerRead: coreCores * 1e6 / phase.okPerSec
        }
        log(`chain reads: ${reads}${writers > 0 ? ` beside ${writers} writers (${Math.round(run.writesPerSec ?? 0)} tx/s)` : ''}, --http-workers ${httpWorkers}, C=${concurrency}: ` +
          `${Math.round(run.readsPerSec)} reads/s, p50 ${run.latencyMs.p50.toFixed(1)} ms, p99 ${run.latencyMs.p99.toFixed(1)} ms, ` +
          `node ${run.nodeCores.toFixed(2)} cores, core thread ${run.coreCores.toFixed(2)} (${Math.round(run.coreUsPerRead)} µs/read)`)
        runs.push(run)
      }
    } finally {
      await node.stop()
      rmSync(home, { recursive: true, force: true })
    }
  }
  log('chain reads: bare Koa GET on one thread, for the ceiling...')
  const bare = await startBareKoa({ warmupConcurrency: 16 })
  let bareKoaGetPerSec: number
  try {
    bareKoaGetPerSec = (await closedLoop({ port: bare.port, pid: bare.pid, concurrency: 16, durationMs: cfg.durationMs, next: bareGet })).okPerSec
  } finally {
    await stopChild(bare.child)
  }
  return { config: cfg, machine: describeMachine(machineInfo()), bareKoaGetPerSec, runs }
}

export function formatChainReads (r: ChainReadsResult): string {
  const fmt = (n: number): string => Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a'
  const lines = [
    `Machine: ${r.machine}. ${fmt(r.config.transactions)} committed transfers (blocks every 250 ms); reads: tx = GET /api/tx/{id}, address = GET /api/address/{pubkey}?limit=20, ` +
    `block = GET /api/blocks/{height}, mix = each client cycles the three; ${r.config.durationMs / 1000} s per run.`,
    '',
    '| reads | --http-workers | C | reads/s | p50 ms | p99 ms | node cores | core thread cores | core thread µs per read | errors |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|---|'
  ]
  for (const x of r.runs) {
    lines.push(`| ${x.reads}${x.writesPerSec !== undefined ? ` beside ${r.config.writers} writers (${fmt(x.writesPerSec)} tx/s)` : ''} | ${x.httpWorkers} | ${x.concurrency} | **${fmt(x.readsPerSec)}** | ${x.latencyMs.p50.toFixed(1)} | ${x.latencyMs.p99.toFixed(1)} | ${x.nodeCores.toFixed(2)} | ${x.coreCores.toFixed(2)} | ${fmt(x.coreUsPerRead)} | ${JSON.stringify(x.errors)} |`)
  }
  lines.push('', `Bare Koa GET, one thread, C=16, same machine: ${fmt(r.bareKoaGetPerSec)}/s.`)
  return lines.join('\n')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runChainReadsBench(process.argv.includes('--quick') ? QUICK_CHAIN_READS_CONFIG : {}).then((r) => {
    console.log(formatChainReads(r))
  }).catch((err: unknown) => { console.error(err); process.exitCode = 1 })
}
