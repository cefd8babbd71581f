/**
 * View counting without signatures (spec: the view call costs nothing): at most one view per
 * client address per post per hour. The table of recent (address, post) pairs is bounded; when
 * it is full of pairs that have not yet expired, further new pairs are not counted, so a flood
 * of addresses cannot grow memory or inflate counts without bound.
 */
export const VIEW_WINDOW_MS = 60 * 60 * 1000
export const DEFAULT_MAX_VIEW_PAIRS = 1_000_000

export class ViewLimiter {
  /** `${address} ${postId}` -> unix ms until which another view is not counted */
  private readonly until = new Map<string, number>()

  constructor (private readonly maxPairs = DEFAULT_MAX_VIEW_PAIRS, private readonly windowMs = VIEW_WINDOW_MS) {}

  /** Whether a view of `postId` from `address` at `nowMs` counts. */
  take (address: string, postId: string, nowMs: number): boolean {
    const key = `${address} ${postId}`
    const blockedUntil = this.until.get(key)
    if (blockedUntil !== undefined && blockedUntil > nowMs) return false
    if (blockedUntil === undefined && this.until.size >= this.maxPairs) {
      this.sweep(nowMs)
      if (this.until.size >= this.maxPairs) return false
    }
    // re-inserted so the map's order stays the order of expiry
    this.until.delete(key)
    this.until.set(key, nowMs + this.windowMs)
    return true
  }

  get size (): number {
    return this.until.size
  }

  /** Drops expired pairs; they are in expiry order, so this stops at the first live one. */
  sweep (nowMs: number): void {
    for (const [key, until] of this.until) {
      if (until > nowMs) break
      this.until.delete(key)
    }
  }
}
