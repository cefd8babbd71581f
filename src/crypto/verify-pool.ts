/**
 * Ed25519 verification on worker threads, so the event loop (HTTP, consensus) keeps the core it
 * runs on. Requests made in one event-loop turn travel as one batch to one worker.
 */
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import type { VerifyBatch } from './verify-worker.js'

interface Waiting {
  item: [Uint8Array, Uint8Array, Uint8Array]
  resolve: (ok: boolean) => void
  reject: (err: Error) => void
}

export class VerifyPool {
  private readonly workers: Worker[]
  private readonly inFlight = new Map<number, Waiting[]>()
  private batch: Waiting[] = []
  private flushScheduled = false
  private nextId = 1
  private nextWorker = 0

  constructor (size = Math.max(1, availableParallelism() - 1)) {
    this.workers = Array.from({ length: size }, () => {
      const worker = new Worker(new URL('./verify-worker.js', import.meta.url))
      worker.on('message', ({ id, results }: { id: number, results: Uint8Array }) => {
        const waiting = this.inFlight.get(id)
        if (waiting === undefined) return
        this.inFlight.delete(id)
        waiting.forEach((w, i) => w.resolve(results[i] === 1))
      })
      // A dead worker fails its requests (a node fault, 500), never "bad signature".
      worker.on('error', (err) => {
        for (const waiting of this.inFlight.values()) for (const w of waiting) w.reject(err)
        this.inFlight.clear()
      })
      worker.unref()
      return worker
    })
  }

  verify (message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.batch.push({ item: [message, signature, publicKey], resolve, reject })
      if (!this.flushScheduled) {
        this.flushScheduled = true
        setImmediate(() => this.flush())
      }
    })
  }

  private flush (): void {
    this.flushScheduled = false
    const waiting = this.batch
    this.batch = []
    if (waiting.length === 0) return
    const id = this.nextId++
    const worker = this.workers[this.nextWorker++ % this.workers.length]
    this.inFlight.set(id, waiting)
    const batch: VerifyBatch = { id, items: waiting.map((w) => w.item) }
    worker.postMessage(batch)
  }

  async close (): Promise<void> {
    await Promise.all(this.workers.map(async (w) => await w.terminate()))
  }
}
