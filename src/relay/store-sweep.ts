/**
 * The mailbox store's TTL sweep: deletes expired envelopes and tombstones in small batches, so
 * a sweep never holds the event loop or lmdb's writer for long (the relay service calls it on a
 * timer, yielding between batches). Apart from store.ts because expiry is found by its own
 * orders: the old log and the tombstones are keyed by sent_at, so they are their own expiry
 * index and are swept from their start; merged and journaled envelopes are found by their
 * mailboxes, whose oldest come first. (Reads filter out expired envelopes before the sweep
 * reaches them.)
 */
import { AT_BYTES, ID_END, atPrefix, type EnvelopeKeys } from './store-keys.js'
import type { StoreState } from './store-state.js'

/** Mailboxes one sweep call looks at for expired merged envelopes (~1 ms of the loop) */
const SWEEP_MAILBOXES = 50_000

export class ExpirySweep {
  /** where the sweep of merged envelopes goes on from, by mailbox slot */
  private slot = 0

  constructor (private readonly state: StoreState) {}

  /**
   * Deletes up to `batch` expired envelopes and tombstones (envelopes first: the log's oldest,
   * then merged ones by mailbox) in one transaction; returns how many. Callers loop, yielding
   * between batches, while it returns `batch`.
   */
  async sweepExpired (now: number, batch: number): Promise<number> {
    const state = this.state
    const { root, log, tombstones } = state.tables
    const liveFrom = state.liveFrom(now)
    const end = atPrefix(liveFrom)
    const logKeys = [...log.getKeys({ end, limit: batch })].map((k) => Buffer.from(k))
    const taken: EnvelopeKeys[] = []
    // log keys of no indexed envelope (the id may since have been stored again under another sent_at)
    const strayLogKeys: Buffer[] = []
    for (const key of logKeys) {
      const found = state.findByLogKey(key)
      if (found !== undefined) taken.push(state.takeOut(found.box, found.index))
      else strayLogKeys.push(key)
    }
    // merged and journaled envelopes have no log key: each mailbox's oldest come first (at most
    // SWEEP_MAILBOXES mailboxes a call, going on from where the last call stopped)
    const boxes = state.boxes
    let swept = logKeys.length
    for (let visited = 0; visited < Math.min(boxes.length, SWEEP_MAILBOXES) && swept < batch; visited++) {
      this.slot = (this.slot + 1) % boxes.length
      const box = boxes[this.slot]
      for (; box !== undefined && box.length > 0 && box.sentAt(0) < liveFrom && swept < batch; swept++) taken.push(state.takeOut(box, 0))
    }
    const tombstoneKeys = swept < batch ? [...tombstones.getKeys({ end, limit: batch - swept })].map((k) => Buffer.from(k)) : []
    for (const keys of taken) state.buckets.change(keys.log.readUIntBE(0, AT_BYTES), 'live', -1, keys.log, AT_BYTES)
    for (const key of tombstoneKeys) {
      const sentAt = key.readUIntBE(0, AT_BYTES)
      const id = key.toString('hex', AT_BYTES, ID_END)
      if (state.deleted.get(id)?.sentAt === sentAt) {
        state.deleted.delete(id)
        state.buckets.change(sentAt, 'deleted', -1, Buffer.from(id, 'hex'))
      }
    }
    for (const keys of taken) if (keys.segment >= 0) state.countSegment(keys.segment, -1)
    if (swept + tombstoneKeys.length > 0) {
      await root.batch(() => {
        for (const key of strayLogKeys) log.remove(key)
        for (const keys of taken) state.tables.removeKeys(keys)
        for (const key of tombstoneKeys) tombstones.remove(key)
      })
    }
    state.releaseEmptySegments()
    return swept + tombstoneKeys.length
  }
}
