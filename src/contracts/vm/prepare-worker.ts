/**
 * `prepare` on a worker thread, for the node's admission path: a deploy is validated and
 * instrumented without holding the event loop (binaryen took ~47 ms of main thread per refused
 * deploy). The result is the same pure function's as on any thread (prepare.ts), so a module
 * prepared here is what every node's block apply computes.
 */
import { Worker } from 'node:worker_threads'
import { KithError } from '../../errors.js'
import type { PreparedModule } from './types.js'

export interface PrepareRequest { id: number, wasm: Uint8Array }
export type PrepareReply =
  | { id: number, kind: 'prepared', prepared: PreparedModule }
  | { id: number, kind: 'refused', message: string }
  | { id: number, kind: 'failed', message: string }

export interface PrepareWorker {
  /** Resolves with the prepared module; rejects with KithError('TX_INVALID') when the module is refused. */
  prepare: (wasm: Uint8Array) => Promise<PreparedModule>
  /** Requests sent and not answered yet. */
  readonly pending: number
  close: () => Promise<void>
}

export function startPrepareWorker (): PrepareWorker {
  const waiting = new Map<number, { resolve: (p: PreparedModule) => void, reject: (err: Error) => void }>()
  let nextId = 1
  let worker: Worker
  const start = (): void => {
    worker = new Worker(new URL('./prepare-thread.js', import.meta.url))
    worker.unref()
    worker.on('message', (reply: PrepareReply) => {
      const waiter = waiting.get(reply.id)
      if (waiter === undefined) return
      waiting.delete(reply.id)
      if (reply.kind === 'prepared') waiter.resolve(reply.prepared)
      else if (reply.kind === 'refused') waiter.reject(new KithError('TX_INVALID', reply.message))
      else waiter.reject(new Error(`contract prepare failed: ${reply.message}`))
    })
    worker.on('error', () => {})
    // A lost worker fails what it held (never as a refusal: nothing is cached) and is replaced.
    worker.on('exit', (code) => {
      if (closed) return
      for (const waiter of waiting.values()) waiter.reject(new Error(`contract prepare worker exited (${code})`))
      waiting.clear()
      start()
    })
  }
  let closed = false
  start()
  return {
    async prepare (wasm) {
      if (closed) throw new KithError('UNAVAILABLE', 'contract VM is closed')
      const id = nextId++
      return await new Promise<PreparedModule>((resolve, reject) => {
        waiting.set(id, { resolve, reject })
        if (waiting.size === 1) worker.ref()
        worker.postMessage({ id, wasm } satisfies PrepareRequest)
      }).finally(() => { if (waiting.size === 0) worker.unref() })
    },
    get pending () { return waiting.size },
    close: async () => {
      closed = true
      await worker.terminate()
    }
  }
}
