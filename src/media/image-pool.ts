/**
 * A small pool of image worker processes (image-worker.ts): one job at a time each, a bounded
 * queue in front (beyond it MEDIA_BUSY at once), a deadline per job (the worker is killed and
 * replaced), and a replacement for any worker that dies. Buffers cross the IPC channel with the
 * 'advanced' (structured clone) serialization, as bytes rather than JSON.
 */
import { fork, type ChildProcess } from 'node:child_process'
import type { Logger } from 'pino'
import { KithError } from '../errors/index.js'
import type { ScrubbedImage } from './image.js'
import type { ImageJobMessage, WorkerMessage, WorkerSettings } from './image-worker.js'

export interface ImagePoolOptions {
  workers: number
  maxQueue: number
  jobTimeoutMs: number
  maxInputPixels: number
  /** libvips threads per worker */
  sharpConcurrency: number
  niceness: number
  logger: Logger
}

interface Job {
  id: number
  bytes: Buffer
  resolve: (image: ScrubbedImage) => void
  reject: (err: Error) => void
  timer?: NodeJS.Timeout
}

interface Slot {
  child: ChildProcess
  ready: boolean
  job: Job | undefined
  /** killed by us; takes no job while its exit is on the way */
  retired: boolean
}

const WORKER_URL = new URL('./image-worker.js', import.meta.url)
/** Delay before replacing a worker that died before it was ready (sharp failing to load, say). */
const RESTART_DELAY_MS = 1000
const CLOSE_GRACE_MS = 2000

export class ImagePool {
  private readonly slots: Slot[] = []
  private readonly queue: Job[] = []
  private readonly log: Logger
  private nextId = 1
  private closing = false

  constructor (private readonly opts: ImagePoolOptions) {
    this.log = opts.logger
    for (let i = 0; i < opts.workers; i++) this.slots.push(this.spawn())
  }

  /** Pids of the worker processes now running. */
  pids (): number[] {
    return this.slots.map((s) => s.child.pid).filter((pid): pid is number => pid !== undefined)
  }

  run (bytes: Buffer): Promise<ScrubbedImage> {
    if (this.closing) return Promise.reject(new KithError('UNAVAILABLE', 'the media scrubber is shutting down'))
    const idle = this.slots.some((s) => s.job === undefined && !s.retired)
    if (!idle && this.queue.length >= this.opts.maxQueue) {
      return Promise.reject(new KithError('MEDIA_BUSY', `too many images are being scrubbed (${this.slots.length} at a time, ${this.opts.maxQueue} waiting); try again shortly`))
    }
    return new Promise<ScrubbedImage>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, bytes, resolve, reject })
      this.dispatch()
    })
  }

  private spawn (): Slot {
    const settings: WorkerSettings = { sharpConcurrency: this.opts.sharpConcurrency, niceness: this.opts.niceness }
    // execArgv [] : the node's own flags (--cpu-prof, --inspect, test runner flags) are not the worker's
    const child = fork(WORKER_URL, [JSON.stringify(settings)], { serialization: 'advanced', execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    const slot: Slot = { child, ready: false, job: undefined, retired: false }
    // an idle pool does not keep the process alive; a job in flight does (see hold)
    child.unref()
    child.channel?.unref()
    child.on('message', (msg: WorkerMessage) => this.onMessage(slot, msg))
    child.on('error', (err) => this.log.error({ err, pid: child.pid }, 'image worker error'))
    child.once('exit', (code, signal) => this.onExit(slot, code, signal))
    return slot
  }

  private hold (slot: Slot, busy: boolean): void {
    if (busy) slot.child.channel?.ref()
    else slot.child.channel?.unref()
  }

  private dispatch (): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return
      if (slot.job !== undefined || slot.retired || slot.child.exitCode !== null || slot.child.signalCode !== null) continue
      const job = this.queue.shift() as Job
      slot.job = job
      this.hold(slot, true)
      // the deadline is the image's, so it starts once the worker is up (see onMessage)
      if (slot.ready) this.startDeadline(slot, job)
      const message: ImageJobMessage = { id: job.id, bytes: job.bytes, maxInputPixels: this.opts.maxInputPixels }
      slot.child.send(message)
    }
  }

  private startDeadline (slot: Slot, job: Job): void {
    job.timer = setTimeout(() => this.onTimeout(slot, job), this.opts.jobTimeoutMs)
  }

  /** Detaches the slot's current job (if it is `job`), so it settles exactly once. */
  private take (slot: Slot, id?: number): Job | undefined {
    const job = slot.job
    if (job === undefined || (id !== undefined && job.id !== id)) return undefined
    clearTimeout(job.timer)
    slot.job = undefined
    this.hold(slot, false)
    return job
  }

  private onMessage (slot: Slot, msg: WorkerMessage): void {
    if (msg.type === 'ready') {
      slot.ready = true
      if (slot.job !== undefined) this.startDeadline(slot, slot.job)
      return
    }
    const job = this.take(slot, msg.id)
    if (job === undefined) return
    if (msg.type === 'done') job.resolve({ bytes: msg.bytes, width: msg.width, height: msg.height })
    else if (msg.type === 'rejected') job.reject(new KithError('MEDIA_INVALID', msg.message))
    else {
      this.log.error({ pid: slot.child.pid, error: msg.message }, 'image worker failed on a job')
      job.reject(new KithError('INTERNAL', 'image scrubbing failed'))
    }
    this.dispatch()
  }

  private onTimeout (slot: Slot, job: Job): void {
    if (this.take(slot, job.id) === undefined) return
    this.log.warn({ pid: slot.child.pid, timeoutMs: this.opts.jobTimeoutMs }, 'image job timed out; killing its worker')
    job.reject(new KithError('MEDIA_INVALID', `image took too long to decode (over ${this.opts.jobTimeoutMs / 1000} s)`))
    slot.retired = true
    // jobs queued meanwhile wait for its exit (which brings the replacement): held until then
    slot.child.ref()
    slot.child.kill('SIGKILL')
  }

  private onExit (slot: Slot, code: number | null, signal: NodeJS.Signals | null): void {
    const job = this.take(slot)
    const index = this.slots.indexOf(slot)
    if (this.closing) {
      job?.reject(new KithError('UNAVAILABLE', 'the media scrubber is shutting down'))
      return
    }
    if (!slot.ready) {
      // It never came up: nothing can be scrubbed until it does, so waiting jobs fail now (500).
      this.log.error({ pid: slot.child.pid, code, signal }, 'image worker exited before it was ready')
      const failed = new KithError('INTERNAL', 'image scrubbing is not available')
      job?.reject(failed)
      for (const waiting of this.queue.splice(0)) waiting.reject(failed)
      setTimeout(() => { if (!this.closing) this.replace(index) }, RESTART_DELAY_MS).unref()
      return
    }
    if (job !== undefined) {
      // A worker that dies under a job was almost always killed by that image (a libvips crash,
      // the kernel's OOM killer): the upload is refused, the node stays up.
      this.log.warn({ pid: slot.child.pid, code, signal }, 'image worker died during a job; replacing it')
      job.reject(new KithError('MEDIA_INVALID', `image could not be processed: the image worker stopped (${signal ?? `exit code ${String(code)}`})`))
    } else {
      this.log.warn({ pid: slot.child.pid, code, signal }, 'idle image worker exited; replacing it')
    }
    this.replace(index)
  }

  private replace (index: number): void {
    if (index < 0 || this.closing) return
    this.slots[index] = this.spawn()
    this.dispatch()
  }

  /** Refuses waiting jobs, disconnects the workers (they exit on it) and waits for them. */
  async close (): Promise<void> {
    if (this.closing) return
    this.closing = true
    for (const job of this.queue.splice(0)) job.reject(new KithError('UNAVAILABLE', 'the media scrubber is shutting down'))
    await Promise.all(this.slots.map(async ({ child }) => {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
      const force = setTimeout(() => child.kill('SIGKILL'), CLOSE_GRACE_MS)
      if (child.connected) child.disconnect()
      else child.kill('SIGTERM')
      await exited
      clearTimeout(force)
    }))
  }
}
