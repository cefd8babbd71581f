/**
 * The prepare worker's thread: validates and instruments modules with binaryen, off the main
 * thread (binaryen's ~10 MB of JS loads here, and a module takes tens of milliseconds). One
 * request at a time, in arrival order.
 */
import { parentPort } from 'node:worker_threads'
import { KithError } from '../../errors/index.js'
import { loadBinaryen } from './load.js'
import { prepareModule } from './prepare.js'
import type { PrepareReply, PrepareRequest } from './prepare-worker.js'

const binaryen = await loadBinaryen()
const port = parentPort
if (port === null) throw new Error('prepare-thread runs as a worker')
port.on('message', (req: PrepareRequest) => {
  let reply: PrepareReply
  try {
    reply = { id: req.id, kind: 'prepared', prepared: prepareModule(binaryen, req.wasm) }
  } catch (err) {
    reply = err instanceof KithError && err.code === 'CONTRACT_REFUSED'
      ? { id: req.id, kind: 'refused', message: err.message }
      : { id: req.id, kind: 'failed', message: err instanceof Error ? err.message : String(err) }
  }
  port.postMessage(reply)
})
