/**
 * Ed25519 verification on worker threads, so the event loop (HTTP, consensus) keeps the core it
 * runs on. Requests travel to a worker in batches (below).
 */
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { KEY_BYTES, SIGNATURE_BYTES, packBatch, type VerifyBatch } from './verify-batch.js'

interface Waiting {
  item: [Uint8Array, Uint8Array, Uint8Array]
  resolve: (ok: boolean) => void
  reject: (err: Error) => void
}

/**
 * Requests wait up to BATCH_WINDOW_MS to travel together (or go at MAX_BATCH): under load a
 * message per event-loop turn cost ~5% of a node's main thread in postMessage alone, most of it
 * waiting on the port while the worker, on a shared core, was descheduled.
 *
 * MAX_BATCH is small on purpose: a burst of submissions (the answers to a flush, all sent again
 * at once by their clients) is verified in slices that return one after another, so the first
 * ones go on to the mempool while the worker verifies the rest. At 512 a burst of 256 went as
 * one batch, every request waited for the last signature, and the node's stages took turns
 * instead of overlapping: 4,961 confirmed tx/s at C=256 against 7,037 with 32
 * (docs/benchmarks.md, "Verify batches of 32").
 */
const BATCH_WINDOW_MS = 2
const MAX_BATCH = 32

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

  /** A property, not a method: it is handed on as a verifier on its own (verifyTxSignatureBy). */
  readonly verify = (message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array): Promise<boolean> => {
    if (signature.length !== SIGNATURE_BYTES || publicKey.length !== KEY_BYTES) return Promise.resolve(false)
    return new Promise((resolve, reject) => {
      this.batch.push({ item: [message, signature, publicKey], resolve, reject })
      if (this.batch.length >= MAX_BATCH) this.flush()
      else if (!this.flushScheduled) {
        this.flushScheduled = true
        setTimeout(() => this.flush(), BATCH_WINDOW_MS)
      }
    })
  }

  private flush (): void {
    const waiting = this.batch
    if (waiting.length < MAX_BATCH) this.flushScheduled = false
    this.batch = []
    if (waiting.length === 0) return
    const id = this.nextId++
    const worker = this.workers[this.nextWorker++ % this.workers.length]
    this.inFlight.set(id, waiting)
    const batch: VerifyBatch = { id, packed: packBatch(waiting.map((w) => w.item)) }
    worker.postMessage(batch, [batch.packed])
  }

  async stop (): Promise<void> {
    await Promise.all(this.workers.map(async (w) => await w.terminate()))
  }
}
