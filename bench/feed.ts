/**
 * Feed benchmark: listing latency of one real node (a `bin/kith start` child process) whose chain
 * state holds N posts (10,000 and 1,000,000 by 100,000 authors) and whose body store holds the
 * bodies of the posts it hosts, beside a bare Koa app answering copies of the node's pages; then
 * (bench/feed-scrub.ts) the node's event loop while 4 clients publish 12-megapixel photos.
 *
 * Per size:
 * - `kith init` a home; in a child process, the node's genesis initialisation, then the data set
 *   written straight into its stores (bench/feed-data.ts: a pre-load, not transactions);
 * - start the node under `--trace-gc`: time to ready (the feed index rebuild), RSS, live heap;
 * - a view load from a child process: `POST /feed/post/{id}/view` on the hottest posts of the
 *   last 24 hours from 32 loopback addresses (127.0.0.2…), every (address, post) pair fresh, so
 *   each view is counted and trending / for-you scores move while they are measured;
 * - each listing at concurrency 1 (latency) and 16 (throughput), closed loop, raw-socket
 *   keep-alive clients, the reader, tag or author varied per request (bench/lib/load.ts);
 * - the floor: a bare Koa app answering a copy of a 20-post and a 100-post page to the same clients;
 * - with `profile`, at the largest size, the node again under `--cpu-prof` for the slowest listing.
 *
 * Run alone: node dist/bench/feed.js [--quick] [--no-profile] [--profile-listing KEY] [--no-scrub] [--sizes 10000,1000000]
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { preloadFeed, type FeedDataSize, type PreloadResult } from './feed-data.js'
import { DEFAULT_SCRUB_CONFIG, QUICK_SCRUB_CONFIG, formatScrubBench, runScrubBench, type ScrubBenchConfig, type ScrubBenchResult } from './feed-scrub.js'
import { summariseProfile, type ProfileSummary } from './lib/cpuprofile.js'
import { GcTrace, type GcSummary } from './lib/gc-trace.js'
import { request, sleep, stopChild } from './lib/harness.js'
import { closedLoop, type LoadRequest, type PhaseResult } from './lib/load.js'
import { machineInfo, processCpuSeconds, type MachineInfo } from './lib/proc.js'
import { inChild, kithInit, rssOf, runChildMode, startBareKoa, startKith, type BareApp, type KithProcess, type Rss } from './lib/processes.js'
import { RawHttpConnection } from './lib/raw-http.js'
import { formatProfile } from './throughput.js'

const execFileP = promisify(execFile)

// ---------------------------------------------------------------------------------------
// configuration

export interface FeedBenchConfig {
  sizes: FeedDataSize[]
  /** measured time of each listing at each concurrency, ms (after `warmupMs`) */
  phaseMs: number
  warmupMs: number
  concurrencies: number[]
  /** pages a cursor walk reads before it starts again with another reader */
  walkPages: number
  views: { ratePerSec: number, addresses: number }
  /**
   * ms the profiled run drives a listing (at the largest size): the one named by `listing` (its
   * key, e.g. `foryou`), else the slowest at C=1; null: no profile
   */
  profile: { durationMs: number, concurrency: number, listing?: string } | null
  /** the startup wait for a node that rebuilds its indexes from millions of keys */
  startTimeoutMs: number
  /** part 2 (bench/feed-scrub.ts); null: skipped */
  scrub: Partial<ScrubBenchConfig> | null
}

const SMALL: FeedDataSize = { posts: 10_000, authors: 1_000, readers: 1_000, heavyReaders: 50, likers: 50, hostedShare: 0.5, tags: 2_000, seed: 1 }
const LARGE: FeedDataSize = { posts: 1_000_000, authors: 100_000, readers: 10_000, heavyReaders: 200, likers: 1_000, hostedShare: 0.5, tags: 20_000, seed: 2 }

export const DEFAULT_FEED_CONFIG: FeedBenchConfig = {
  sizes: [SMALL, LARGE],
  phaseMs: 5_000,
  warmupMs: 1_000,
  concurrencies: [1, 16],
  walkPages: 25,
  views: { ratePerSec: 300, addresses: 32 },
  profile: { durationMs: 10_000, concurrency: 16 },
  startTimeoutMs: 300_000,
  scrub: DEFAULT_SCRUB_CONFIG
}

export const QUICK_FEED_CONFIG: Partial<FeedBenchConfig> = {
  sizes: [SMALL],
  phaseMs: 1_000,
  warmupMs: 300,
  profile: null,
  scrub: QUICK_SCRUB_CONFIG
}

// ---------------------------------------------------------------------------------------
// results

export interface ListingResult extends PhaseResult {
  /** the same for a listing at every size (rows are grouped by it) */
  key: string
  endpoint: string
  /** GCs of the node while the phase ran (from --trace-gc) */
  gc: GcSummary
  /** CPU seconds / wall seconds of the node's main thread */
  mainCores: number
}

export interface ViewLoadResult {
  addresses: number
  seconds: number
  sent: number
  ok: number
  /** views the node counted: first (address, post) pairs (a repeat within the hour is not counted) */
  counted: number
  errors: Record<string, number>
}

export interface SizeResult {
  preload: PreloadResult
  /** seconds of `sync` after the pre-load */
  syncSeconds: number
  start: {
    /** spawn to the first 200 of /api/well-known-version */
    readyMs: number
    /** spawn to the feed's "indexes rebuilt" log line */
    rebuiltMs: number
    indexedPosts: number
    removedBodies: number
    rssAfterStart: Rss
    /** V8 heap in use after the last full GC before ready (the indexes), and its peak during start */
    heapAfterStartMb: number
    heapPeakStartMb: number
  }
  listings: ListingResult[]
  floor: ListingResult[]
  views: ViewLoadResult
  rssAfterPhases: Rss
  heapAfterPhasesMb: number
  profile?: { endpoint: string, summary: ProfileSummary, run: PhaseResult, startup: ProfileSummary, startMs: number }
}

export interface FeedBenchResult {
  config: FeedBenchConfig
  machine: MachineInfo
  sizes: SizeResult[]
  scrub?: ScrubBenchResult
  elapsedMs: number
}

// ---------------------------------------------------------------------------------------
// the listings

interface Endpoint {
  key: string
  name: string
  next: (client: number) => LoadRequest
  onOk?: (body: string, client: number) => void
}

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]

function endpoints (data: PreloadResult, cfg: FeedBenchConfig): Endpoint[] {
  const r = data.readers
  const get = (p: string): LoadRequest => ({ method: 'GET', path: p })
  const timeline = (readers: string[], limit: number) => () => get(`/feed/timeline?follower=${pick(readers)}&limit=${limit}`)
  const f = data.followCounts
  const span = (s: [number, number]): string => s[0] === s[1] ? String(s[0]) : `${s[0]}–${s[1]}`
  const list: Endpoint[] = []
  for (const limit of [20, 100]) {
    list.push({ key: `timeline-50-${limit}`, name: `timeline, follows ${span(f.f50)}, limit ${limit}`, next: timeline(r.f50, limit) })
    list.push({ key: `timeline-200-${limit}`, name: `timeline, follows ${span(f.f200)}, limit ${limit}`, next: timeline(r.f200, limit) })
    list.push({ key: `timeline-1000-${limit}`, name: `timeline, follows ${span(f.f1000)}, limit ${limit}`, next: timeline(r.f1000, limit) })
  }
  for (const limit of [20, 100]) {
    list.push({ key: `trending-24-${limit}`, name: `trending window=24, limit ${limit}`, next: () => get(`/feed/trending?window=24&limit=${limit}`) })
    list.push({ key: `trending-168-${limit}`, name: `trending window=168, limit ${limit}`, next: () => get(`/feed/trending?window=168&limit=${limit}`) })
  }
  list.push({ key: 'foryou', name: `foryou, limit 20 (readers with ${span(f.likerLikes)} likes, following 50–200)`, next: () => get(`/feed/foryou?pub=${pick(r.likers)}`) })
  const common = data.commonTags
  list.push({ key: 'hashtag-common', name: `hashtag, limit 20, top ${common.length} tags (${common.map((t) => t.posts.toLocaleString('en-US')).join(' / ')} posts)`, next: () => get(`/feed/hashtag/${pick(common).tag}`) })
  list.push({ key: 'hashtag-rare', name: `hashtag, limit 20, a rare tag (${data.rareTag.posts} posts)`, next: () => get(`/feed/hashtag/${data.rareTag.tag}`) })
  const heavy = data.heavyAuthors
  list.push({ key: 'author', name: `author, limit 20, top ${heavy.length} authors (${heavy.map((a) => a.posts.toLocaleString('en-US')).join(' / ')} posts)`, next: () => get(`/feed/author/${pick(heavy).pub}`) })
  // a walk: each client pages one reader's timeline by next_cursor, then starts again with another
  const walks: Array<{ reader: string, cursor: string | null, pages: number }> = []
  const walkOf = (client: number): { reader: string, cursor: string | null, pages: number } => {
    walks[client] ??= { reader: pick(r.f200), cursor: null, pages: 0 }
    return walks[client]
  }
  list.push({
    key: 'timeline-walk',
    name: `timeline walk by cursor, follows ${span(f.f200)}, ${cfg.walkPages} pages of 20 per reader`,
    next: (client) => {
      const w = walkOf(client)
      return get(`/feed/timeline?follower=${w.reader}${w.cursor === null ? '' : `&cursor=${w.cursor}`}`)
    },
    onOk: (body, client) => {
      const w = walkOf(client)
      const cursor = /"next_cursor":(?:"([^"]+)"|null)/.exec(body)?.[1] ?? null
      w.pages++
      if (cursor === null || w.pages >= cfg.walkPages) walks[client] = { reader: pick(r.f200), cursor: null, pages: 0 }
      else w.cursor = cursor
    }
  })
  return list
}

// ---------------------------------------------------------------------------------------
// view load (child process)

interface ViewJob { port: number, ratePerSec: number, addresses: string[], hotFile: string }

/**
 * Views from `addresses` (one keep-alive connection each), paced to `ratePerSec` in all. Each
 * address goes through the hot posts in its own order, weighted towards the hottest (a weighted
 * shuffle), so every (address, post) pair is new until the list is done: each view is counted.
 * Runs until its stdin closes.
 */
async function viewLoad (job: ViewJob): Promise<ViewLoadResult> {
  const hot = JSON.parse(readFileSync(job.hotFile, 'utf8')) as string[]
  let stop = false
  process.stdin.on('data', () => {})
  process.stdin.on('end', () => { stop = true })
  process.stdin.on('close', () => { stop = true })
  const intervalMs = job.addresses.length * 1000 / job.ratePerSec
  const result: ViewLoadResult = { addresses: job.addresses.length, seconds: 0, sent: 0, ok: 0, counted: 0, errors: {} }
  const t0 = performance.now()
  await Promise.all(job.addresses.map(async (address, k) => {
    // Efraimidis-Spirakis: key u^(1/w) with w = 1/(rank+1), best keys first
    const order = hot.map((id, rank) => ({ id, key: Math.pow(Math.random(), rank + 1) })).sort((a, b) => b.key - a.key).map((e) => e.id)
    const connection = new RawHttpConnection(job.port, '127.0.0.1', address)
    let due = t0 + k * intervalMs / job.addresses.length
    for (let i = 0; !stop; i++) {
      const wait = due - performance.now()
      if (wait > 1) await sleep(wait)
      due = Math.max(due + intervalMs, performance.now())
      result.sent++
      try {
        const res = await connection.request('POST', `/feed/post/${order[i % order.length]}/view`)
        if (res.status === 200) {
          result.ok++
          if (i < order.length) result.counted++
        } else result.errors[String(res.status)] = (result.errors[String(res.status)] ?? 0) + 1
      } catch {
        result.errors.network = (result.errors.network ?? 0) + 1
      }
    }
    connection.close()
  }))
  result.seconds = (performance.now() - t0) / 1000
  return result
}

// ---------------------------------------------------------------------------------------
// one size

async function measure (server: { port: number, pid: number }, gc: GcTrace, endpoint: Endpoint, concurrency: number, cfg: FeedBenchConfig, durationMs = cfg.phaseMs): Promise<ListingResult> {
  const base = { port: server.port, pid: server.pid, concurrency, next: endpoint.next, ...(endpoint.onOk !== undefined ? { onOk: endpoint.onOk } : {}) }
  await closedLoop({ ...base, durationMs: cfg.warmupMs })
  const main0 = processCpuSeconds(server.pid, server.pid) ?? NaN
  const t0 = performance.now()
  const r = await closedLoop({ ...base, durationMs })
  const mainCores = ((processCpuSeconds(server.pid, server.pid) ?? NaN) - main0) / ((performance.now() - t0) / 1000)
  // the GC lines of the phase's end may still be in the pipe
  await sleep(50)
  return { ...r, key: endpoint.key, endpoint: endpoint.name, gc: gc.between(t0, performance.now() - 50), mainCores }
}

function parseRebuilt (line: string): { time: number, posts: number, removed: number } | undefined {
  if (!line.includes('"feed indexes rebuilt"')) return undefined
  try {
    const j = JSON.parse(line.slice(line.indexOf('{'))) as { time: number, posts: number, removed: number }
    return { time: j.time, posts: j.posts, removed: j.removed }
  } catch {
    return undefined
  }
}

async function runSize (size: FeedDataSize, cfg: FeedBenchConfig, profile: boolean, log: (line: string) => void): Promise<SizeResult> {
  const home = mkdtempSync(path.join(os.tmpdir(), 'kith-bench-feed-'))
  let node: KithProcess | undefined
  let floorApp: BareApp | undefined
  let views: { done: Promise<ViewLoadResult>, stop: () => void } | undefined
  const tag = `feed ${size.posts.toLocaleString('en-US')}`
  try {
    await kithInit(home)
    log(`${tag}: pre-loading ${size.posts} posts by ${size.authors} authors, ${size.readers + size.heavyReaders} readers...`)
    const preload = await inChild<PreloadResult>(import.meta.url, '--preload', [home, JSON.stringify(size)], log)
    const synced = performance.now()
    await execFileP('sync', [])
    const syncSeconds = (performance.now() - synced) / 1000
    log(`${tag}: pre-load ${preload.seconds.total.toFixed(1)} s (state ${preload.seconds.state.toFixed(1)} s, bodies ${preload.seconds.bodies.toFixed(1)} s), sync ${syncSeconds.toFixed(1)} s; ` +
      `chain ${Math.round(preload.bytes.chain / 2 ** 20)} MiB, bodies ${Math.round(preload.bytes.feed / 2 ** 20)} MiB`)

    const gc = new GcTrace()
    let rebuilt: { time: number, posts: number, removed: number } | undefined
    const spawnedAt = Date.now()
    node = await startKith({
      home,
      env: { SVC_RATE_LIMIT_RPS: '0' },
      nodeArgs: ['--trace-gc'],
      logLevel: 'info',
      timeoutMs: cfg.startTimeoutMs,
      onOutput: (text) => gc.feed(text, (line) => { rebuilt ??= parseRebuilt(line) }),
      log: (l) => log(`${tag}: ${l}`)
    })
    const readyAt = performance.now()
    await sleep(100)
    if (rebuilt === undefined) throw new Error(`${tag}: the node did not log "feed indexes rebuilt"; its output:\n${node.output().slice(-3000)}`)
    if (rebuilt.removed !== 0 || rebuilt.posts !== preload.posts) throw new Error(`${tag}: the node indexed ${rebuilt.posts} posts and removed ${rebuilt.removed} bodies; the pre-load wrote ${preload.posts} and no orphans`)
    const start = {
      readyMs: node.startMs,
      rebuiltMs: rebuilt.time - spawnedAt,
      indexedPosts: rebuilt.posts,
      removedBodies: rebuilt.removed,
      rssAfterStart: rssOf(node.pid),
      heapAfterStartMb: gc.lastFullHeapMb(readyAt),
      heapPeakStartMb: gc.peakHeapMb(readyAt)
    }
    log(`${tag}: node up in ${Math.round(start.readyMs)} ms (indexes rebuilt at ${start.rebuiltMs} ms), RSS ${Math.round(start.rssAfterStart.total / 2 ** 20)} MiB (${Math.round(start.rssAfterStart.anon / 2 ** 20)} MiB private), heap ${Math.round(start.heapAfterStartMb)} MiB`)

    const hotFile = path.join(home, 'hot.json')
    writeFileSync(hotFile, JSON.stringify(preload.hotPosts))
    const addresses = Array.from({ length: Math.min(cfg.views.addresses, 253) }, (_, i) => `127.0.0.${2 + i}`)
    let stopViews = (): void => {}
    const done = inChild<ViewLoadResult>(import.meta.url, '--views', [JSON.stringify({ port: node.port, ratePerSec: cfg.views.ratePerSec, addresses, hotFile } satisfies ViewJob)], log,
      (child) => { stopViews = () => child.stdin?.end() })
    views = { done, stop: () => stopViews() }

    const listings: ListingResult[] = []
    for (const endpoint of endpoints(preload, cfg)) {
      for (const concurrency of cfg.concurrencies) {
        const r = await measure(node, gc, endpoint, concurrency, cfg)
        log(`${tag}: ${endpoint.name}, C=${concurrency}: ${Math.round(r.okPerSec)} req/s, p50 ${r.latencyMs.p50.toFixed(2)} ms, p99 ${r.latencyMs.p99.toFixed(2)} ms, max ${r.latencyMs.max.toFixed(1)} ms` +
          `${Object.keys(r.errors).length > 0 ? `, errors ${JSON.stringify(r.errors)} ${r.firstErrors[0] ?? ''}` : ''}`)
        listings.push(r)
      }
    }
    views.stop()
    const viewResult = await views.done
    views = undefined
    log(`${tag}: views: ${viewResult.ok} answered, ${viewResult.counted} counted in ${viewResult.seconds.toFixed(0)} s (${Math.round(viewResult.counted / viewResult.seconds)}/s)`)

    // the floor: the same clients against a bare Koa app answering a copy of one page
    const floor: ListingResult[] = []
    for (const limit of [20, 100]) {
      const page = await request(new http.Agent(), node.port, 'GET', `/feed/trending?window=24&limit=${limit}`)
      const pageFile = path.join(home, `page-${limit}.json`)
      writeFileSync(pageFile, page.body, 'latin1')
      floorApp = await startBareKoa({ warmupConcurrency: 16, pageFile })
      const app = floorApp
      for (const concurrency of cfg.concurrencies) {
        floor.push(await measure(app, new GcTrace(), { key: `floor-${limit}`, name: `floor: bare Koa answering a copy of a ${limit}-post page (${Buffer.byteLength(page.body).toLocaleString('en-US')} bytes)`, next: () => ({ method: 'GET', path: '/' }) }, concurrency, cfg))
      }
      await stopChild(app.child)
      floorApp = undefined
    }

    const rssAfterPhases = rssOf(node.pid)
    const heapAfterPhasesMb = gc.lastFullHeapMb()
    await node.stop()
    node = undefined

    let profiled: SizeResult['profile']
    if (profile && cfg.profile !== null) {
      const atOne = listings.filter((l) => l.concurrency === 1)
      const chosen = atOne.find((l) => l.key === cfg.profile?.listing) ?? atOne.reduce((a, b) => (b.latencyMs.p99 > a.latencyMs.p99 ? b : a))
      profiled = await profileRun(home, preload, chosen.endpoint, cfg, log)
    }
    return { preload, syncSeconds, start, listings, floor, views: viewResult, rssAfterPhases, heapAfterPhasesMb, ...(profiled !== undefined ? { profile: profiled } : {}) }
  } finally {
    views?.stop()
    await views?.done.catch(() => undefined)
    if (floorApp !== undefined) await stopChild(floorApp.child)
    if (node !== undefined) await node.stop()
    rmSync(home, { recursive: true, force: true })
  }
}

/** The node again, under `--cpu-prof`, driven by one listing; the profile without its start-up. */
async function profileRun (home: string, preload: PreloadResult, endpointName: string, cfg: FeedBenchConfig, log: (line: string) => void): Promise<SizeResult['profile']> {
  if (cfg.profile === null) return undefined
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kith-bench-feed-prof-'))
  let node: KithProcess | undefined
  try {
    const endpoint = endpoints(preload, cfg).find((e) => e.name === endpointName) as Endpoint
    log(`feed: profiling "${endpointName}" at C=${cfg.profile.concurrency} for ${cfg.profile.durationMs / 1000} s (node --cpu-prof)...`)
    node = await startKith({ home, env: { SVC_RATE_LIMIT_RPS: '0' }, nodeArgs: ['--cpu-prof', '--cpu-prof-dir', dir], timeoutMs: cfg.startTimeoutMs })
    const startMs = node.startMs
    const skipMs = startMs + cfg.warmupMs
    const run = await measure(node, new GcTrace(), endpoint, cfg.profile.concurrency, cfg, cfg.profile.durationMs)
    await node.stop()
    node = undefined
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))
    if (file === undefined) return undefined
    const summary = summariseProfile(path.join(dir, file), {
      top: 25, skipMs, inclusive: ['forYou', 'trending', 'timeline', 'byTag', 'byAuthor', 'ranked', 'present', 'followed', 'exclude', 'localMeta', 'stringify', 'respond']
    })
    // the start-up alone: what the time to ready goes to
    const startup = summariseProfile(path.join(dir, file), { top: 15, untilMs: startMs, inclusive: ['open', 'add', 'localMeta', 'allViews', 'allMeta', 'scanState', 'insert'] })
    return { endpoint: endpointName, summary, run, startup, startMs }
  } finally {
    if (node !== undefined) await node.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------------------------------
// the benchmark

export async function runFeedBench (config: Partial<FeedBenchConfig> = {}, log: (line: string) => void = (l) => console.error(l)): Promise<FeedBenchResult> {
  const cfg: FeedBenchConfig = { ...DEFAULT_FEED_CONFIG, ...config }
  const started = Date.now()
  const machine = machineInfo()
  const sizes: SizeResult[] = []
  const largest = Math.max(...cfg.sizes.map((s) => s.posts))
  for (const size of cfg.sizes) sizes.push(await runSize(size, cfg, size.posts === largest, log))
  const scrub = cfg.scrub === null ? undefined : await runScrubBench(cfg.scrub, log)
  return { config: cfg, machine, sizes, ...(scrub !== undefined ? { scrub } : {}), elapsedMs: Date.now() - started }
}

// ---------------------------------------------------------------------------------------
// formatting

const fmt = (x: number, digits = 0): string => Number.isFinite(x) ? x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a'
const mib = (bytes: number): string => fmt(bytes / 2 ** 20)
const errs = (e: Record<string, number>): string => Object.keys(e).length === 0 ? '0' : Object.entries(e).map(([k, v]) => `${v}×${k}`).join(', ')

function listingRow (posts: string, l: ListingResult): string {
  const gc = l.gc.count === 0 ? '0' : `${l.gc.count} (${l.gc.fullCount}), ${fmt(l.gc.maxPauseMs, 1)} ${l.gc.longestKind.split(' ')[0]}`
  return `| ${l.endpoint} | ${posts} | ${l.concurrency} | ${fmt(l.latencyMs.p50, 2)} | ${fmt(l.latencyMs.p90, 2)} | **${fmt(l.latencyMs.p99, 2)}** | ${fmt(l.latencyMs.max, 1)} | ` +
    `${fmt(l.okPerSec)} | ${fmt(l.meanBytes)} | ${l.mainCores.toFixed(2)} / ${l.serverCores.toFixed(2)} | ${gc} | ${errs(l.errors)} |`
}

const loadSpan = (rows: ListingResult[]): string => {
  const loads = rows.flatMap((l) => l.loadavg)
  return loads.length === 0 ? 'n/a' : `${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`
}

const mibs = (r: Rss): string => `${mib(r.total)} MiB (${mib(r.anon)} private, ${mib(r.file)} mapped files)`

export function formatFeedBench (r: FeedBenchResult): string {
  const c = r.config
  const m = r.machine
  const lines: string[] = [
    `Machine: ${m.nproc} cores, ${m.cpuModel}, ${m.memTotal} RAM, ${m.kernel}, node ${m.node}; ${m.date}; load average at start ${m.loadavg}.`,
    ''
  ]
  for (const s of r.sizes) {
    const p = s.preload
    const z = p.size
    lines.push(
      `**${fmt(p.posts)} posts** by ${fmt(z.authors)} authors (posts per author Zipf 0.8: the top five have ${p.heavyAuthors.map((a) => fmt(a.posts)).join(' / ')} posts and ` +
        `${p.heavyAuthors.map((a) => fmt(a.followers)).join(' / ')} followers), 80% created in the last 48 hours and 20% in the 5 days before; ` +
        `likes Pareto (${fmt(p.likesAtLeast[0])} posts with ≥ 1, ${fmt(p.likesAtLeast[2])} with ≥ 100, max ${fmt(p.likesMax)}); ${fmt(p.replies)} replies; ` +
        `${fmt(z.readers + z.heavyReaders)} readers following ${fmt(p.followPairs)} authors in all (${fmt(z.readers)} following 50–200, ${fmt(z.heavyReaders)} following ~1,000), ` +
        `${fmt(z.likers)} of them with ${fmt(p.likeKeys)} \`like:\` keys; ${fmt(p.hostedBodies)} bodies hosted here (${fmt(p.withAttachment)} with a 0.5–1.5 KB attachment), ` +
        `${fmt(p.distinctTags)} distinct tags; ${fmt(p.viewRows)} view counts. ` +
        `Pre-load (state entries written with the chain store's lmdb layout in 100,000-entry transactions, fsync off; bodies with FeedBodyStore.put): ` +
        `${fmt(p.stateEntries)} state entries in ${fmt(p.seconds.state, 1)} s, bodies and views in ${fmt(p.seconds.bodies, 1)} s, a compacting copy of the chain store ${fmt(p.seconds.compact, 1)} s ` +
        `(the freelists had grown to ${fmt(p.freelistPagesBefore[0])} pages in the chain store, ${fmt(p.freelistPagesBefore[1])} in the body store, which is not compacted), ${fmt(p.seconds.total, 1)} s in all, then \`sync\` ${fmt(s.syncSeconds, 1)} s; ` +
        `chain store ${mib(p.bytes.chain)} MiB, body store ${mib(p.bytes.feed)} MiB.`,
      '',
      `Start: **${fmt(s.start.readyMs / 1000, 1)} s to ready** (the feed indexes were rebuilt ${fmt(s.start.rebuiltMs / 1000, 1)} s after spawn: ${fmt(s.start.indexedPosts)} posts, ${s.start.removedBodies} bodies dropped as orphans); ` +
        `**RSS ${mibs(s.start.rssAfterStart)}** once up, V8 heap ${fmt(s.start.heapAfterStartMb)} MiB in use after the last full GC (peak ${fmt(s.start.heapPeakStartMb)} MiB during the rebuild); ` +
        `after the phases RSS ${mibs(s.rssAfterPhases)}, heap ${fmt(s.heapAfterPhasesMb)} MiB. ` +
        `1-minute load average during the phases ${loadSpan(s.listings)} (on ${m.nproc} cores; above ~2, other processes were taking CPU from the node and its clients). ` +
        `Views during the phases: ${fmt(s.views.counted)} counted of ${fmt(s.views.ok)} answered in ${fmt(s.views.seconds)} s (**${fmt(s.views.counted / s.views.seconds)} counted views/s** from ${s.views.addresses} addresses; errors ${errs(s.views.errors)}).`,
      ''
    )
  }
  lines.push(
    '| listing | posts | C | p50 ms | p90 ms | p99 ms | max ms | req/s | bytes | node cores: main / all | node GCs (full), longest pause ms | errors |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|'
  )
  const keys = [...new Set(r.sizes.flatMap((s) => s.listings.map((l) => l.key)))]
  for (const key of keys) {
    for (const s of r.sizes) for (const l of s.listings) if (l.key === key) lines.push(listingRow(fmt(s.preload.posts), l))
  }
  for (const s of r.sizes) for (const l of s.floor) lines.push(listingRow(fmt(s.preload.posts), l))
  lines.push('',
    `- closed loop over raw-socket keep-alive connections (bench/lib/raw-http.ts), ${c.warmupMs / 1000} s warm-up then ${c.phaseMs / 1000} s per row; each request picks its reader ` +
      '(or tag, or author) at random from the group named in the row; the cursor walk pages one reader\'s timeline by `next_cursor`, per client;',
    `- meanwhile ${c.views.addresses} connections from 127.0.0.2… POST views at ${fmt(c.views.ratePerSec)}/s in all on the 5,000 best posts of the last 24 hours (each pair new, so each view is counted and moves a post in its hour bucket);`,
    '- bytes = mean answer body; node cores = CPU seconds / wall seconds of the node\'s main thread and of all its threads (/proc); GCs from the node\'s `--trace-gc` during the row, with the kind of the longest pause;',
    '- the floor rows: a bare Koa app in its own process answering a copy of a trending page the node served, to the same clients: what this machine gives for a page of that size.')
  for (const s of r.sizes) {
    if (s.profile === undefined) continue
    lines.push('', `Profile of the node at ${fmt(s.preload.posts)} posts, "${s.profile.endpoint}" at C=${s.profile.run.concurrency} ` +
      `(${fmt(s.profile.run.okPerSec)} req/s, p99 ${fmt(s.profile.run.latencyMs.p99, 2)} ms under the profiler; start-up left out):`, '', formatProfile(s.profile.summary),
    '', `The same node's start-up (the first ${fmt(s.profile.startMs / 1000, 1)} s, to ready, under the profiler):`, '', formatProfile(s.profile.startup))
  }
  if (r.scrub !== undefined) lines.push('', '### Event loop while photos are published', '', formatScrubBench(r.scrub))
  lines.push('', `Feed benchmark wall time: ${fmt(r.elapsedMs / 1000, 1)} s`)
  return lines.join('\n')
}

// ---------------------------------------------------------------------------------------
// entry points

const isChild = runChildMode(import.meta.url, {
  '--preload': async ([home, size]) => await preloadFeed(home, JSON.parse(size) as FeedDataSize, (l) => console.error(l)),
  '--views': async ([job]) => await viewLoad(JSON.parse(job) as ViewJob)
})
if (!isChild && process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const config: Partial<FeedBenchConfig> = process.argv.includes('--quick') ? { ...QUICK_FEED_CONFIG } : {}
  if (process.argv.includes('--no-profile')) config.profile = null
  const listing = process.argv.indexOf('--profile-listing')
  if (listing >= 0 && config.profile !== null) config.profile = { ...(config.profile ?? DEFAULT_FEED_CONFIG.profile ?? { durationMs: 10_000, concurrency: 16 }), listing: process.argv[listing + 1] }
  if (process.argv.includes('--no-scrub')) config.scrub = null
  const sizes = process.argv.indexOf('--sizes')
  if (sizes >= 0) {
    const wanted = (process.argv[sizes + 1] ?? '').split(',').map(Number)
    config.sizes = wanted.map((n) => n <= SMALL.posts ? { ...SMALL, posts: n } : { ...LARGE, posts: n })
  }
  runFeedBench(config).then((r) => {
    console.log(formatFeedBench(r))
    if (process.argv.includes('--json')) console.error(JSON.stringify(r))
  }, (err: unknown) => {
    console.error(err)
    process.exitCode = 1
  })
}
