/**
 * The node's VM: calls run on one worker thread while the caller blocks (the state transition is
 * synchronous), answering the worker's storage reads from its StorageView. A wall-clock guard
 * bounds each call; when it trips, the worker is replaced and the call throws VmGuardError: this
 * node could not decide it, which is never recorded as a result. Validation and instrumentation
 * run on a second worker for admission (`prepareAsync`); `prepare`, which block apply needs
 * synchronously when a deploy was not prepared ahead, runs on the caller's thread with binaryen
 * loaded once by the factory.
 */
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads'
import { KithError } from '../../errors/index.js'
import { DEFAULT_WALL_CLOCK_MS } from './limits.js'
import { checkCallInput, loadBinaryen } from './load.js'
import { prepareModule } from './prepare.js'
import { startPrepareWorker } from './prepare-worker.js'
import { VmGuardError, type CallInput, type CallOutcome, type ContractVm, type StorageView } from './types.js'
import { READY, SIGNAL_SLOTS, TO_MAIN, TO_WORKER, send, waitForSignal, type ToMain, type ToWorker, type WorkerData } from './worker-protocol.js'

export interface WorkerVmOptions {
  /** Wall-clock bound of one call, storage reads included (default DEFAULT_WALL_CLOCK_MS). */
  wallClockMs?: number
}

/** Longest wait for a new worker to start, outside the per-call guard. */
const WORKER_START_MS = 10_000
/**
 * A fixed V8 stack for the worker, so the VM's depth cap (MAX_CALL_DEPTH × at most MAX_LOCALS
 * per frame) is reached long before the machine's limit.
 */
const WORKER_STACK_MB = 8

interface Thread {
  worker: Worker
  port: MessagePort
  signal: Int32Array
}

function startThread (): Thread {
  const signal = new Int32Array(new SharedArrayBuffer(SIGNAL_SLOTS * 4))
  const { port1, port2 } = new MessageChannel()
  const data: WorkerData = { signal, port: port2 }
  const worker = new Worker(new URL('./worker.js', import.meta.url), {
    workerData: data,
    transferList: [port2],
    resourceLimits: { stackSizeMb: WORKER_STACK_MB }
  })
  // A dead worker is noticed by the guard of the call it was running; nothing to do here.
  worker.on('error', () => {})
  worker.unref()
  port1.unref()
  return { worker, port: port1, signal }
}

export async function createWorkerVm (opts: WorkerVmOptions = {}): Promise<ContractVm> {
  const binaryen = await loadBinaryen()
  const wallClockMs = opts.wallClockMs ?? DEFAULT_WALL_CLOCK_MS
  let thread = startThread()
  const preparer = startPrepareWorker()
  let closed = false

  const replace = (): void => {
    void thread.worker.terminate()
    thread.port.close()
    thread = startThread()
  }

  const call = (input: CallInput, storage: StorageView): CallOutcome => {
    if (closed) throw new KithError('UNAVAILABLE', 'contract VM is closed')
    checkCallInput(input)
    const { port, signal } = thread
    if (Atomics.wait(signal, READY, 0, WORKER_START_MS) === 'timed-out') {
      replace()
      throw new VmGuardError('contract worker did not start')
    }
    const deadline = performance.now() + wallClockMs
    let seen = Atomics.load(signal, TO_MAIN)
    send<ToWorker>(port, signal, TO_WORKER, { type: 'call', input })
    for (;;) {
      const left = deadline - performance.now()
      if (left <= 0 || !waitForSignal(signal, TO_MAIN, seen, left)) {
        replace()
        throw new VmGuardError(`contract call exceeded the ${wallClockMs} ms wall-clock guard`)
      }
      seen = Atomics.load(signal, TO_MAIN)
      for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) {
        const msg = m.message as ToMain
        switch (msg.type) {
          case 'get':
            send<ToWorker>(port, signal, TO_WORKER, { type: 'value', value: storage.get(msg.key) })
            break
          case 'done': return msg.outcome
          case 'guard': throw new VmGuardError(msg.reason)
          case 'failed': throw new KithError('INTERNAL', `contract worker failed: ${msg.message}`)
        }
      }
    }
  }

  return {
    prepare: (wasm) => prepareModule(binaryen, wasm),
    prepareAsync: async (wasm) => await preparer.prepare(wasm),
    call,
    close: async () => {
      closed = true
      thread.port.close()
      await Promise.all([thread.worker.terminate(), preparer.close()])
    }
  }
}
