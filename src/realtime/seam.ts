/**
 * The seam between a mailbox replay and the live stream, without I/O. The subscription listens
 * live first; while the stored envelopes are replayed, live frames wait here; at the end, the
 * ones the replay already sent are dropped and the rest go out. Nothing is missed (listening
 * began before the first stored page was read) and nothing is sent twice (ids are unique).
 */
import type { Frame } from './hub.js'

export class ReplaySeam {
  private replaying = true
  private readonly replayed = new Set<string>()
  private waiting: Frame[] = []

  /** @param maxWaiting live frames held during the replay; one more is an overflow */
  constructor (private readonly maxWaiting: number) {}

  get isReplaying (): boolean {
    return this.replaying
  }

  get replayedCount (): number {
    return this.replayed.size
  }

  /** A stored envelope about to be sent by the replay; false when the replay already sent it. */
  replay (id: string): boolean {
    if (this.replayed.has(id)) return false
    this.replayed.add(id)
    return true
  }

  /**
   * A live frame: 'send' once the replay is over; 'hold' while it runs; 'overflow' when more
   * frames wait than the bound (the caller treats the connection as a slow consumer).
   */
  live (frame: Frame): 'send' | 'hold' | 'overflow' {
    if (!this.replaying) return 'send'
    if (this.waiting.length >= this.maxWaiting) return 'overflow'
    this.waiting.push(frame)
    return 'hold'
  }

  /** Ends the replay: the held frames the replay did not already send, in arrival order. */
  finish (): Frame[] {
    const out = this.waiting.filter((f) => f.envelopeId === undefined || !this.replayed.has(f.envelopeId))
    this.replaying = false
    this.waiting = []
    this.replayed.clear()
    return out
  }
}
