/**
 * An HTTP edge thread (edge-threads.ts starts it): serves the public listener with edge-app.ts
 * and sends what needs the core in one message per event-loop turn. The only module of this
 * thread that listens on parentPort.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { pino } from 'pino'
import type { Transaction } from '../../chain/index.js'
import { KithError } from '../../errors/index.js'
import type { SubmitResult } from '../../node/index.js'
import { createEdgeApp } from './edge-app.js'
import type { CoreToEdge, EdgeSetup, EdgeToCore, HttpObservation, SubmitItem } from './protocol.js'

const setup = workerData as EdgeSetup
const port = parentPort
if (port === null) throw new Error('edge-worker.js runs as a worker thread')
const logger = pino({ level: setup.logLevel, base: { pid: process.pid, edge: setup.index } })

const waiting = new Map<number, { resolve: (result: SubmitResult) => void, reject: (err: Error) => void }>()
let nextId = 0
let submits: SubmitItem[] = []
let observed: HttpObservation[] = []
let flushing = false

const send = (message: EdgeToCore): void => port.postMessage(message)
const flush = (): void => {
  flushing = false
  send({ kind: 'work', submits, observed })
  submits = []
  observed = []
}
const soon = (): void => {
  if (!flushing) { flushing = true; setImmediate(flush) }
}

const app = createEdgeApp({
  env: setup.env,
  corePort: setup.corePort,
  secret: setup.secret,
  logger,
  submit: async (tx: Transaction, signatureValid: boolean, ip: string) => await new Promise<SubmitResult>((resolve, reject) => {
    const id = nextId++
    waiting.set(id, { resolve, reject })
    submits.push({ id, tx, signatureValid, ip })
    soon()
  }),
  observe: (observation) => { observed.push(observation); soon() }
})

port.on('message', (message: CoreToEdge) => {
  if (message.kind === 'answers') {
    for (const answer of message.answers) {
      const held = waiting.get(answer.id)
      if (held === undefined) continue
      waiting.delete(answer.id)
      if ('result' in answer) held.resolve(answer.result)
      else if ('refused' in answer) held.reject(new KithError(answer.refused.code, answer.refused.message, answer.refused.details))
      else held.reject(new Error('the core failed this submission; its log has the cause'))
    }
  } else if (message.kind === 'stop') {
    void app.stop().finally(() => send({ kind: 'stopped' }))
  }
})

app.listen(setup.host, setup.port).then((bound) => send({ kind: 'listening', port: bound }), (err: unknown) => {
  // the core reports it: the worker ends with this error
  throw err
})
