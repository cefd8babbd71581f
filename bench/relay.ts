/**
 * Relay mailbox benchmark: POST /relay/broadcast rate and GET /relay/inbox latency of one real
 * node (a `bin/kith start` child process) whose relay store already holds many envelopes, beside
 * a bare Koa app measured with the same HTTP client (raw sockets, bench/lib/raw-http.ts) on the same machine.
 *
 * - `kith init` a fresh home, then pre-load N envelopes over M mailboxes straight into
 *   `<home>/data/relay` with RelayStore (fsync off for the load; random 24-byte nonces, ~200-byte
 *   ciphertexts, sent_at spread over the last 3 hours, random 32-byte recipient and sender keys).
 *   The load stops at N or after `loadBudgetMs`, whichever comes first;
 * - start the node with SVC_RATE_LIMIT_RPS=0, SVC_RELAY_SENDER_RPS=0 and the mailbox admission limits off
 *   (SVC_RELAY_CLIENT_MAILBOX_PER_MIN, SVC_RELAY_CLIENT_MAILBOX_MAX, SVC_RELAY_MAILBOX_PER_MIN = 0: every client is 127.0.0.1);
 * - broadcast: C keep-alive clients POST envelopes back to back for a fixed time, at each C of a
 *   sweep (64, 128, 256); accepted/s and answer latency. Each envelope has a fresh nonce (so a
 *   distinct id), a random one of 1,000 senders and a random loaded mailbox as recipient. The
 *   capacity is the best rate of the sweep: an answer waits for a disk sync, so at low C the
 *   rate is bounded by latency, not by the node's CPU;
 * - the pre-load ends with a merge of the log into the mailbox table (RelayStore.merge), as a
 *   node merges a log grown to half the table; the node starts on the merged store;
 * - inbox: C' keep-alive clients GET /relay/inbox?pub=<a loaded mailbox>&limit=50, random mailbox
 *   per request; req/s and latency. Right after, the same clients against a bare Koa app that
 *   answers every request with a copy of one page the node served: the machine's floor for
 *   those figures (the clients share the 2 cores with the server);
 * - inbox, open loop: the same GET at fixed offered rates (one request every 1/rate s, answered or
 *   not), latency from each scheduled send time; p50/p99/p99.9, answered/s, errors, dropped;
 * - node RSS (/proc/<pid>/status VmRSS) once up and after the phases;
 * - baseline: a minimal Koa app (one middleware answering a small JSON body) in a child process,
 *   by the same client at the same concurrencies, twice: GET (no body) and POST with the same
 *   bodies broadcast sends (left unread by the app; node discards them), the like-for-like
 *   request. Its capacity is the best rate too. At each
 *   concurrency the baseline runs come right before the broadcast run, so they share the state
 *   of the host (its speed here varies by 2x within minutes), and the whole sweep is repeated
 *   `rounds` times: the best runs estimate what each can do when the host is not in the way.
 * - floors: the same POSTs against apps on as many threads as the machine has cores (one
 *   process, SO_REUSEPORT) that read and JSON-parse each body and do nothing else: Koa, and
 *   node:http alone. A node that also checks, stores and gossips each envelope cannot pass them.
 *
 * Run alone: node dist/bench/relay.js [--quick]
 */
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { allocatedBytes } from '../src/node/index.js'
import { RelayStore, canonicalId, type Envelope } from '../src/relay/index.js'
import { machineInfo, type MachineInfo } from './lib/proc.js'
import { request, stopChild } from './lib/harness.js'
import { closedLoop, openLoop, type OpenLoopResult, type PhaseResult } from './lib/load.js'
import { bareGet, inChild, kithInit, rssBytes, runChildMode, startBareFloor, startBareKoa, startKith, type BareApp, type KithProcess } from './lib/processes.js'

const execFileP = promisify(execFile)
/** every load client connects from 127.0.0.1: the per-address mailbox limits would measure themselves */
const ADMISSION_OFF = { SVC_RELAY_CLIENT_MAILBOX_PER_MIN: '0', SVC_RELAY_CLIENT_MAILBOX_MAX: '0', SVC_RELAY_MAILBOX_PER_MIN: '0' }

// ---------------------------------------------------------------------------------------
// configuration

export interface RelayBenchConfig {
  /** envelopes to pre-load (fewer if the load budget runs out) */
  envelopes: number
  mailboxes: number
  /** wall-time budget of the pre-load, ms */
  loadBudgetMs: number
  /** decoded ciphertext bytes of each envelope */
  ciphertextBytes: number
  broadcast: { concurrencies: number[], durationMs: number }
  inbox: { concurrency: number, durationMs: number, limit: number }
  /** open-loop inbox GETs at these offered rates (req/s), `durationMs` each */
  inboxOpenLoop: { rates: number[], durationMs: number }
  baseline: { concurrencies: number[], durationMs: number }
  /** times the broadcast / bare Koa sweep is repeated; capacities are the best runs */
  rounds: number
}

export const DEFAULT_RELAY_CONFIG: RelayBenchConfig = {
  envelopes: 1_000_000,
  mailboxes: 10_000,
  loadBudgetMs: 90_000,
  ciphertextBytes: 200,
  broadcast: { concurrencies: [64, 128, 256], durationMs: 5_000 },
  inbox: { concurrency: 16, durationMs: 10_000, limit: 50 },
  inboxOpenLoop: { rates: [250, 500, 1000, 2000], durationMs: 10_000 },
  baseline: { concurrencies: [64, 128, 256], durationMs: 5_000 },
  rounds: 3
}

export const QUICK_RELAY_CONFIG: Partial<RelayBenchConfig> = {
  envelopes: 100_000,
  mailboxes: 1_000,
  loadBudgetMs: 30_000,
  broadcast: { concurrencies: [64, 128, 256], durationMs: 3_000 },
  inbox: { concurrency: 16, durationMs: 3_000, limit: 50 },
  inboxOpenLoop: { rates: [250, 1000], durationMs: 3_000 },
  baseline: { concurrencies: [64, 128, 256], durationMs: 3_000 },
  rounds: 1
}

const SPREAD_SECONDS = 3 * 3600
/** envelopes handed to lmdb at once during the pre-load (its async transactions batch into one commit) */
const LOAD_BATCH = 2_000

// ---------------------------------------------------------------------------------------
// results

export interface LoadResult {
  requested: number
  loaded: number
  mailboxes: number
  seconds: number
  perSec: number
  /** the load stopped on its time budget before `requested` */
  truncated: boolean
  /** the merge of the loaded log into the mailbox table, after the load (RelayStore.merge), s */
  mergeSeconds: number
  /** size of <home>/data/relay after the load, bytes */
  dbBytes: number
}

export interface RelayBenchResult {
  config: RelayBenchConfig
  machine: MachineInfo
  load: LoadResult
  nodeStartMs: number
  /** the best broadcast rate of the sweep, and every point of it */
  broadcast: PhaseResult
  broadcastSweep: PhaseResult[]
  inbox: PhaseResult & { meanItems: number }
  /** a bare Koa app answering a copy of one inbox page, same clients: the machine's floor for the inbox runs */
  inboxFloor: PhaseResult & { pageBytes: number }
  inboxOpenLoop: OpenLoopResult[]
  /** VmRSS of the node, bytes: once up (indexes rebuilt), and after the phases */
  nodeRss: { afterStart: number, afterPhases: number }
  baseline: PhaseResult
  baselineSweep: PhaseResult[]
  /** the bare app answering POSTs of the broadcast bodies */
  baselinePost: PhaseResult
  baselinePostSweep: PhaseResult[]
  /**
   * the floors on every core: a bare app (Koa; node:http alone) on as many threads as the machine
   * has cores, reading and JSON-parsing the broadcast bodies and doing nothing else
   */
  floorThreads: number
  floorKoa: PhaseResult
  floorKoaSweep: PhaseResult[]
  floorHttp: PhaseResult
  floorHttpSweep: PhaseResult[]
  /** best broadcast accepted/s / best bare Koa req/s */
  broadcastRatio: number
  loadavg: [number, number]
  nodeWarnLines: number
  elapsedMs: number
}

// ---------------------------------------------------------------------------------------
// helpers

// ---------------------------------------------------------------------------------------
// workload

function randomEnvelope (recipient: string, sender: string, sentAt: number, ciphertextBytes: number): Envelope {
  const nonce = randomBytes(24)
  const ciphertext = randomBytes(ciphertextBytes)
  return {
    id: canonicalId(nonce, ciphertext),
    sender_pub: sender,
    recipient_pub: recipient,
    sender_ed25519_pub: '',
    fee_ut: 0,
    fee_sig: null,
    nonce: nonce.toString('base64'),
    ciphertext: ciphertext.toString('base64'),
    sent_at: sentAt
  }
}

async function preload (relayDir: string, cfg: RelayBenchConfig, log: (l: string) => void): Promise<{ load: LoadResult, mailboxes: string[] }> {
  const mailboxes = Array.from({ length: cfg.mailboxes }, () => randomBytes(32).toString('hex'))
  const senders = Array.from({ length: 1_000 }, () => randomBytes(32).toString('hex'))
  // merged once at the end, as a node merges a log that has grown to half the mailbox table
  const store = RelayStore.open(relayDir, { ttlMs: 7 * 86_400_000, clock: { now: () => Date.now() }, sync: false, autoMerge: false })
  const nowS = Math.floor(Date.now() / 1000)
  const t0 = performance.now()
  const deadline = t0 + cfg.loadBudgetMs
  let loaded = 0
  let lastLog = t0
  const merge = { start: NaN, end: NaN }
  try {
    while (loaded < cfg.envelopes && performance.now() < deadline) {
      const n = Math.min(LOAD_BATCH, cfg.envelopes - loaded)
      const puts: Array<Promise<boolean>> = new Array(n)
      for (let k = 0; k < n; k++) {
        const i = loaded + k
        // round-robin over mailboxes, so every mailbox holds envelopes whatever count is reached
        const env = randomEnvelope(mailboxes[i % mailboxes.length], senders[Math.floor(Math.random() * senders.length)],
          nowS - 60 - Math.floor(Math.random() * SPREAD_SECONDS), cfg.ciphertextBytes)
        puts[k] = store.put(env)
      }
      const stored = await Promise.all(puts)
      loaded += stored.filter(Boolean).length
      if (performance.now() - lastLog > 10_000) {
        lastLog = performance.now()
        log(`relay: loaded ${loaded} envelopes (${Math.round(loaded / ((lastLog - t0) / 1000))}/s)`)
      }
    }
    merge.start = performance.now()
    await store.merge()
    merge.end = performance.now()
  } finally {
    await store.close()
  }
  const mergeSeconds = (merge.end - merge.start) / 1000
  const seconds = (merge.start - t0) / 1000
  return {
    mailboxes,
    load: {
      requested: cfg.envelopes,
      loaded,
      mailboxes: cfg.mailboxes,
      seconds,
      perSec: loaded / seconds,
      truncated: loaded < cfg.envelopes,
      mergeSeconds,
      dbBytes: allocatedBytes(path.join(relayDir, 'data.mdb'))
    }
  }
}

/**
 * Runs `preload` in a child process: the benchmark process is also the load generator, and a
 * heap that has just written a million envelopes pauses it for GC, which the latencies it
 * measures would count (observed: inbox p99 13-22 ms from this process, 4-5 ms from a fresh one).
 */
async function preloadInChild (relayDir: string, cfg: RelayBenchConfig, log: (l: string) => void): Promise<{ load: LoadResult, mailboxes: string[] }> {
  return await inChild(import.meta.url, '--preload', [relayDir, JSON.stringify(cfg)], log)
}

/**
 * Broadcast bodies made on demand (a pool big enough for a sweep at 20k/s would take GBs): one
 * random ciphertext, a random one of 1,000 senders, a random loaded mailbox, and a nonce that is
 * a random prefix and a counter, so every envelope has its own canonical id.
 */
function broadcastBodies (mailboxes: readonly string[], ciphertextBytes: number): () => Buffer {
  const senders = Array.from({ length: 1000 }, () => randomBytes(32).toString('hex'))
  const ciphertext = randomBytes(ciphertextBytes).toString('base64')
  const nonce = Buffer.concat([randomBytes(16), Buffer.alloc(8)])
  let counter = 0
  return () => {
    nonce.writeDoubleBE(counter++, 16)
    const sender = senders[Math.floor(Math.random() * senders.length)]
    const recipient = mailboxes[Math.floor(Math.random() * mailboxes.length)]
    return Buffer.from(`{"envelope":{"id":"x","sender_pub":"${sender}","recipient_pub":"${recipient}","sender_ed25519_pub":"","fee_ut":0,` +
      `"fee_sig":null,"nonce":"${nonce.toString('base64')}","ciphertext":"${ciphertext}"}}`, 'latin1')
  }
}

const best = (points: PhaseResult[]): PhaseResult => points.reduce((a, b) => (b.okPerSec > a.okPerSec ? b : a))

// ---------------------------------------------------------------------------------------
// open loop, from a child process

/** What an open-loop child needs: the node, the offered rate, and the mailboxes whose inboxes it reads. */
interface OpenLoopJob { port: number, pid: number, rate: number, durationMs: number, mailboxesFile: string, limit: number }

/**
 * Runs `openLoop` in a fresh child process: at 250-2,000 requests/s the p99 is a handful of
 * requests, and a GC pause of this process (it holds the run's results and its broadcast
 * bodies) would be counted as the node's latency.
 */
async function openLoopInChild (job: OpenLoopJob): Promise<OpenLoopResult> {
  return await inChild(import.meta.url, '--open-loop', [JSON.stringify(job)])
}

async function openLoopJob (job: OpenLoopJob): Promise<OpenLoopResult> {
  const mailboxes = JSON.parse(readFileSync(job.mailboxesFile, 'utf8')) as string[]
  const inboxPath = (): string => `/relay/inbox?pub=${mailboxes[Math.floor(Math.random() * mailboxes.length)]}&limit=${job.limit}`
  return await openLoop({ ...job, path: inboxPath })
}

// ---------------------------------------------------------------------------------------
// the benchmark

export async function runRelayBench (config: Partial<RelayBenchConfig> = {}, log: (line: string) => void = (l) => console.error(l)): Promise<RelayBenchResult> {
  const cfg: RelayBenchConfig = { ...DEFAULT_RELAY_CONFIG, ...config }
  const started = Date.now()
  const machine = machineInfo()
  const load0 = os.loadavg()[0]
  const home = mkdtempSync(path.join(os.tmpdir(), 'kith-bench-relay-'))
  let node: KithProcess | undefined
  let bare: BareApp | undefined
  let pageApp: BareApp | undefined
  let floorKoa: BareApp | undefined
  let floorHttp: BareApp | undefined
  try {
    await kithInit(home)

    log(`relay: pre-loading up to ${cfg.envelopes} envelopes over ${cfg.mailboxes} mailboxes (budget ${cfg.loadBudgetMs / 1000} s)...`)
    const { load, mailboxes } = await preloadInChild(path.join(home, 'data', 'relay'), cfg, log)
    // the pre-load writes without fsync: its gigabytes of dirty pages go to disk now, not while
    // the node is measured (writeback competed with it for the 2 cores and the disk)
    const synced = performance.now()
    await execFileP('sync', [])
    log(`relay: sync after the pre-load took ${Math.round(performance.now() - synced)} ms`)
    log(`relay: loaded ${load.loaded} envelopes in ${load.seconds.toFixed(1)} s (${Math.round(load.perSec)}/s)${load.truncated ? ' (time budget reached)' : ''}, merged in ${load.mergeSeconds.toFixed(1)} s`)

    const nextBody = broadcastBodies(mailboxes, cfg.ciphertextBytes)

    node = await startKith({ home, env: { SVC_RATE_LIMIT_RPS: '0', SVC_RELAY_SENDER_RPS: '0', ...ADMISSION_OFF }, log: (l) => log(`relay: ${l}`) })
    const { port, pid, startMs: nodeStartMs } = node
    const rssAfterStart = rssBytes(pid)
    log(`relay: node up in ${Math.round(nodeStartMs)} ms, RSS ${Math.round(rssAfterStart / 2 ** 20)} MiB`)

    // Inbox first, while the store holds exactly the pre-loaded set; a 1 s warm-up each.
    const pick = (): string => mailboxes[Math.floor(Math.random() * mailboxes.length)]
    const inboxReq = (): { method: string, path: string } => ({ method: 'GET', path: `/relay/inbox?pub=${pick()}&limit=${cfg.inbox.limit}` })
    await closedLoop({ port, pid, concurrency: cfg.inbox.concurrency, durationMs: 1000, next: inboxReq })
    log(`relay: inbox, C=${cfg.inbox.concurrency}, ${cfg.inbox.durationMs / 1000} s...`)
    let items = 0
    let pages = 0
    const inbox = await closedLoop({
      port, pid, concurrency: cfg.inbox.concurrency, durationMs: cfg.inbox.durationMs, next: inboxReq,
      onOk: (body) => {
        // the load generator shares the cores with the node: read the count from the head of the
        // page, and parse one page in 100 whole to check that count against the items
        const count = Number(/^\{"pub":"[0-9a-f]{64}","count":(\d+),/.exec(body)?.[1] ?? NaN)
        if (pages % 100 === 0) {
          const page = JSON.parse(body) as { count: number, items: unknown[] }
          if (page.count !== count || page.items.length !== count) throw new Error(`inbox page: count ${page.count}, ${page.items.length} items, head says ${count}`)
        }
        pages++
        items += count
      }
    })
    log(`relay: inbox ${Math.round(inbox.okPerSec)} req/s, p50 ${inbox.latencyMs.p50.toFixed(1)} ms, p99 ${inbox.latencyMs.p99.toFixed(1)} ms`)
    // The floor under those figures on this machine: the same clients against a bare Koa app
    // that answers with a copy of one page the node served (no store, no routing).
    const pageFile = path.join(home, 'inbox-page.json')
    const page = await request(new http.Agent(), port, 'GET', inboxReq().path)
    writeFileSync(pageFile, page.body, 'latin1')
    pageApp = await startBareKoa({ warmupConcurrency: cfg.baseline.concurrencies[0], pageFile })
    const floorReq = (): { method: string, path: string } => ({ method: 'GET', path: inboxReq().path })
    await closedLoop({ port: pageApp.port, pid: pageApp.pid, concurrency: cfg.inbox.concurrency, durationMs: 1000, next: floorReq })
    const floor = await closedLoop({ port: pageApp.port, pid: pageApp.pid, concurrency: cfg.inbox.concurrency, durationMs: cfg.inbox.durationMs, next: floorReq })
    await stopChild(pageApp.child)
    pageApp = undefined
    const inboxFloor = { ...floor, pageBytes: page.body.length }
    log(`relay: bare Koa answering one ${page.body.length}-byte page: ${Math.round(floor.okPerSec)} req/s, p50 ${floor.latencyMs.p50.toFixed(1)} ms, p99 ${floor.latencyMs.p99.toFixed(1)} ms`)
    const inboxOpenLoop: OpenLoopResult[] = []
    const mailboxesFile = path.join(home, 'mailboxes.json')
    writeFileSync(mailboxesFile, JSON.stringify(mailboxes))
    for (const rate of cfg.inboxOpenLoop.rates) {
      log(`relay: inbox, open loop at ${rate} req/s, ${cfg.inboxOpenLoop.durationMs / 1000} s (from a child process)...`)
      const r = await openLoopInChild({ port, pid, rate, durationMs: cfg.inboxOpenLoop.durationMs, mailboxesFile, limit: cfg.inbox.limit })
      log(`relay: inbox at ${rate}/s: p50 ${r.latencyMs.p50.toFixed(1)} ms, p99 ${r.latencyMs.p99.toFixed(1)} ms, p99.9 ${r.latencyMs.p999.toFixed(1)} ms`)
      inboxOpenLoop.push(r)
    }

    // Broadcast and bare Koa alternate, concurrency by concurrency, so that each pair sees the
    // same state of a shared (noisy) host; the idle process of the pair costs nothing.
    const broadcastReq = (): { method: string, path: string, body: Buffer } => ({ method: 'POST', path: '/relay/broadcast', body: nextBody() })
    await closedLoop({ port, pid, concurrency: cfg.broadcast.concurrencies[0], durationMs: 1000, next: broadcastReq })
    bare = await startBareKoa({ warmupConcurrency: cfg.baseline.concurrencies[0] })
    // what no node can pass on these cores: apps that only read and parse the same POSTs
    const floorThreads = os.availableParallelism()
    floorKoa = await startBareFloor({ warmupConcurrency: cfg.baseline.concurrencies[0], threads: floorThreads, stack: 'koa' })
    floorHttp = await startBareFloor({ warmupConcurrency: cfg.baseline.concurrencies[0], threads: floorThreads, stack: 'node:http' })
    const floorKoaSweep: PhaseResult[] = []
    const floorHttpSweep: PhaseResult[] = []
    const broadcastSweep: PhaseResult[] = []
    const baselineSweep: PhaseResult[] = []
    const baselinePostSweep: PhaseResult[] = []
    const baselinePostReq = (): { method: string, path: string, body: Buffer } => ({ method: 'POST', path: '/', body: nextBody() })
    const concurrencies = [...new Set([...cfg.baseline.concurrencies, ...cfg.broadcast.concurrencies])].sort((a, b) => a - b)
    for (let round = 1; round <= cfg.rounds; round++) {
      for (const concurrency of concurrencies) {
        if (cfg.baseline.concurrencies.includes(concurrency)) {
          log(`relay: round ${round}/${cfg.rounds}: bare Koa, C=${concurrency}, ${cfg.baseline.durationMs / 1000} s...`)
          const r = await closedLoop({ port: bare.port, pid: bare.pid, concurrency, durationMs: cfg.baseline.durationMs, next: bareGet })
          log(`relay: bare Koa C=${concurrency}: ${Math.round(r.okPerSec)} req/s`)
          baselineSweep.push(r)
          const post = await closedLoop({ port: bare.port, pid: bare.pid, concurrency, durationMs: cfg.baseline.durationMs, next: baselinePostReq })
          log(`relay: bare Koa POST C=${concurrency}: ${Math.round(post.okPerSec)} req/s`)
          baselinePostSweep.push(post)
          for (const [app, sweep, name] of [[floorKoa, floorKoaSweep, 'Koa'], [floorHttp, floorHttpSweep, 'node:http']] as const) {
            const floor = await closedLoop({ port: app.port, pid: app.pid, concurrency, durationMs: cfg.baseline.durationMs, next: baselinePostReq })
            log(`relay: floor, ${name} on ${floorThreads} threads reading and parsing the POSTs, C=${concurrency}: ${Math.round(floor.okPerSec)} req/s`)
            sweep.push(floor)
          }
        }
        if (cfg.broadcast.concurrencies.includes(concurrency)) {
          log(`relay: round ${round}/${cfg.rounds}: broadcast, C=${concurrency}, ${cfg.broadcast.durationMs / 1000} s...`)
          const r = await closedLoop({ port, pid, concurrency, durationMs: cfg.broadcast.durationMs, next: broadcastReq })
          log(`relay: broadcast C=${concurrency}: ${Math.round(r.okPerSec)} accepted/s, p50 ${r.latencyMs.p50.toFixed(1)} ms, p99 ${r.latencyMs.p99.toFixed(1)} ms`)
          broadcastSweep.push(r)
        }
      }
    }
    const broadcast = { best: best(broadcastSweep), points: broadcastSweep }
    const baseline = { best: best(baselineSweep), points: baselineSweep }
    const baselinePost = { best: best(baselinePostSweep), points: baselinePostSweep }

    const rssAfterPhases = rssBytes(pid)
    const warn = node.lines()
    await node.stop()
    node = undefined

    return {
      config: cfg,
      machine,
      load,
      nodeStartMs,
      broadcast: broadcast.best,
      broadcastSweep: broadcast.points,
      inbox: { ...inbox, meanItems: pages > 0 ? items / pages : NaN },
      inboxFloor,
      inboxOpenLoop,
      nodeRss: { afterStart: rssAfterStart, afterPhases: rssAfterPhases },
      baseline: baseline.best,
      baselineSweep: baseline.points,
      baselinePost: baselinePost.best,
      baselinePostSweep: baselinePost.points,
      floorThreads,
      floorKoa: best(floorKoaSweep),
      floorKoaSweep,
      floorHttp: best(floorHttpSweep),
      floorHttpSweep,
      broadcastRatio: broadcast.best.okPerSec / baseline.best.okPerSec,
      loadavg: [load0, os.loadavg()[0]],
      nodeWarnLines: warn,
      elapsedMs: Date.now() - started
    }
  } finally {
    if (node !== undefined) await node.stop()
    if (bare !== undefined) await stopChild(bare.child)
    if (pageApp !== undefined) await stopChild(pageApp.child)
    if (floorKoa !== undefined) await stopChild(floorKoa.child)
    if (floorHttp !== undefined) await stopChild(floorHttp.child)
    rmSync(home, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------------------------------
// formatting

/** broadcast / bare rate of each run pair measured back to back (same round and concurrency; the sweeps push in that order). */
const pairRatios = (broadcast: PhaseResult[], bare: PhaseResult[]): number[] =>
  broadcast.map((b, i) => bare[i]?.concurrency === b.concurrency ? b.okPerSec / bare[i].okPerSec : NaN).filter((x) => Number.isFinite(x))

const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted.length === 0 ? NaN : sorted.length % 2 === 1 ? sorted[sorted.length >> 1] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2
}

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`

/** Server CPU (all threads) per answered request, µs. */
const perRequestUs = (p: PhaseResult): number => p.serverCores / p.okPerSec * 1e6
const clientUs = (p: PhaseResult): number => p.clientCores / p.okPerSec * 1e6

/** Runs grouped by concurrency, in the order first seen: the best run of each and all of them. */
function bestPerConcurrency (points: PhaseResult[]): Array<{ best: PhaseResult, all: PhaseResult[] }> {
  const groups = new Map<number, PhaseResult[]>()
  for (const p of points) groups.set(p.concurrency, [...(groups.get(p.concurrency) ?? []), p])
  return [...groups.values()].map((all) => ({ best: best(all), all }))
}

const fmt = (x: number, digits = 0): string => Number.isFinite(x) ? x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a'

export function formatRelayBench (r: RelayBenchResult): string {
  const c = r.config
  const rounds = (all: PhaseResult[]): string => all.length === 1 ? '' : ` (${all.map((x) => fmt(x.okPerSec)).join(', ')})`
  const l = r.load
  const errs = (p: PhaseResult): string => Object.keys(p.errors).length === 0 ? '0' : Object.entries(p.errors).map(([k, v]) => `${v}×${k}`).join(', ')
  const row = (name: string, p: PhaseResult, every = ''): string =>
    `| ${name} | ${p.concurrency} | ${p.durationMs / 1000} | ${fmt(p.requests)} | **${fmt(p.okPerSec)}**${every} | ${fmt(p.latencyMs.p50, 2)} | ${fmt(p.latencyMs.p99, 2)} | ` +
    `${p.serverCores.toFixed(2)} | ${p.clientCores.toFixed(2)} | ${p.loadavg.map((x) => x.toFixed(1)).join('→')} | ${errs(p)} |`
  const lines: string[] = [
    `Machine: ${r.machine.nproc} cores, ${r.machine.cpuModel}, ${r.machine.memTotal} RAM, ${r.machine.kernel}, node ${r.machine.node}; ` +
      `${r.machine.date}. 1-minute load average ${r.loadavg[0].toFixed(2)} at the start, ${r.loadavg[1].toFixed(2)} at the end.`,
    '',
    `Pre-load: ${fmt(l.loaded)} envelopes over ${fmt(l.mailboxes)} mailboxes (≈ ${fmt(l.loaded / l.mailboxes)} each), ` +
      `${c.ciphertextBytes}-byte ciphertexts, written with \`RelayStore.put\` (fsync off, ${LOAD_BATCH} concurrent puts per lmdb batch) ` +
      `in ${fmt(l.seconds, 1)} s = ${fmt(l.perSec)} envelopes/s, then merged into the mailbox table (\`RelayStore.merge\`) in ${fmt(l.mergeSeconds, 1)} s; ` +
      `relay store ${fmt(l.dbBytes / 2 ** 20)} MiB on disk.` +
      (l.truncated ? ` **The ${fmt(c.loadBudgetMs / 1000)} s load budget ran out before ${fmt(l.requested)}: the figures below are for ${fmt(l.loaded)} envelopes.**` : '') +
      ` Node start with that store: ${fmt(r.nodeStartMs)} ms to the first 200 of /api/well-known-version` +
      ` (the in-memory indexes are rebuilt from the keys first); node RSS ${fmt(r.nodeRss.afterStart / 2 ** 20)} MiB once up` +
      ` (≤ ${fmt(r.nodeRss.afterStart / Math.max(1, l.loaded))} bytes per stored envelope, an upper bound: RSS also counts the worker threads and the pages of the store file lmdb has mapped in),` +
      ` ${fmt(r.nodeRss.afterPhases / 2 ** 20)} MiB after the phases.`,
    '',
    `Broadcast and bare Koa: ${c.rounds} round(s); each row is the best run at that C (its rate in bold, every round's rate after it), the other columns are that run's.`,
    '',
    '| phase | C | s | requests | rate /s (every round) | p50 ms | p99 ms | server cores | client cores | load avg | errors |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|',
    ...bestPerConcurrency(r.broadcastSweep).map(({ best: p, all }) => row(`POST /relay/broadcast (accepted)${p === r.broadcast ? ', best' : ''}`, p, rounds(all))),
    row(`GET /relay/inbox?limit=${c.inbox.limit} (random loaded mailbox)`, r.inbox),
    row(`floor: bare Koa answering a copy of one inbox page (${fmt(r.inboxFloor.pageBytes)} bytes)`, r.inboxFloor),
    ...bestPerConcurrency(r.baselineSweep).map(({ best: p, all }) => row(`bare Koa GET, one middleware, small JSON${p === r.baseline ? ', best' : ''}`, p, rounds(all))),
    ...bestPerConcurrency(r.baselinePostSweep).map(({ best: p, all }) => row(`bare Koa POST of the broadcast bodies (unread), same app${p === r.baselinePost ? ', best' : ''}`, p, rounds(all))),
    ...bestPerConcurrency(r.floorKoaSweep).map(({ best: p, all }) => row(`floor: bare Koa on ${r.floorThreads} threads, the same POSTs read and JSON-parsed${p === r.floorKoa ? ', best' : ''}`, p, rounds(all))),
    ...bestPerConcurrency(r.floorHttpSweep).map(({ best: p, all }) => row(`floor: node:http alone on ${r.floorThreads} threads, the same POSTs read and JSON-parsed${p === r.floorHttp ? ', best' : ''}`, p, rounds(all))),
    '',
    '**Inbox latency at a fixed offered load** (open loop: one request every 1/rate s whether or not earlier ones were answered; ' +
      'latency from the scheduled send time; random loaded mailbox, limit ' + String(c.inbox.limit) + '):',
    '',
    '| offered /s | s | answered /s | p50 ms | p99 ms | p99.9 ms | max ms | server cores | errors | dropped |',
    '|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|',
    ...r.inboxOpenLoop.map((o) => `| ${fmt(o.offeredPerSec)} | ${o.durationMs / 1000} | ${fmt(o.okPerSec)} | ${fmt(o.latencyMs.p50, 2)} | ` +
      `**${fmt(o.latencyMs.p99, 2)}** | ${fmt(o.latencyMs.p999, 2)} | ${fmt(o.latencyMs.max, 2)} | ${o.serverCores.toFixed(2)} | ` +
      `${Object.keys(o.errors).length === 0 ? '0' : Object.entries(o.errors).map(([k, v]) => `${v}×${k}`).join(', ')} | ${fmt(o.dropped)} |`),
    '',
    `- best broadcast / best bare Koa = **${(r.broadcastRatio * 100).toFixed(1)}%** (goal ≥ 60%: ${r.broadcastRatio >= 0.6 ? 'met' : 'not met'}); ` +
      `server CPU per request in those runs (all threads): broadcast ${fmt(perRequestUs(r.broadcast))} µs, bare Koa ${fmt(perRequestUs(r.baseline))} µs ` +
      `(client CPU per request: ${fmt(clientUs(r.broadcast), 1)} and ${fmt(clientUs(r.baseline), 1)} µs, so the server, not the load generator, is the bottleneck of both); ` +
      `median of the back-to-back pairs (same round and C): **${pct(median(pairRatios(r.broadcastSweep, r.baselineSweep)))}** ` +
      `(${pairRatios(r.broadcastSweep, r.baselineSweep).map(pct).join(', ')}); ` +
      `against the bare app answering the same POSTs: **${(r.broadcast.okPerSec / r.baselinePost.okPerSec * 100).toFixed(1)}%** best against best, ` +
      `pairs' median **${pct(median(pairRatios(r.broadcastSweep, r.baselinePostSweep)))}**, ` +
      `(${fmt(r.broadcast.okPerSec)} / ${fmt(r.baselinePost.okPerSec)}; server ${fmt(perRequestUs(r.baselinePost))} µs per request); ` +
      `the floors on all ${r.floorThreads} cores, apps that only read and JSON-parse the same POSTs: Koa **${(r.floorKoa.okPerSec / r.baseline.okPerSec).toFixed(2)}×** the best bare Koa GET, ` +
      `node:http alone **${(r.floorHttp.okPerSec / r.baseline.okPerSec).toFixed(2)}×**, the broadcast **${(r.broadcast.okPerSec / r.floorKoa.okPerSec).toFixed(2)}×** the Koa floor ` +
      `(a broadcast also checks, hashes, stores durably and gossips, so it cannot pass them on this machine); ` +
      `inbox p99 = **${fmt(r.inbox.latencyMs.p99, 2)} ms** closed loop at C=${c.inbox.concurrency}, where most of it is queueing behind ${c.inbox.concurrency - 1} other requests on one event loop ` +
      `(goal < 10 ms: ${r.inbox.latencyMs.p99 < 10 ? 'met' : 'not met'}), beside **${fmt(r.inboxFloor.latencyMs.p99, 2)} ms** for a bare Koa app answering a copy of one page to the same clients; open loop ${r.inboxOpenLoop.map((o) => `**${fmt(o.latencyMs.p99, 2)} ms** at ${fmt(o.offeredPerSec)}/s`).join(', ')}; ` +
      `an inbox page held ${fmt(r.inbox.meanItems, 1)} items on average;`,
    '- closed loop: each client sends its next request when the previous one is answered, over keep-alive connections on loopback ' +
      '(raw sockets, bench/lib/raw-http.ts: node:http\'s client spends 35-60 µs per request here and would bound the bare runs); ' +
      'a 1 s warm-up precedes each phase and is not counted. Inbox runs before broadcast, so it reads exactly the pre-loaded set; ' +
      'bare Koa and broadcast alternate, one concurrency at a time (bare first), both servers up;',
    '- each broadcast has a fresh nonce (its own id), a random one of 1,000 senders and a random loaded mailbox as recipient (no mailbox or sender cap is hit); ' +
      'the node runs with SVC_RATE_LIMIT_RPS=0, SVC_RELAY_SENDER_RPS=0 and the mailbox admission limits off, fsync on (the node default);',
    '- server cores = CPU seconds / wall seconds of the server process, all threads (/proc/<pid>/stat); client cores = this process;',
    `- load avg = 1-minute load average at the start → end of the phase; on this ${r.machine.nproc}-core machine the load generator shares the cores with the server.`
  ]
  const firsts = [['broadcast', r.broadcast], ['inbox', r.inbox], ['baseline', r.baseline], ['baseline POST', r.baselinePost], ['floor Koa', r.floorKoa], ['floor node:http', r.floorHttp]] as const
  const errLines = firsts.flatMap(([n, p]) => p.firstErrors.map((e) => `${n}: ${e}`))
  if (errLines.length > 0) lines.push('', 'First errors:', ...errLines.slice(0, 10).map((e) => `    ${e}`))
  lines.push('', `Relay benchmark wall time: ${fmt(r.elapsedMs / 1000, 1)} s`)
  return lines.join('\n')
}

/** The child modes (see `inChild`): their result as JSON on stdout. */
const isChild = runChildMode(import.meta.url, {
  '--preload': async ([relayDir, cfg]) => await preload(relayDir, JSON.parse(cfg) as RelayBenchConfig, (l) => console.error(l)),
  '--open-loop': async ([job]) => await openLoopJob(JSON.parse(job) as OpenLoopJob)
})
if (!isChild && process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const quick = process.argv.includes('--quick')
  runRelayBench(quick ? QUICK_RELAY_CONFIG : {}).then((r) => {
    console.log(formatRelayBench(r))
    if (process.argv.includes('--json')) console.error(JSON.stringify(r))
  }, (err: unknown) => {
    console.error(err)
    process.exitCode = 1
  })
}
