/**
 * Media scrubbing benchmark: the time to scrub one 12-megapixel JPEG (4000×3000, q92, gradient
 * plus noise so it does not compress trivially, EXIF with Orientation 6) to the spec's 1080 px
 * JPEG at quality 75, beside libvips' own command-line tool on the same file in the same run.
 *
 * - MediaScrubber end to end (magic check, IPC to a worker process and back), one image at a time,
 *   with 1 and with 2 libvips threads per worker (sharpConcurrency);
 * - sharp in this process with the same pipeline (src/media/image.ts), no IPC;
 * - `vipsthumbnail in.jpg --size 1080x1080 -o out.jpg[Q=75,strip]`: one invocation per image,
 *   process start included; and over 10 copies in one invocation, wall time / 10, the per-image
 *   cost (Debian libvips-tools; skipped with a hint when missing);
 * - throughput: 4 images scrubbed at once through MediaScrubber (2 workers), rounds back to back,
 *   with 1 and 2 libvips threads per worker, and this process's event-loop delay meanwhile (what
 *   the node's HTTP would feel).
 *
 * Each round times every contender once, back to back (the VM's speed drifts by minutes); medians
 * and p90 over `runs` rounds after 2 warm-up rounds. Run alone: node dist/bench/media.js [--quick]
 */
import { execFile, spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { pino } from 'pino'
import sharp from 'sharp'
import { MediaScrubber, readMediaEnv, scrubImage } from '../src/media/index.js'
import { machineInfo } from './lib/proc.js'

const execFileP = promisify(execFile)

export interface MediaBenchConfig {
  /** timed runs per measurement */
  runs: number
  /** rounds of 4 concurrent scrubs */
  concurrentRounds: number
}

export const DEFAULT_MEDIA_CONFIG: MediaBenchConfig = { runs: 15, concurrentRounds: 8 }
export const QUICK_MEDIA_CONFIG: Partial<MediaBenchConfig> = { runs: 5, concurrentRounds: 3 }

export interface Timing {
  medianMs: number
  p90Ms: number
  minMs: number
  runs: number
}

export interface MediaBenchResult {
  machine: ReturnType<typeof machineInfo>
  sharpVersion: string
  libvipsVersion: string
  vipsthumbnailVersion: string | undefined
  input: { width: number, height: number, bytes: number }
  output: { width: number, height: number, bytes: number }
  scrubber: Timing
  scrubber2Threads: Timing
  inProcess: Timing
  vipsthumbnailOnce: Timing | undefined
  vipsthumbnailPerImage: Timing | undefined
  /** median over rounds of (MediaScrubber ÷ vipsthumbnail per image) timed in the same round */
  pairedRatio: number | undefined
  concurrent: Concurrent
  concurrent2Threads: Concurrent
}

export interface Concurrent {
  images: number
  seconds: number
  imagesPerSec: number
  /** event-loop delay of the calling process while the workers scrub (a 5 ms timer's lateness) */
  loopDelayP99Ms: number
  loopDelayMaxMs: number
}

function timing (samples: number[]): Timing & { p99Ms: number } {
  const s = [...samples].sort((a, b) => a - b)
  const at = (q: number): number => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]
  return { medianMs: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99), minMs: s[0], runs: s.length }
}

const LAG_TICK_MS = 5

/** Runs `fn` while a 5 ms timer records how late it fires (this process's event-loop delay). */
async function withLoopLag<T> (lags: number[], fn: () => Promise<T>): Promise<T> {
  let last = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    lags.push(Math.max(0, now - last - LAG_TICK_MS))
    last = now
  }, LAG_TICK_MS)
  try {
    return await fn()
  } finally {
    clearInterval(timer)
  }
}

/** 4000×3000 q92: a colour gradient with noise (±24), EXIF camera tags and Orientation 6. */
export async function makeBenchJpeg (): Promise<Buffer> {
  const w = 4000
  const h = 3000
  const raw = Buffer.alloc(w * h * 3)
  let seed = 0x2545f491
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      seed = (seed * 1103515245 + 12345) >>> 0
      const n = (seed >>> 24) % 48 - 24
      const i = (y * w + x) * 3
      raw[i] = Math.max(0, Math.min(255, (x * 255) / w + n))
      raw[i + 1] = Math.max(0, Math.min(255, (y * 255) / h + n))
      raw[i + 2] = Math.max(0, Math.min(255, 128 + 60 * Math.sin(x / 40) * Math.cos(y / 50) + n))
    }
  }
  return await sharp(raw, { raw: { width: w, height: h, channels: 3 } })
    .jpeg({ quality: 92 })
    .withExif({ IFD0: { Make: 'KithBench', Model: 'B-12', Software: 'bench' }, IFD2: { DateTimeOriginal: '2026:11:21 10:00:00' } })
    .withMetadata({ orientation: 6 })
    .toBuffer()
}

function vipsthumbnailVersion (): string | undefined {
  const run = spawnSync('vipsthumbnail', ['--vips-version'], { encoding: 'utf8' })
  return run.status === 0 ? run.stdout.trim() : undefined
}

export async function runMediaBench (config: Partial<MediaBenchConfig> = {}, log: (line: string) => void = (l) => console.error(l)): Promise<MediaBenchResult> {
  const cfg = { ...DEFAULT_MEDIA_CONFIG, ...config }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kith-media-bench-'))
  const logger = pino({ level: 'silent' })
  const env = readMediaEnv({})
  try {
    log('media: making a 12 MP JPEG...')
    const input = await makeBenchJpeg()
    const file = path.join(dir, 'in.jpg')
    writeFileSync(file, input)
    const inMeta = await sharp(input).metadata()
    const sample = await scrubImage(input)

    // The host's speed drifts (steal time on this VM): every round times each contender once,
    // back to back, so each ratio compares runs made under the same conditions.
    const vipsVersion = vipsthumbnailVersion()
    if (vipsVersion === undefined) log('media: vipsthumbnail not found; install it with `apt-get install libvips-tools` for the comparison column')
    const outSpec = path.join(dir, 'out-%s.jpg[Q=75,strip]')
    const copies = Array.from({ length: 10 }, (_, i) => path.join(dir, `copy${i}.jpg`))
    for (const copy of copies) copyFileSync(file, copy)
    sharp.cache(false)
    const one = MediaScrubber.start({ env, logger, sharpConcurrency: 1 })
    const two = MediaScrubber.start({ env, logger, sharpConcurrency: 2 })
    const contenders: Record<string, () => Promise<unknown>> = {
      scrubber: async () => await one.scrub(input, 'image/jpeg'),
      scrubber2Threads: async () => await two.scrub(input, 'image/jpeg'),
      inProcess: async () => await scrubImage(input)
    }
    if (vipsVersion !== undefined) {
      contenders.vipsthumbnailOnce = async () => await execFileP('vipsthumbnail', [file, '--size', '1080x1080', '-o', outSpec])
      contenders.vipsthumbnailBatch = async () => await execFileP('vipsthumbnail', [...copies, '--size', '1080x1080', '-o', outSpec])
    }
    const samples: Record<string, number[]> = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]))
    try {
      log(`media: ${cfg.runs} rounds of MediaScrubber (1 and 2 threads), sharp in process${vipsVersion === undefined ? '' : ', vipsthumbnail once and over 10 copies'}...`)
      for (let round = -2; round < cfg.runs; round++) {
        for (const [name, fn] of Object.entries(contenders)) {
          const t = performance.now()
          await fn()
          if (round >= 0) samples[name].push(performance.now() - t)
        }
      }
    } finally {
      await Promise.all([one.stop(), two.stop()])
    }
    const scrubber = timing(samples.scrubber)
    const scrubber2Threads = timing(samples.scrubber2Threads)
    const inProcess = timing(samples.inProcess)
    const vipsthumbnailOnce = vipsVersion === undefined ? undefined : timing(samples.vipsthumbnailOnce)
    const vipsthumbnailPerImage = vipsVersion === undefined ? undefined : timing(samples.vipsthumbnailBatch.map((t) => t / 10))
    const pairedRatio = vipsVersion === undefined ? undefined : timing(samples.scrubber.map((t, i) => t / (samples.vipsthumbnailBatch[i] / 10))).medianMs
    if (vipsVersion !== undefined) {
      const vipsOut = await sharp(readFileSync(path.join(dir, 'out-in.jpg'))).metadata()
      if (vipsOut.width !== sample.width || vipsOut.height !== sample.height) log(`media: vipsthumbnail made ${vipsOut.width}×${vipsOut.height}, the scrub ${sample.width}×${sample.height}`)
    }

    log('media: 4 images at once, rounds alternating between 1 and 2 libvips threads per worker...')
    const pools = [MediaScrubber.start({ env, logger, sharpConcurrency: 1 }), MediaScrubber.start({ env, logger, sharpConcurrency: 2 })]
    const lags: number[][] = pools.map(() => [])
    const seconds = [0, 0]
    const four = async (pool: MediaScrubber): Promise<unknown> => await Promise.all(Array.from({ length: 4 }, async () => await pool.scrub(input, 'image/jpeg')))
    try {
      for (const pool of pools) await four(pool)
      for (let round = 0; round < cfg.concurrentRounds; round++) {
        for (let i = 0; i < pools.length; i++) {
          const t = performance.now()
          await withLoopLag(lags[i], async () => await four(pools[i]))
          seconds[i] += (performance.now() - t) / 1000
        }
      }
    } finally {
      await Promise.all(pools.map(async (pool) => { await pool.stop() }))
    }
    const images = cfg.concurrentRounds * 4
    const [concurrent, concurrent2Threads] = pools.map((_, i): Concurrent => ({
      images, seconds: seconds[i], imagesPerSec: images / seconds[i], loopDelayP99Ms: timing(lags[i]).p99Ms, loopDelayMaxMs: Math.max(...lags[i])
    }))

    return {
      machine: machineInfo(),
      sharpVersion: sharp.versions.sharp ?? 'unknown',
      libvipsVersion: sharp.versions.vips,
      vipsthumbnailVersion: vipsVersion,
      input: { width: inMeta.width ?? 0, height: inMeta.height ?? 0, bytes: input.length },
      output: { width: sample.width, height: sample.height, bytes: sample.bytes.length },
      scrubber,
      scrubber2Threads,
      inProcess,
      vipsthumbnailOnce,
      vipsthumbnailPerImage,
      pairedRatio,
      concurrent,
      concurrent2Threads
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const ms = (x: number): string => x.toFixed(1)

export function formatMediaBench (r: MediaBenchResult): string {
  const ref = r.vipsthumbnailPerImage
  const once = r.vipsthumbnailOnce
  const ratio = (t: Timing, base: Timing | undefined): string => base === undefined ? 'n/a' : `${(t.medianMs / base.medianMs).toFixed(2)}×`
  const row = (name: string, t: Timing | undefined, note: string): string => t === undefined
    ? `| ${name} | n/a | n/a | n/a | n/a | vipsthumbnail not installed (\`apt-get install libvips-tools\`) |`
    : `| ${name} | ${ms(t.medianMs)} | ${ms(t.p90Ms)} | ${ratio(t, ref)} | ${ratio(t, once)} | ${note} |`
  return [
    `${r.machine.date}; ${r.machine.nproc} cores, ${r.machine.cpuModel}; node ${r.machine.node}; sharp ${r.sharpVersion} (libvips ${r.libvipsVersion}); vipsthumbnail ${r.vipsthumbnailVersion ?? 'missing'}`,
    '',
    `Input ${r.input.width}×${r.input.height} JPEG, ${(r.input.bytes / 1e6).toFixed(1)} MB, EXIF Orientation 6 → output ${r.output.width}×${r.output.height} JPEG q75, ${Math.round(r.output.bytes / 1000)} kB.`,
    '',
    '| one 12 MP JPEG | median ms | p90 ms | ÷ vipsthumbnail per image | ÷ vipsthumbnail one invocation | |',
    '|---|--:|--:|--:|--:|---|',
    row('**MediaScrubber.scrub** (IPC to a worker and back, 1 libvips thread)', r.scrubber, `${r.scrubber.runs} runs`),
    row('MediaScrubber.scrub, 2 libvips threads per worker', r.scrubber2Threads, `${r.scrubber2Threads.runs} runs`),
    row('sharp in this process, same pipeline', r.inProcess, `${r.inProcess.runs} runs, 1 libvips thread`),
    row('vipsthumbnail, one invocation (process start included)', once, once === undefined ? '' : `${once.runs} runs`),
    row('vipsthumbnail, 10 copies in one invocation, per image', ref, ref === undefined ? '' : `${ref.runs} runs of 10, 2 threads`),
    '',
    ...(r.pairedRatio === undefined ? [] : [`MediaScrubber ÷ vipsthumbnail per image, median of the ratios within each round: **${r.pairedRatio.toFixed(2)}×**.`, '']),
    '| 4 images at once through MediaScrubber (2 workers) | images/s | images | event-loop delay of the caller, p99 / max ms |',
    '|---|--:|--:|--:|',
    `| **1 libvips thread per worker (default)** | **${r.concurrent.imagesPerSec.toFixed(1)}** | ${r.concurrent.images} in ${r.concurrent.seconds.toFixed(2)} s | ${ms(r.concurrent.loopDelayP99Ms)} / ${ms(r.concurrent.loopDelayMaxMs)} |`,
    `| 2 libvips threads per worker | ${r.concurrent2Threads.imagesPerSec.toFixed(1)} | ${r.concurrent2Threads.images} in ${r.concurrent2Threads.seconds.toFixed(2)} s | ${ms(r.concurrent2Threads.loopDelayP99Ms)} / ${ms(r.concurrent2Threads.loopDelayMaxMs)} |`
  ].join('\n')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runMediaBench(process.argv.includes('--quick') ? QUICK_MEDIA_CONFIG : {}).then((r) => {
    console.log(formatMediaBench(r))
    if (process.argv.includes('--json')) console.error(JSON.stringify(r))
  }, (err: unknown) => {
    console.error(err)
    process.exitCode = 1
  })
}
