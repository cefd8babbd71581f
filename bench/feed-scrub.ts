/**
 * The feed benchmark, part 2: the node's event loop while photos are published. A 12-megapixel
 * JPEG (made here: smooth gradients plus noise, so it compresses like a photo) is published by
 * several concurrent clients through the real `POST /feed/publish` (signed by `publishRequest`,
 * a new post id each time), and a separate process samples `GET /api/netstats` on a fixed
 * schedule: its latency distribution with and without the publishing, in the same run.
 *
 * The scrub itself runs in the node's image worker processes (src/media). The decode of each
 * ~6 MB body (`JSON.parse`, the base64 decode and the canonical re-encode check, sha256 of the raw
 * bytes, the signature) runs on a decode worker thread (src/feed/publish-decoder.ts; on the main
 * thread before 2026-11-26); those steps are timed here in-process too. The main thread still
 * reads the body, hands it over, copies the attachment to an image worker and stores the result:
 * its CPU per publish is measured from /proc.
 *
 * Run alone: node dist/bench/feed-scrub.js [--quick]
 */
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { serialize } from 'node:v8'
import sharp from 'sharp'
import { accountFrom, generateKeyPair, publishRequest, type Account } from '../src/client/index.js'
import { PublishRequestSchema } from '../src/feed/index.js'
import { scrubImage } from '../src/media/index.js'
import { percentiles, openLoop, type OpenLoopResult, type Percentiles } from './lib/load.js'
import { EldReader, eldNodeArgs, type EventLoopDelay } from './lib/eld-probe.js'
import { GcTrace, type GcSummary } from './lib/gc-trace.js'
import { inChild, kithInit, runChildMode, startKith, type KithProcess } from './lib/processes.js'
import { processCpuSeconds, selfCpuSeconds } from './lib/proc.js'
import { RawHttpConnection } from './lib/raw-http.js'

export interface ScrubBenchConfig {
  width: number
  height: number
  /** JPEG quality of the uploaded photo */
  quality: number
  /** first noise amplitude (± levels); lowered until the scrubbed photo fits `maxScrubbedBytes` */
  noise: number
  maxScrubbedBytes: number
  publishers: number
  /** netstats requests per second, on a fixed schedule */
  netstatsRate: number
  baselineMs: number
  durationMs: number
  /** publishing with nothing else, for the main thread's CPU per publish (after as long idle) */
  aloneMs: number
}

export const DEFAULT_SCRUB_CONFIG: ScrubBenchConfig = {
  width: 4000,
  height: 3000,
  quality: 90,
  noise: 22,
  maxScrubbedBytes: 250_000,
  publishers: 4,
  netstatsRate: 200,
  baselineMs: 20_000,
  durationMs: 60_000,
  aloneMs: 20_000
}

export const QUICK_SCRUB_CONFIG: Partial<ScrubBenchConfig> = { baselineMs: 6_000, durationMs: 15_000, aloneMs: 8_000 }

export interface Photo {
  jpeg: Buffer
  width: number
  height: number
  noise: number
  scrubbedBytes: number
  scrubbedWidth: number
  scrubbedHeight: number
  /** in-process scrub of this photo (sharp, as the workers run it), ms */
  scrubMs: number
}

export interface MainThreadCosts {
  bodyBytes: number
  /** median ms of each step of a publish's decode (a decode worker's, not the main thread's, since 2026-11-26), in this process */
  toStringMs: number
  jsonParseMs: number
  schemaMs: number
  base64DecodeMs: number
  base64CheckMs: number
  sha256Ms: number
  /** the structured-clone copy the image worker's IPC makes (v8.serialize) */
  serializeMs: number
  totalMs: number
}

export interface PublishResult {
  publishers: number
  durationMs: number
  ok: number
  okPerSec: number
  latencyMs: Percentiles
  errors: Record<string, number>
  firstErrors: string[]
  /** node CPU seconds per wall second: all threads (not the image workers, separate processes), and the main thread */
  nodeCores: number
  nodeMainCores: number
  clientCores: number
}

export interface ScrubBenchResult {
  config: ScrubBenchConfig
  photo: Photo
  costs: MainThreadCosts
  nodeStartMs: number
  baseline: OpenLoopResult & { nodeMainCores: number }
  during: OpenLoopResult
  /** the node's event-loop delay (measured inside it) and its GC pauses, in each phase */
  eld: { baseline: EventLoopDelay, during: EventLoopDelay }
  gc: { baseline: GcSummary, during: GcSummary }
  publish: PublishResult
  /** the same publishing with no netstats sampler, and the node's main thread idle for as long before it */
  alone: PublishResult & { idleMainCores: number }
  /** --http-workers of the node (KITH_BENCH_HTTP_WORKERS; 0: the main thread serves HTTP) */
  httpWorkers: number
  /** 1-minute load average at the start and the end */
  loadavg: [number, number]
  elapsedMs: number
}

// ---------------------------------------------------------------------------------------
// the photo

/**
 * A deterministic 12 MP RGB picture: smooth colour gradients, a texture at the scale of 8 pixels
 * (detail that survives the scrub's downscale, as a real photo's does), and ± `noise` levels of
 * pixel grain (which the downscale averages away, as a sensor's is).
 */
function rawPhoto (width: number, height: number, noise: number): Buffer {
  const raw = Buffer.alloc(width * height * 3)
  const cell = 8
  const texW = Math.ceil(width / cell)
  let texSeed = 0x9e3779b9
  const texture = Float32Array.from({ length: texW * Math.ceil(height / cell) }, () => {
    texSeed ^= texSeed << 13; texSeed ^= texSeed >>> 17; texSeed ^= texSeed << 5
    return ((texSeed & 0xffff) / 0xffff - 0.5) * 2 * TEXTURE_LEVELS
  })
  const colR = Float32Array.from({ length: width }, (_, x) => 90 * Math.sin(x / 610) + 30 * Math.sin(x / 97))
  const colG = Float32Array.from({ length: width }, (_, x) => 70 * Math.cos(x / 830) + 20 * Math.sin(x / 53))
  const colB = Float32Array.from({ length: width }, (_, x) => 60 * Math.sin(x / 450 + 1))
  let seed = 0x12345678
  for (let y = 0; y < height; y++) {
    const rowR = 128 + 40 * Math.cos(y / 520)
    const rowG = 120 + 60 * Math.sin(y / 700)
    const rowB = 110 + 50 * Math.cos(y / 300) + 20 * Math.sin(y / 41)
    const texRow = Math.floor(y / cell) * texW
    for (let x = 0; x < width; x++) {
      // xorshift32 grain
      seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5
      const grain = ((seed & 0xff) / 255 - 0.5) * 2 * noise + texture[texRow + Math.floor(x / cell)]
      const o = (y * width + x) * 3
      raw[o] = clamp(rowR + colR[x] + grain)
      raw[o + 1] = clamp(rowG + colG[x] + grain * 0.8)
      raw[o + 2] = clamp(rowB + colB[x] + grain * 1.2)
    }
  }
  return raw
}

/** ± levels of the 8-pixel texture */
const TEXTURE_LEVELS = 24

const clamp = (v: number): number => (v < 0 ? 0 : v > 255 ? 255 : v)

/**
 * The photo the clients publish: encoded at `quality`, then scrubbed here as the node will
 * (src/media scrubImage); the noise is lowered until the scrubbed JPEG fits `maxScrubbedBytes`,
 * so the post fits MaxPostSize (262,144 bytes).
 */
export async function makePhoto (cfg: ScrubBenchConfig): Promise<Photo> {
  let noise = cfg.noise
  for (;;) {
    const jpeg = await sharp(rawPhoto(cfg.width, cfg.height, noise), { raw: { width: cfg.width, height: cfg.height, channels: 3 } }).jpeg({ quality: cfg.quality }).toBuffer()
    const t0 = performance.now()
    const scrubbed = await scrubImage(jpeg)
    const scrubMs = performance.now() - t0
    if (scrubbed.bytes.length <= cfg.maxScrubbedBytes || noise < 1) {
      return { jpeg, width: cfg.width, height: cfg.height, noise, scrubbedBytes: scrubbed.bytes.length, scrubbedWidth: scrubbed.width, scrubbedHeight: scrubbed.height, scrubMs }
    }
    noise *= 0.7
  }
}

// ---------------------------------------------------------------------------------------
// main-thread costs

function medianMs (runs: number, f: () => unknown): number {
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now()
    f()
    times.push(performance.now() - t0)
  }
  return percentiles(times).p50
}

/** The steps of a publish's decode, timed in this process (median of 7 each). */
export function mainThreadCosts (photo: Photo): MainThreadCosts {
  const req = publishRequest(accountFrom(generateKeyPair()), { content: CAPTION, attachment: photo.jpeg, attachmentMime: 'image/jpeg' })
  const body = Buffer.from(JSON.stringify(req), 'utf8')
  const text = body.toString('utf8')
  const b64 = req.attachment_b64 ?? ''
  const bytes = Buffer.from(b64, 'base64')
  const costs = {
    bodyBytes: body.length,
    toStringMs: medianMs(7, () => body.toString('utf8')),
    jsonParseMs: medianMs(7, () => JSON.parse(text)),
    schemaMs: medianMs(7, () => PublishRequestSchema.parse(req)),
    base64DecodeMs: medianMs(7, () => Buffer.from(b64, 'base64')),
    base64CheckMs: medianMs(7, () => bytes.toString('base64') === b64),
    sha256Ms: medianMs(7, () => createHash('sha256').update(Buffer.from(CAPTION, 'utf8')).update(bytes).digest('hex')),
    serializeMs: medianMs(7, () => serialize({ id: 1, bytes, maxInputPixels: 50_000_000 }))
  }
  return { ...costs, totalMs: costs.toStringMs + costs.jsonParseMs + costs.schemaMs + costs.base64DecodeMs + costs.base64CheckMs + costs.sha256Ms + costs.serializeMs }
}

// ---------------------------------------------------------------------------------------
// load

const CAPTION = 'Morning light over the river #photo #bench'

/**
 * Genesis funds of each publisher: publish needs the fees of every uncommitted post it holds
 * (none are committed here), about 0.1 T per scrubbed photo.
 */
const PUBLISHER_FUNDS_UT = 10 ** 12
/** The per-author and per-address bounds on uncommitted posts, off: the load here is publishing only. */
const NO_PENDING_BOUNDS = { SVC_FEED_PENDING_PER_AUTHOR: '0', SVC_FEED_PENDING_MB_PER_AUTHOR: '0', SVC_FEED_PENDING_PER_IP: '0', SVC_FEED_PENDING_MB_PER_IP: '0' }

/** One client per author, each publishing the photo back to back (a new post id and signature each time). */
async function publishLoad (port: number, pid: number, photo: Photo, authors: readonly Account[], durationMs: number): Promise<PublishResult> {
  const publishers = authors.length
  const latencies: number[] = []
  const errors: Record<string, number> = {}
  const firstErrors: string[] = []
  let ok = 0
  const node0 = processCpuSeconds(pid) ?? NaN
  const main0 = processCpuSeconds(pid, pid) ?? NaN
  const self0 = selfCpuSeconds()
  const t0 = performance.now()
  const deadline = t0 + durationMs
  const client = async (author: Account): Promise<void> => {
    const connection = new RawHttpConnection(port)
    while (performance.now() < deadline) {
      const body = Buffer.from(JSON.stringify(publishRequest(author, { content: CAPTION, attachment: photo.jpeg, attachmentMime: 'image/jpeg' })), 'utf8')
      const sent = performance.now()
      try {
        const res = await connection.request('POST', '/feed/publish', body)
        latencies.push(performance.now() - sent)
        if (res.status === 200) ok++
        else {
          errors[String(res.status)] = (errors[String(res.status)] ?? 0) + 1
          if (firstErrors.length < 5) firstErrors.push(`${res.status} ${res.body.toString('utf8', 0, 200)}`)
        }
      } catch (err) {
        errors.network = (errors.network ?? 0) + 1
        if (firstErrors.length < 5) firstErrors.push(String(err))
      }
    }
    connection.close()
  }
  await Promise.all(authors.map(client))
  const wall = (performance.now() - t0) / 1000
  return {
    publishers,
    durationMs,
    ok,
    okPerSec: ok / wall,
    latencyMs: percentiles(latencies),
    errors,
    firstErrors,
    nodeCores: ((processCpuSeconds(pid) ?? NaN) - node0) / wall,
    nodeMainCores: ((processCpuSeconds(pid, pid) ?? NaN) - main0) / wall,
    clientCores: (selfCpuSeconds() - self0) / wall
  }
}

interface NetstatsJob { port: number, pid: number, rate: number, durationMs: number }

/** `GET /api/netstats` on a fixed schedule from a fresh process: this one's publish clients (and their GC) must not delay it. */
async function netstatsInChild (job: NetstatsJob): Promise<OpenLoopResult> {
  return await inChild(import.meta.url, '--netstats', [JSON.stringify(job)])
}

// ---------------------------------------------------------------------------------------
// the benchmark

export async function runScrubBench (config: Partial<ScrubBenchConfig> = {}, log: (line: string) => void = (l) => console.error(l)): Promise<ScrubBenchResult> {
  const cfg: ScrubBenchConfig = { ...DEFAULT_SCRUB_CONFIG, ...config }
  const started = Date.now()
  const load0 = os.loadavg()[0]
  log(`feed scrub: making a ${cfg.width}×${cfg.height} photo...`)
  const photo = await makePhoto(cfg)
  log(`feed scrub: photo ${photo.jpeg.length} bytes (noise ±${photo.noise.toFixed(1)}), scrubbed ${photo.scrubbedBytes} bytes ${photo.scrubbedWidth}×${photo.scrubbedHeight} in ${Math.round(photo.scrubMs)} ms here`)
  const costs = mainThreadCosts(photo)
  const home = mkdtempSync(path.join(os.tmpdir(), 'kith-bench-scrub-'))
  let node: KithProcess | undefined
  try {
    const authors = Array.from({ length: cfg.publishers }, () => accountFrom(generateKeyPair()))
    await kithInit(home, authors.flatMap((a) => ['--alloc', `${a.pub}=${PUBLISHER_FUNDS_UT}`]))
    const eldReader = new EldReader()
    const gcTrace = new GcTrace()
    node = await startKith({
      home,
      env: { SVC_RATE_LIMIT_RPS: '0', ...NO_PENDING_BOUNDS },
      nodeArgs: ['--trace-gc', ...eldNodeArgs()],
      onOutput: (text) => { gcTrace.feed(text); eldReader.feed(text) },
      log: (l) => log(`feed scrub: ${l}`)
    })
    const { port, pid } = node
    // one publish first: the image workers come up and the paths are warm
    await publishLoad(port, pid, photo, authors.slice(0, 1), 2000)
    log(`feed scrub: netstats at ${cfg.netstatsRate}/s, no publishing, ${cfg.baselineMs / 1000} s...`)
    const main0 = processCpuSeconds(pid, pid) ?? NaN
    await eldReader.read(pid)
    const b0 = performance.now()
    const baseline = await netstatsInChild({ port, pid, rate: cfg.netstatsRate, durationMs: cfg.baselineMs })
    const b1 = performance.now()
    const baselineMain = ((processCpuSeconds(pid, pid) ?? NaN) - main0) / ((b1 - b0) / 1000)
    const eldBaseline = await eldReader.read(pid)
    log(`feed scrub: baseline netstats p50 ${baseline.latencyMs.p50.toFixed(2)} ms, p99 ${baseline.latencyMs.p99.toFixed(2)} ms, max ${baseline.latencyMs.max.toFixed(1)} ms`)
    log(`feed scrub: ${cfg.publishers} publishers and netstats at ${cfg.netstatsRate}/s, ${cfg.durationMs / 1000} s...`)
    const d0 = performance.now()
    const [during, publish] = await Promise.all([
      netstatsInChild({ port, pid, rate: cfg.netstatsRate, durationMs: cfg.durationMs }),
      publishLoad(port, pid, photo, authors, cfg.durationMs)
    ])
    const d1 = performance.now()
    const eldDuring = await eldReader.read(pid)
    log(`feed scrub: idle, then ${cfg.publishers} publishers alone, ${cfg.aloneMs / 1000} s each...`)
    const idle0 = processCpuSeconds(pid, pid) ?? NaN
    const i0 = performance.now()
    await new Promise((resolve) => setTimeout(resolve, cfg.aloneMs))
    const idleMainCores = ((processCpuSeconds(pid, pid) ?? NaN) - idle0) / ((performance.now() - i0) / 1000)
    const alone = { ...await publishLoad(port, pid, photo, authors, cfg.aloneMs), idleMainCores }
    log(`feed scrub: during publishing netstats p50 ${during.latencyMs.p50.toFixed(2)} ms, p99 ${during.latencyMs.p99.toFixed(2)} ms, max ${during.latencyMs.max.toFixed(1)} ms; ` +
      `${publish.okPerSec.toFixed(2)} publishes/s, p50 ${Math.round(publish.latencyMs.p50)} ms`)
    const nodeStartMs = node.startMs
    await node.stop()
    node = undefined
    return {
      config: cfg,
      photo,
      costs,
      nodeStartMs,
      baseline: { ...baseline, nodeMainCores: baselineMain },
      during,
      eld: { baseline: eldBaseline, during: eldDuring },
      gc: { baseline: gcTrace.between(b0, b1), during: gcTrace.between(d0, d1) },
      publish,
      alone,
      httpWorkers: Number(process.env.KITH_BENCH_HTTP_WORKERS ?? 0),
      loadavg: [load0, os.loadavg()[0]],
      elapsedMs: Date.now() - started
    }
  } finally {
    if (node !== undefined) await node.stop()
    rmSync(home, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------------------------------
// formatting

const fmt = (x: number, digits = 0): string => Number.isFinite(x) ? x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a'

export function formatScrubBench (r: ScrubBenchResult): string {
  const c = r.config
  const p = r.publish
  const row = (name: string, o: OpenLoopResult, eld: EventLoopDelay, gc: GcSummary): string =>
    `| ${name} | ${fmt(o.offeredPerSec)} | ${o.durationMs / 1000} | ${fmt(o.ok)} | ${fmt(o.latencyMs.p50, 2)} | **${fmt(o.latencyMs.p99, 2)}** | ${fmt(o.latencyMs.p999, 1)} | ${fmt(o.latencyMs.max, 1)} | ` +
    `${fmt(o.sendLateMs.p99, 1)} / ${fmt(o.sendLateMs.max, 1)} | ${fmt(o.fromSendMs.p99, 1)} | ${fmt(eld.p50Ms, 1)} / **${fmt(eld.p99Ms, 1)}** / ${fmt(eld.maxMs, 1)} | ${gc.count} (${gc.fullCount}), ${fmt(gc.maxPauseMs, 1)} | ${o.serverCores.toFixed(2)} | ${errs(o.errors)} |`
  const k = r.costs
  return [
    `Photo: ${c.width}×${c.height} JPEG q${c.quality}, ${fmt(r.photo.jpeg.length)} bytes (gradients plus ±${r.photo.noise.toFixed(1)} levels of grain); ` +
      `scrubbed to ${r.photo.scrubbedWidth}×${r.photo.scrubbedHeight}, ${fmt(r.photo.scrubbedBytes)} bytes (${fmt(r.photo.scrubMs)} ms in this process with sharp); ` +
      `a publish request body is ${fmt(k.bodyBytes)} bytes. Node: \`--http-workers ${r.httpWorkers}\`, fresh \`kith init\` home with the publishers funded at genesis, SVC_RATE_LIMIT_RPS=0, the SVC_FEED_PENDING_* bounds off, default media settings (2 image workers, nice 10). ` +
      `1-minute load average ${r.loadavg.map((x) => x.toFixed(1)).join(' → ')} (start → end).`,
    '',
    '| `GET /api/netstats`, fixed schedule | offered /s | s | answered | p50 ms | p99 ms | p99.9 ms | max ms | sampler late p99 / max ms | p99 from the send ms | node event-loop delay p50 / p99 / max ms | node GCs (full), longest pause ms | node cores | errors |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|',
    row('no publishing (baseline)', r.baseline, r.eld.baseline, r.gc.baseline),
    row(`${p.publishers} clients publishing the photo back to back`, r.during, r.eld.during, r.gc.during),
    '',
    'Latency runs from each request\'s scheduled time (one every 5 ms, answered or not), so a stall counts for every request it holds up. ' +
      '"sampler late" is how late the sampling process itself sent (its own timer and its share of the 2 cores): a part of the latency that is not the node. ' +
      'The node\'s event-loop delay is measured inside the node (perf_hooks.monitorEventLoopDelay loaded with `--import`, bench/lib/eld-probe.ts); GCs from its `--trace-gc`.',
    '',
    `Publishing: **${fmt(p.okPerSec, 2)} publishes/s** (${fmt(p.ok)} in ${p.durationMs / 1000} s, ${p.publishers} clients), latency p50 ${fmt(p.latencyMs.p50)} ms, p90 ${fmt(p.latencyMs.p90)} ms, ` +
      `p99 ${fmt(p.latencyMs.p99)} ms, max ${fmt(p.latencyMs.max)} ms; errors ${errs(p.errors)}. Node CPU (its own threads, not the image workers): ${p.nodeCores.toFixed(2)} cores, ` +
      `main thread ${p.nodeMainCores.toFixed(2)} (${r.baseline.nodeMainCores.toFixed(2)} while only netstats ran); client ${p.clientCores.toFixed(2)} cores.`,
    '',
    `Publishing alone (no netstats): ${fmt(r.alone.okPerSec, 2)} publishes/s, node ${r.alone.nodeCores.toFixed(2)} cores, main thread ${r.alone.nodeMainCores.toFixed(3)} cores ` +
      `(${r.alone.idleMainCores.toFixed(3)} idle) = **${fmt((r.alone.nodeMainCores - r.alone.idleMainCores) / r.alone.okPerSec * 1000, 2)} ms of main thread per publish**; errors ${errs(r.alone.errors)}.`,
    '',
    `Decode steps of one publish (on a decode worker thread; on the main thread before 2026-11-26), timed in this process (median of 7): body to string ${fmt(k.toStringMs, 1)} ms, JSON.parse ${fmt(k.jsonParseMs, 1)} ms, ` +
      `schema ${fmt(k.schemaMs, 2)} ms, base64 decode ${fmt(k.base64DecodeMs, 1)} ms, canonical re-encode check ${fmt(k.base64CheckMs, 1)} ms, sha256 of the raw bytes ${fmt(k.sha256Ms, 1)} ms, ` +
      `structured-clone copy for the worker ${fmt(k.serializeMs, 1)} ms: **${fmt(k.totalMs, 1)} ms** in all, the longest single block being JSON.parse.`,
    ...(p.firstErrors.length > 0 ? ['', 'First publish errors:', ...p.firstErrors.map((e) => `    ${e}`)] : []),
    '',
    `Scrub benchmark wall time: ${fmt(r.elapsedMs / 1000, 1)} s`
  ].join('\n')
}

const errs = (e: Record<string, number>): string => Object.keys(e).length === 0 ? '0' : Object.entries(e).map(([k, v]) => `${v}×${k}`).join(', ')

const isChild = runChildMode(import.meta.url, {
  '--netstats': async ([job]) => {
    const j = JSON.parse(job) as NetstatsJob
    return await openLoop({ ...j, path: () => '/api/netstats' })
  }
})
if (!isChild && process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runScrubBench(process.argv.includes('--quick') ? QUICK_SCRUB_CONFIG : {}).then((r) => console.log(formatScrubBench(r)), (err: unknown) => {
    console.error(err)
    process.exitCode = 1
  })
}
