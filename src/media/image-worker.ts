/**
 * An image worker: a child process forked by ImagePool (image-pool.ts) that scrubs one image at
 * a time with sharp. A separate process so that a libvips crash on a hostile file, or a decode
 * that runs away, costs this process and not the node; at a lower CPU priority so the node's
 * event loop wins the cores while images are scrubbed. Exits when its parent goes away.
 */
import { readdirSync } from 'node:fs'
import { setPriority } from 'node:os'
import sharp from 'sharp'
import { ImageRejected, scrubImage } from './image.js'

export interface WorkerSettings {
  /** libvips threads per image (sharp.concurrency) */
  sharpConcurrency: number
  /** nice value of every thread of this process (0..19) */
  niceness: number
}

export interface ImageJobMessage {
  id: number
  bytes: Buffer
  maxInputPixels: number
}

export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'done', id: number, bytes: Buffer, width: number, height: number }
  | { type: 'rejected', id: number, message: string }
  | { type: 'failed', id: number, message: string }

/**
 * Linux keeps a nice value per thread: set it on every thread that exists now; threads created
 * later (libuv's pool, libvips' workers) inherit it from the thread that creates them.
 */
function lowerPriority (niceness: number): void {
  let tids: number[] = [0]
  try {
    tids = readdirSync('/proc/self/task').map(Number)
  } catch { /* not Linux: the process-wide call below is all there is */ }
  for (const tid of tids) {
    try {
      setPriority(tid, niceness)
    } catch { /* a thread that has just exited */ }
  }
}

function send (message: WorkerMessage): void {
  // the parent may be gone (closed, or dead): then so is this worker's purpose
  if (process.connected) process.send?.(message, undefined, undefined, (err) => { if (err !== null) process.exit(0) })
}

function main (): void {
  const settings = JSON.parse(process.argv[2] ?? '{}') as Partial<WorkerSettings>
  lowerPriority(settings.niceness ?? 10)
  // every input is new: libvips' operation cache would only hold memory
  sharp.cache(false)
  sharp.concurrency(settings.sharpConcurrency ?? 1)
  // Only the four decoders the magic check lets through may run: a file that libvips would sniff
  // as something else (SVG, PDF, TIFF, HEIF, ...) meets no loader at all.
  sharp.block({ operation: ['VipsForeignLoad'] })
  sharp.unblock({ operation: ['VipsForeignLoadJpegBuffer', 'VipsForeignLoadPngBuffer', 'VipsForeignLoadNsgifBuffer', 'VipsForeignLoadWebpBuffer'] })
  process.on('disconnect', () => process.exit(0))
  process.on('message', (job: ImageJobMessage) => {
    scrubImage(job.bytes, job.maxInputPixels).then(
      (out) => send({ type: 'done', id: job.id, bytes: out.bytes, width: out.width, height: out.height }),
      (err: unknown) => {
        if (err instanceof ImageRejected) send({ type: 'rejected', id: job.id, message: err.message })
        else send({ type: 'failed', id: job.id, message: err instanceof Error ? err.message : String(err) })
      }
    )
  })
  send({ type: 'ready' })
}

if (process.send !== undefined) main()
