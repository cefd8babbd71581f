/**
 * The worker VM's synchronous channel. Messages travel on a MessagePort; after posting, a side
 * bumps its counter in a shared Int32Array and notifies, and the other side, blocked in
 * Atomics.wait, takes the message with receiveMessageOnPort. So the main thread can answer the
 * worker's storage reads while it blocks inside the (synchronous) state transition.
 */
import type { MessagePort } from 'node:worker_threads'
import type { CallInput, CallOutcome } from './types.js'

/** Slots of the shared Int32Array. */
export const TO_MAIN = 0
export const TO_WORKER = 1
export const READY = 2
export const SIGNAL_SLOTS = 3

export interface WorkerData {
  signal: Int32Array
  port: MessagePort
}

export type ToWorker =
  | { type: 'call', input: CallInput }
  | { type: 'value', value: Uint8Array | undefined }

export type ToMain =
  | { type: 'get', key: string }
  | { type: 'done', outcome: CallOutcome }
  | { type: 'guard', reason: string }
  | { type: 'failed', message: string }

/**
 * How long a side spins before it sleeps in Atomics.wait: the other thread's answer usually comes
 * within microseconds, and waking from Atomics.wait cost ~25 µs here (docs/benchmarks.md,
 * "Contracts"), several times per call.
 */
const SPIN_MS = 0.05

/** Waits until `slot` moves from `seen`; false when `timeoutMs` passed first. */
export function waitForSignal (signal: Int32Array, slot: number, seen: number, timeoutMs: number): boolean {
  const spinUntil = performance.now() + Math.min(SPIN_MS, timeoutMs)
  while (Atomics.load(signal, slot) === seen) {
    if (performance.now() > spinUntil) return Atomics.wait(signal, slot, seen, Math.max(0, timeoutMs - SPIN_MS)) !== 'timed-out'
  }
  return true
}

/** Posts `message` and wakes the side waiting on `slot`. */
export function send<T> (port: MessagePort, signal: Int32Array, slot: number, message: T): void {
  port.postMessage(message)
  Atomics.add(signal, slot, 1)
  Atomics.notify(signal, slot)
}
