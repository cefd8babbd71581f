/**
 * `prepare` on a worker thread, for the node's admission path: a deploy is validated and
 * instrumented without holding the event loop (binaryen took ~47 ms of main thread per refused
 * deploy). The result is the same pure function's as on any thread (prepare.ts), so a module
 * prepared here is what every node's block apply computes.
 */
import { Worker } from 'node:worker_threads'
import { KithError } from '../../errors/index.js'
import type { PreparedModule } from './types.js'

export interface PrepareRequest { id: number, wasm: Uint8Array }
export type PrepareReply =
  | { id: number, kind: 'prepared', prepared: PreparedModule }
  | { id: number, kind: 'refused', message: string }
  | { id: number, kind: 'failed', message: string }

export interface PrepareWorker {
  /** Resolves with the prepared module; rejects with KithError('CONTRACT_REFUSED') when the module is refused. */
  prepare: (wasm: Uint8Array) => Promise<PreparedModule>
  close: () => Promise<void>
}

/**
 * Longest a module may take on the worker (the largest took ~230 ms here, cold): past it the
 * worker is replaced and what it held fails, unanswered, so no sender's deploy waits forever.
 */
const PREPARE_TIMEOUT_MS = 30_000

export function startPrepareWorker (): PrepareWorker {
  const waiting = new Map<number, { resolve: (p: PreparedModule) => void, reject: (err: Error) => void }>()
  let nextId = 1
  // started on first use: a node that sees no deploy never loads a second binaryen
  let worker: Worker | undefined
  const start = (): Worker => {
    const thread = new Worker(new URL('./prepare-thread.js', import.meta.url))
    worker = thread
    thread.unref()
    thread.on('message', (reply: PrepareReply) => {
      const waiter = waiting.get(reply.id)
      if (waiter === undefined) return
      waiting.delete(reply.id)
      if (reply.kind === 'prepared') waiter.resolve(reply.prepared)
      else if (reply.kind === 'refused') waiter.reject(new KithError('CONTRACT_REFUSED', reply.message))
      else waiter.reject(new Error(`contract prepare failed: ${reply.message}`))
    })
    thread.on('error', () => {})
    // A lost worker fails what it held (never as a refusal: nothing is cached); the next request starts another.
    thread.on('exit', (code) => {
      if (worker === thread) worker = undefined
      if (closed) return
      for (const waiter of waiting.values()) waiter.reject(new Error(`contract prepare worker exited (${code})`))
      waiting.clear()
    })
    return thread
  }
  let closed = false
  return {
    async prepare (wasm) {
      if (closed) throw new KithError('UNAVAILABLE', 'contract VM is closed')
      const id = nextId++
      const thread = worker ?? start()
      let timer: NodeJS.Timeout | undefined
      return await new Promise<PreparedModule>((resolve, reject) => {
        waiting.set(id, { resolve, reject })
        if (waiting.size === 1) thread.ref()
        thread.postMessage({ id, wasm } satisfies PrepareRequest)
        timer = setTimeout(() => { if (waiting.has(id)) void thread.terminate() }, PREPARE_TIMEOUT_MS)
      }).finally(() => {
        clearTimeout(timer)
        if (waiting.size === 0) worker?.unref()
      })
    },
    close: async () => {
      closed = true
      await worker?.terminate()
    }
  }
}
