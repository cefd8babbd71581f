/** MediaScrubber: the mandatory scrub policy of spec § Feed rules 3 and 4, in one call. */
import { availableParallelism } from 'node:os'
import type { Logger } from 'pino'
import { KithError } from '../errors/index.js'
import type { MediaEnv } from './env.js'
import { DEFAULT_MAX_INPUT_PIXELS } from './image.js'
import { ImagePool } from './image-pool.js'
import { checkMagic, type MediaKind } from './magic.js'
import { scrubBySidecar } from './sidecar-client.js'

export interface ScrubbedMedia {
  bytes: Buffer
  /** the mime to store and serve the bytes with: always image/jpeg for images */
  mime: string
  kind: MediaKind
  /** images only */
  width?: number
  height?: number
}

export interface MediaScrubberOptions {
  /** image worker processes; default 2 (at most the number of cores) */
  workers?: number
  /** images waiting for a worker beyond those being scrubbed; more get MEDIA_BUSY; default 16 */
  maxQueue?: number
  /** per image; the worker is killed past it; default 20 s */
  jobTimeoutMs?: number
  /** decompression-bomb limit; default 50 MP */
  maxInputPixels?: number
  /** libvips threads per image worker; default 1 (docs/media.md has the measurements) */
  sharpConcurrency?: number
  /** nice value of the image workers; default 10 */
  niceness?: number
  env: MediaEnv
  logger: Logger
}

export const DEFAULT_WORKERS = 2

/** Image worker processes when none are asked for: two, or one on a one-core machine. */
export function defaultImageWorkers (): number {
  return Math.min(DEFAULT_WORKERS, availableParallelism())
}
export const DEFAULT_MAX_QUEUE = 16
export const DEFAULT_JOB_TIMEOUT_MS = 20_000
export const DEFAULT_NICENESS = 10

export class MediaScrubber {
  private readonly pool: ImagePool
  private readonly log: Logger

  private constructor (private readonly env: MediaEnv, opts: MediaScrubberOptions) {
    this.log = opts.logger.child({ module: 'media' })
    this.pool = new ImagePool({
      workers: opts.workers ?? defaultImageWorkers(),
      maxQueue: opts.maxQueue ?? DEFAULT_MAX_QUEUE,
      jobTimeoutMs: opts.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_MS,
      maxInputPixels: opts.maxInputPixels ?? DEFAULT_MAX_INPUT_PIXELS,
      sharpConcurrency: opts.sharpConcurrency ?? 1,
      niceness: opts.niceness ?? DEFAULT_NICENESS,
      logger: this.log
    })
  }

  /** Forks the image workers; they come up in the background (a first job waits for them). */
  static start (opts: MediaScrubberOptions): MediaScrubber {
    for (const [name, value, min] of [['workers', opts.workers, 1], ['maxQueue', opts.maxQueue, 0], ['jobTimeoutMs', opts.jobTimeoutMs, 1], ['maxInputPixels', opts.maxInputPixels, 1], ['sharpConcurrency', opts.sharpConcurrency, 1]] as const) {
      if (value !== undefined && (!Number.isSafeInteger(value) || value < min)) throw new Error(`MediaScrubber: ${name} must be a whole number ≥ ${min}, got ${value}`)
    }
    if (opts.niceness !== undefined && (!Number.isInteger(opts.niceness) || opts.niceness < 0 || opts.niceness > 19)) throw new Error(`MediaScrubber: niceness must be 0 to 19, got ${opts.niceness}`)
    return new MediaScrubber(opts.env, opts)
  }

  /**
   * The whole mandatory policy of spec rule 3: magic check, images re-encoded, video/audio
   * through the sidecar (or 503, or stored as is when SVC_ALLOW_UNSCRUBBED_VIDEO).
   */
  async scrub (bytes: Buffer, declaredMime: string): Promise<ScrubbedMedia> {
    const { kind, mime } = checkMagic(bytes, declaredMime)
    if (kind === 'image') {
      const image = await this.pool.run(bytes)
      return { bytes: image.bytes, mime: 'image/jpeg', kind, width: image.width, height: image.height }
    }
    if (this.env.sidecarUrl !== undefined) {
      const out = await scrubBySidecar(this.env.sidecarUrl, bytes, mime, this.env.sidecarTimeoutMs, this.log)
      let same: boolean
      try {
        same = checkMagic(out, mime).kind === kind
      } catch {
        same = false
      }
      if (!same) {
        this.log.warn({ mime, bytes: out.length }, 'media sidecar returned bytes of another type')
        throw new KithError('MEDIA_SIDECAR_FAILED', `the media sidecar returned something other than ${mime}`)
      }
      return { bytes: out, mime, kind }
    }
    if (this.env.allowUnscrubbedVideo) return { bytes, mime, kind }
    throw new KithError('MEDIA_NO_SIDECAR',
      `${kind} attachments need a media scrubbing sidecar, and this node has none: its operator can set SVC_MEDIA_SIDECAR_URL (or SVC_ALLOW_UNSCRUBBED_VIDEO=true to store them unscrubbed)`)
  }

  /** Pids of the image worker processes (for tests and diagnostics). */
  workerPids (): number[] {
    return this.pool.pids()
  }

  /** Stops the image workers; scrubs still waiting or running fail with UNAVAILABLE. */
  async stop (): Promise<void> {
    await this.pool.close()
  }
}
