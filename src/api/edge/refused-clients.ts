/**
 * What an edge knows of the core's per-IP bucket: the clients it refuses, each until a time the
 * core named (edge-threads.ts, debitReads). Bounded, so a flood from many addresses cannot make
 * an edge hold more than `max` of them; when full, expired entries go first, then the oldest.
 */
export class RefusedClients {
  private readonly until = new Map<string, number>()

  constructor (private readonly max = 10_000, private readonly now: () => number = Date.now) {}

  get size (): number {
    return this.until.size
  }

  /** As the core said: each bucket key refused until `untilMs` (epoch ms). */
  note (entries: ReadonlyArray<readonly [key: string, untilMs: number]>): void {
    for (const [key, untilMs] of entries) {
      // re-inserted, so the Map's order stays the order of the latest word on each key
      this.until.delete(key)
      this.until.set(key, untilMs)
    }
    if (this.until.size <= this.max) return
    const now = this.now()
    for (const [key, untilMs] of this.until) if (untilMs <= now) this.until.delete(key)
    for (const key of this.until.keys()) {
      if (this.until.size <= this.max) break
      this.until.delete(key)
    }
  }

  /** Whole seconds until `key` is let in again (at least 1); undefined when it is not refused. */
  refusedFor (key: string): number | undefined {
    const untilMs = this.until.get(key)
    if (untilMs === undefined) return undefined
    const left = untilMs - this.now()
    if (left > 0) return Math.ceil(left / 1000)
    this.until.delete(key)
    return undefined
  }
}
