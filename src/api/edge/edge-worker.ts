/**
 * An HTTP edge thread (edge-threads.ts starts it): serves the public listener with edge-app.ts
 * and sends the calls it makes of the core in one message per event-loop turn. The only module
 * of this thread that listens on parentPort.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { pino } from 'pino'
import { isKithError } from '../../errors/index.js'
import { clientAddressKey } from '../../relay/index.js'
import { ChainReader } from '../../storage/index.js'
import { createEdgeApp } from './edge-app.js'
import { RefusedClients } from './refused-clients.js'
import { refusal, settleAnswer, type CallItem, type CoreToEdge, type EdgeSetup, type EdgeToCore, type HttpObservation, type ScrubbedWire, type Settle } from './protocol.js'

const setup = workerData as EdgeSetup
const port = parentPort
if (port === null) throw new Error('edge-worker.js runs as a worker thread')
const logger = pino({ level: setup.logLevel, base: { pid: process.pid, edge: setup.index } })

const waiting = new Map<number, Settle>()
let nextId = 0
let calls: CallItem[] = []
let transfer: ArrayBuffer[] = []
let observed: HttpObservation[] = []
let reads: string[] = []
let flushing = false
/** the clients the core's per-IP bucket refuses, as the core last said */
const refused = new RefusedClients()

const send = (message: EdgeToCore, moved: ArrayBuffer[] = []): void => port.postMessage(message, moved)
const flush = (): void => {
  flushing = false
  send({ kind: 'work', calls, observed, reads }, transfer)
  calls = []
  transfer = []
  observed = []
  reads = []
}
const soon = (): void => {
  if (!flushing) { flushing = true; setImmediate(flush) }
}

// the core opened the store before it started this thread, so every table is there to read
const chain = setup.chainDir !== undefined ? ChainReader.openReadOnly(setup.chainDir) : undefined

const app = createEdgeApp({
  env: setup.env,
  corePort: setup.corePort,
  secret: setup.secret,
  maxQueuedBytes: setup.maxQueuedBytes,
  logger,
  calls: setup.calls,
  ...(chain !== undefined ? { chain } : {}),
  ...(setup.media !== undefined ? { media: setup.media } : {}),
  call: async (call, ip, moved = []) => await new Promise((resolve, reject) => {
    const id = nextId++
    waiting.set(id, { resolve, reject })
    calls.push({ id, call, ip })
    transfer.push(...moved)
    soon()
  }),
  observe: (observation) => { observed.push(observation); soon() },
  readAnswered: (ip) => { reads.push(ip); soon() },
  readRefusedFor: (ip) => refused.refusedFor(clientAddressKey(ip))
})

port.on('message', (message: CoreToEdge) => {
  if (message.kind === 'answers') {
    for (const answer of message.answers) settleAnswer(waiting, answer, 'the core failed this call; its log has the cause')
  } else if (message.kind === 'scrub') {
    const { hold } = message
    app.scrubHeld(hold).then(
      (scrubbed) => send({ kind: 'scrubbed', answer: { id: hold, result: scrubbed satisfies ScrubbedWire } }, [scrubbed.bytes.buffer]),
      (err: unknown) => {
        if (!isKithError(err)) logger.error({ err }, 'scrubbing a held attachment failed')
        send({ kind: 'scrubbed', answer: refusal(hold, err) })
      })
  } else if (message.kind === 'limited') {
    refused.note(message.until)
  } else if (message.kind === 'stop') {
    void app.stop().then(async () => await chain?.close()).finally(() => send({ kind: 'stopped' }))
  }
})

app.listen(setup.host, setup.port).then((bound) => send({ kind: 'listening', port: bound }), (err: unknown) => {
  // thrown out of the promise: the worker ends, and its host reports the error
  setImmediate(() => { throw err })
})
