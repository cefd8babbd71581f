/**
 * Worker thread of the worker VM: runs calls; storage reads go to the main thread synchronously.
 * It does nothing else, so it blocks on the shared signal between calls rather than going back
 * to its event loop (a message through the event loop took longer to arrive).
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads'
import { ModuleCache, runCall } from './execute.js'
import { READY, TO_MAIN, TO_WORKER, send, waitForSignal, type ToMain, type ToWorker, type WorkerData } from './worker-protocol.js'
import { VmGuardError, type StorageView } from './types.js'

const { signal, port } = workerData as WorkerData
const cache = new ModuleCache()
const post = (m: ToMain): void => { send(port, signal, TO_MAIN, m) }

/** Asks the main thread for `key` and blocks until it answers. */
const storage: StorageView = {
  get (key) {
    let seen = Atomics.load(signal, TO_WORKER)
    post({ type: 'get', key })
    for (;;) {
      waitForSignal(signal, TO_WORKER, seen, Infinity)
      seen = Atomics.load(signal, TO_WORKER)
      const reply = receiveMessageOnPort(port)
      if (reply !== undefined) return (reply.message as Extract<ToWorker, { type: 'value' }>).value
    }
  }
}

function handle (m: ToWorker): void {
  if (m.type !== 'call') return
  try {
    post({ type: 'done', outcome: runCall(cache, m.input, storage) })
  } catch (err) {
    if (err instanceof VmGuardError) post({ type: 'guard', reason: err.message })
    else post({ type: 'failed', message: err instanceof Error ? err.message : String(err) })
  }
}

parentPort?.unref()
Atomics.store(signal, READY, 1)
Atomics.notify(signal, READY)
// The main thread posts, then bumps the signal: reading the signal before looking at the port
// means a message posted after the look still wakes the wait. terminate() ends the loop.
for (;;) {
  const seen = Atomics.load(signal, TO_WORKER)
  const m = receiveMessageOnPort(port)
  if (m !== undefined) handle(m.message as ToWorker)
  else waitForSignal(signal, TO_WORKER, seen, Infinity)
}
