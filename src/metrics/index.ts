/**
 * The node's Prometheus metrics (`GET /metrics`). One registry holds the node's own figures,
 * Node.js process figures (prom-client's default collectors) and libp2p's (wired in by the p2p
 * host through `@libp2p/prometheus-metrics` with this registry).
 *
 * Gauges are read when Prometheus scrapes, from a narrow view of the node (`NodeReadings`), so
 * nothing is kept in step by hand; events (blocks, HTTP requests) are counted as they happen.
 * Names follow Prometheus conventions: a `kith_` prefix, base units (seconds, bytes) in the
 * name, `_total` on counters, histograms for durations, and label values from bounded sets
 * (route templates such as `/api/tx/{id}`, never raw paths).
 */
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

/** What the metrics read of the node at scrape time. */
export interface NodeReadings {
  height: () => number
  round: () => number
  mempoolTxs: () => number
  mempoolBytes: () => number
  peers: () => number
  mailboxEnvelopes?: () => number
  /** directories whose files hold the mailbox (its size on disk) */
  mailboxDirs?: string[]
  feedBodyBytes?: () => number
  feedPosts?: () => number
  contracts?: () => number
  /** the live gas price, µT per 1,000 gas */
  gasPrice?: () => number
  /** deploy admission since start: modules prepared, refused, refused again from the cache, turned away by a limit */
  contractDeploys?: () => { prepared: number, refused: number, refusedFromCache: number, limited: number }
}

/** Block intervals and request durations: from a loopback GET to a full block under load. */
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
const BLOCK_BUCKETS = [0.1, 0.25, 0.5, 1, 1.5, 2, 3, 5, 10, 30]

export class NodeMetrics {
  readonly registry = new Registry()
  private readonly httpRequests: Counter<'method' | 'route' | 'status'>
  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>
  private readonly blockInterval: Histogram
  private readonly roundsPerHeight: Histogram
  private readonly blockTxs: Counter
  private readonly contractCalls: Counter<'result'>
  private readonly contractGas: Counter
  private lastBlockTimeMs: number | undefined

  constructor (readings: NodeReadings) {
    const registers = [this.registry]
    collectDefaultMetrics({ register: this.registry })
    const gauge = (name: string, help: string, read: () => number): void => {
      // prom-client calls collect() on every scrape
      new Gauge({ name, help, registers, collect () { this.set(read()) } })
    }
    gauge('kith_chain_height', 'Height of the last committed block', readings.height)
    gauge('kith_consensus_round', 'Consensus round this node is in at the next height', readings.round)
    gauge('kith_mempool_transactions', 'Transactions waiting in the mempool', readings.mempoolTxs)
    gauge('kith_mempool_bytes', 'Bytes of transactions waiting in the mempool', readings.mempoolBytes)
    gauge('kith_p2p_peers', 'Connected libp2p peers', readings.peers)
    if (readings.mailboxEnvelopes !== undefined) gauge('kith_mailbox_envelopes', 'Envelopes stored in the relay mailbox', readings.mailboxEnvelopes)
    const mailboxDirs = readings.mailboxDirs
    if (mailboxDirs !== undefined) gauge('kith_mailbox_disk_bytes', 'Bytes of the relay mailbox files on disk', () => mailboxDirs.reduce((sum, dir) => sum + bytesUnder(dir), 0))
    if (readings.feedBodyBytes !== undefined) gauge('kith_feed_disk_bytes', 'Bytes of post bodies counted against --feed-disk-limit-mb', readings.feedBodyBytes)
    if (readings.feedPosts !== undefined) gauge('kith_feed_posts', 'Live posts in the feed indexes', readings.feedPosts)
    if (readings.contracts !== undefined) gauge('kith_contracts', 'Contracts deployed on the chain, the well-known ones included', readings.contracts)
    if (readings.gasPrice !== undefined) gauge('kith_contract_gas_price', 'The live gas price: µT per 1,000 gas', readings.gasPrice)
    const deploys = readings.contractDeploys
    if (deploys !== undefined) {
      new Gauge({
        name: 'kith_contract_deploy_checks',
        help: 'Deploys checked at admission since start, by result: prepared, refused, refused_cached (answered from the refusal cache), limited (per-sender or node-wide limit)',
        labelNames: ['result'],
        registers,
        collect () {
          const d = deploys()
          this.set({ result: 'prepared' }, d.prepared)
          this.set({ result: 'refused' }, d.refused)
          this.set({ result: 'refused_cached' }, d.refusedFromCache)
          this.set({ result: 'limited' }, d.limited)
        }
      })
    }

    this.httpRequests = new Counter({ name: 'kith_http_requests_total', help: 'HTTP requests answered, by route template and status', labelNames: ['method', 'route', 'status'], registers })
    this.httpDuration = new Histogram({
      name: 'kith_http_request_duration_seconds', help: 'Time from a request\'s arrival to its answer', labelNames: ['method', 'route', 'status'], buckets: HTTP_BUCKETS, registers
    })
    this.blockInterval = new Histogram({ name: 'kith_block_interval_seconds', help: 'Time between the header times of consecutive committed blocks', buckets: BLOCK_BUCKETS, registers })
    this.roundsPerHeight = new Histogram({ name: 'kith_consensus_rounds_per_height', help: 'Rounds a committed height needed (1 when round 0 decided it)', buckets: [1, 2, 3, 4, 6, 10], registers })
    this.blockTxs = new Counter({ name: 'kith_chain_transactions_total', help: 'Transactions in committed blocks', registers })
    this.contractCalls = new Counter({ name: 'kith_contract_calls_total', help: 'CALL_CONTRACT transactions in committed blocks, by outcome (ok or failed)', labelNames: ['result'], registers })
    this.contractGas = new Counter({ name: 'kith_contract_gas_used_total', help: 'Gas used by the contract calls of committed blocks', registers })
  }

  /** A contract call in a block this node committed. */
  observeContractCall (ok: boolean, gasUsed: number): void {
    this.contractCalls.inc({ result: ok ? 'ok' : 'failed' })
    this.contractGas.inc(gasUsed)
  }

  /** A block this node committed: `round` is the round its certificate was signed in. */
  observeBlock (timeMs: number, txCount: number, round: number): void {
    if (this.lastBlockTimeMs !== undefined && timeMs > this.lastBlockTimeMs) this.blockInterval.observe((timeMs - this.lastBlockTimeMs) / 1000)
    this.lastBlockTimeMs = timeMs
    this.roundsPerHeight.observe(round + 1)
    this.blockTxs.inc(txCount)
  }

  observeHttp (method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) }
    this.httpRequests.inc(labels)
    this.httpDuration.observe(labels, seconds)
  }

  async exposition (): Promise<{ contentType: string, text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() }
  }
}

/** Sum of the sizes of the files under `dir` (0 when it does not exist). */
function bytesUnder (dir: string): number {
  let total = 0
  let entries
  try {
    entries = readdirSync(dir, { withFileTypes: true })
  } catch {
    return 0
  }
  for (const entry of entries) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) total += bytesUnder(path)
    else if (entry.isFile()) total += statSync(path, { throwIfNoEntry: false })?.size ?? 0
  }
  return total
}
