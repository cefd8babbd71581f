/**
 * Sheds transaction admissions while the event loop lags. Consensus (checking proposals, voting,
 * committing) and admission (HTTP, gossip, signature hand-off, mempool) share one thread; a node
 * that keeps admitting while its loop is late starves the work that commits what it admitted,
 * and under overload the chain stalls. While the gate is closed, POST /api/tx answers 503 with
 * Retry-After before any signature work. Gossiped transactions are still taken (unless the
 * mempool is full): they will come in a proposal anyway, and a signature verified on arrival is
 * one the proposal check, on consensus' critical path, does not wait for.
 *
 * The decision is pure (`observe` the worst lag of a window, ask `isOpen`); `watchEventLoop`
 * feeds it from node:perf_hooks.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'

export interface LagGateOptions {
  /** a window whose worst event-loop delay passes this closes the gate */
  maxLagMs: number
  /** how long the gate stays closed after such a window */
  holdMs: number
}

export const DEFAULT_LAG_GATE: LagGateOptions = { maxLagMs: 100, holdMs: 250 }

export class LagGate {
  private closedUntil = 0

  constructor (private readonly opts: LagGateOptions = DEFAULT_LAG_GATE) {}

  /** Records the worst event-loop delay seen in the window ending at `nowMs`. */
  observe (worstLagMs: number, nowMs: number): void {
    if (worstLagMs > this.opts.maxLagMs) this.closedUntil = nowMs + this.opts.holdMs
  }

  isOpen (nowMs: number): boolean {
    return nowMs >= this.closedUntil
  }
}

/** Feeds `gate` every `windowMs` with the worst event-loop delay of the window; returns a stop function. */
export function watchEventLoop (gate: LagGate, windowMs = 100): () => void {
  const histogram = monitorEventLoopDelay({ resolution: 10 })
  histogram.enable()
  const timer = setInterval(() => {
    gate.observe(histogram.max / 1e6, Date.now())
    histogram.reset()
  }, windowMs)
  timer.unref()
  return () => {
    clearInterval(timer)
    histogram.disable()
  }
}
