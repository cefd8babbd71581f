/** Worker thread of the worker VM: runs calls; storage reads go to the main thread synchronously. */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads'
import { ModuleCache, runCall } from './execute.js'
import { READY, TO_MAIN, TO_WORKER, send, type ToMain, type ToWorker, type WorkerData } from './worker-protocol.js'
import { VmGuardError, type StorageView } from './types.js'

const { signal, port } = workerData as WorkerData
const cache = new ModuleCache()
const post = (m: ToMain): void => { send(port, signal, TO_MAIN, m) }

/** Asks the main thread for `key` and blocks until it answers. */
const storage: StorageView = {
  get (key) {
    const seen = Atomics.load(signal, TO_WORKER)
    post({ type: 'get', key })
    for (;;) {
      Atomics.wait(signal, TO_WORKER, seen)
      const reply = receiveMessageOnPort(port)
      if (reply !== undefined) return (reply.message as Extract<ToWorker, { type: 'value' }>).value
    }
  }
}

port.on('message', (m: ToWorker) => {
  if (m.type !== 'call') return
  try {
    post({ type: 'done', outcome: runCall(cache, m.input, storage) })
  } catch (err) {
    if (err instanceof VmGuardError) post({ type: 'guard', reason: err.message })
    else post({ type: 'failed', message: err instanceof Error ? err.message : String(err) })
  }
})
Atomics.store(signal, READY, 1)
Atomics.notify(signal, READY)
parentPort?.unref()
