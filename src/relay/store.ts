/**
 * The mailbox store: its own lmdb environment (`<dataDir>/relay`), separate from the chain's,
 * so mailbox traffic never contends with block commits, and its journal beside it.
 *
 * On disk (format 3):
 *   journal-<n>.log  records: sent_at(6) ‖ id(16) ‖ recipient(32) ‖ sender(32) ‖ value (journal.ts)
 *   mailboxes-N      recipient(32) ‖ sent_at(6) ‖ id(16) ‖ sender(32) -> inbox item JSON [‖ "\n" fee_sig]
 *   tombstones       sent_at(6) ‖ id(16)                               -> the owner's delete proof
 *   envelopes        (stores written before 2026-11-22) the log: the journal's key -> the value
 * A new envelope is one record appended to the journal, in time order, where it stays and is
 * read by position. A put into a table in mailbox order would land at a random place in a large
 * tree, which costs ~50-130 µs of CPU each in small batches here (docs/relay.md). But an inbox
 * page read from a log in time order is 50 reads at random places. So the journal is merged, in
 * the background, into a table in mailbox order: once it holds MERGE_MIN envelopes and half as
 * many as the mailbox table, both are rewritten as appends into the other of two mailbox tables
 * (`mailboxes-0`, `mailboxes-1`; meta `merged` names the current one, and `journalFrom` the
 * first journal segment not merged), the store switches to it, and the old table and the merged
 * segments are dropped (an LSM tree of two levels). A page then reads neighbouring keys, about
 * three times cheaper (docs/relay.md).
 *
 * The indexes live in memory (typed arrays, mailbox-index.ts) and are rebuilt at open from the
 * mailbox table's keys and the journal's records:
 *   ids         id -> (mailbox, sent_at) of durable envelopes     dedup, delete, anti-entropy
 *   boxes       recipient -> its envelopes in (sent_at, id) order,  inbox pages, caps, anti-entropy
 *               each with where it is read from (the journal, at a position; the mailbox table;
 *               or the old log)
 *   pending     id -> decided, not yet durable                      caps, duplicate uploads
 *   deleted     id -> tombstone                                     deletes stick
 *   buckets     hour -> {live, live_xor, deleted, deleted_xor}      anti-entropy digests
 *
 * A new envelope is durable once its record is synced in the journal (journal.ts: appends
 * synced in groups). A journal segment is recycled once a merge has copied it, or once none of
 * its envelopes is live (deleted with a synced tombstone, or expired).
 *
 * The stored value is the exact inbox item the node serves, so an inbox page is a concatenation
 * of stored bytes (no decode, no re-encode).
 *
 * Expiry is `sent_at + ttl`, with one TTL for every envelope, so the old log and the tombstones
 * are their own expiry index (the sweep deletes from their start); other envelopes are found by
 * their mailboxes, whose oldest come first. A changed SVC_MAILBOX_TTL_DAYS therefore applies to
 * envelopes already stored. Expired envelopes are filtered out of every read even before the
 * sweep reaches them.
 *
 * A deleted envelope leaves a tombstone until it would have expired, so gossip and anti-entropy
 * cannot bring it back.
 *
 * All decisions (duplicates, caps) are taken on the event loop against the in-memory indexes,
 * which count an envelope from the moment it is decided; it becomes readable once it is durable.
 * `put` resolves once the journal is synced, `delete` once lmdb is.
 
 *
 * This file is the store's facade (open, put, reads, delete, close) and the one the rest of
 * src/relay imports; each other concern has a file of its own:
 *   store-state.ts    the tables, the journal and the in-memory indexes, and the operations that
 *                     keep them consistent (index an envelope, take one out, read its value)
 *   store-tables.ts   the lmdb environment: its tables, the current mailbox table, format 1
 *   store-keys.ts     the keys' byte layouts          store-values.ts  the stored value's bytes
 *   store-merge.ts    the merge into mailbox order    store-sweep.ts   the TTL sweep
 *   store-digests.ts  anti-entropy digests and id lists
 */
import { KithError } from '../errors/index.js'
import type { DeleteProof, Envelope, InboxItem } from './envelope.js'
import { journalRecord } from './journal.js'
import { IN_JOURNAL, type MailboxEntries } from './mailbox-index.js'
import { idsInBucket, type BucketDigest, type BucketIds, type BucketSources } from './store-digests.js'
import { MailboxMerge, type MergeOptions } from './store-merge.js'
import { StoreState, type Clock } from './store-state.js'
import { ExpirySweep } from './store-sweep.js'
import { AT_BYTES, CANONICAL_ID, KEY_BYTES, RECIPIENT_END, envelopeKey, tombstoneKey } from './store-keys.js'
import { decodeValue, envelopeOf, itemBytes, valueText } from './store-values.js'

export { BUCKET_SECONDS, bucketOf, type BucketDigest, type BucketIds } from './store-digests.js'
export type { Clock } from './store-state.js'

export interface RelayLimits {
  /** envelopes one mailbox may hold; a new one beyond is refused (429), never an old one evicted */
  maxPerMailbox: number
  /** envelopes one sender (X25519 key) may hold in one mailbox */
  maxPerSender: number
  /**
   * stored value bytes of the whole mailbox (Infinity: no cap); a new envelope past it is
   * refused (507), never an old one evicted. Sender keys prove nothing, so without it only the
   * per-IP rate limit bounds what strangers can make a node store.
   */
  maxStoredBytes: number
}

export const DEFAULT_LIMITS: RelayLimits = { maxPerMailbox: 10_000, maxPerSender: 1_000, maxStoredBytes: Infinity }

export interface RelayStoreOptions extends MergeOptions {
  /** retention of an envelope after its sent_at, ms */
  ttlMs: number
  clock: Clock
  limits?: Partial<RelayLimits>
  /** fsync on commit (default true) */
  sync?: boolean
}

export interface InboxPage<T> {
  items: T[]
  hasMore: boolean
}

export interface InboxOptions {
  /** unix s; items with sent_at >= since (default 0) */
  since?: number
  /** with `since`: only items after (since, after) in (sent_at, id) order, the page cursor */
  after?: string
  limit: number
  /** stop adding items once their JSON exceeds this many bytes (at least one item is returned) */
  maxBytes?: number
}

export type DeleteOutcome = 'deleted' | 'tombstoned' | 'already_deleted' | 'not_found'

/** Scratch for assembling an inbox page (grown per call when a page needs more). */
const pageBuffer = Buffer.allocUnsafe(256 * 1024)
const COMMA = 0x2c

export class RelayStore {
  private readonly state: StoreState
  private readonly merger: MailboxMerge
  private readonly sweep: ExpirySweep
  /** what the anti-entropy id lists read */
  private readonly bucketSources: BucketSources
  readonly limits: RelayLimits
  readonly ttlMs: number

  private constructor (path: string, opts: RelayStoreOptions) {
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits }
    this.ttlMs = opts.ttlMs
    const state = new StoreState(path, opts)
    this.state = state
    this.merger = new MailboxMerge(state, opts)
    this.sweep = new ExpirySweep(state)
    this.bucketSources = {
      boxes: state.boxes,
      tombstones: state.tables.tombstones,
      sentAtOf: (id) => state.sentAtOf(id),
      tombstoneSentAt: (id) => state.deleted.get(id)?.sentAt
    }
  }

  /** Opens the store and rebuilds the in-memory indexes from the keys (about 1 s per million envelopes, docs/relay.md). */
  static open (path: string, opts: RelayStoreOptions): RelayStore {
    if (!(opts.ttlMs > 0)) throw new RangeError('the mailbox TTL must be positive')
    return new RelayStore(path, opts)
  }

  /** The smallest sent_at (unix s) still live at `now` (ms): live iff sent_at*1000 + ttl > now. */
  liveFrom (now?: number): number {
    return this.state.liveFrom(now)
  }

  isExpired (sentAt: number, now?: number): boolean {
    return this.state.isExpired(sentAt, now)
  }

  /**
   * Stores an envelope (canonical id, final sent_at). Resolves true once it is on disk, false
   * when the id is already known (stored, deleted, or expired and not yet swept). Throws
   * RELAY_MAILBOX_FULL when the mailbox or this sender's share of it is at its cap.
   */
  async put (env: Envelope): Promise<boolean> {
    const state = this.state
    const waiting = state.pending.get(env.id)
    if (waiting !== undefined) {
      // the first upload may still fail; then this one stores it
      if (!await waiting.committed.then(() => true, () => false)) return await this.put(env)
    }
    if (waiting !== undefined || this.has(env.id)) {
      await state.tables.root.flushed
      return false
    }
    const now = state.clock.now()
    const box = state.mailbox(env.recipient_pub) ?? state.newMailbox(env.recipient_pub)
    if (box.length + box.pending >= this.limits.maxPerMailbox && this.liveCount(box, now) >= this.limits.maxPerMailbox) {
      throw new KithError('RELAY_MAILBOX_FULL', `mailbox ${env.recipient_pub} is full (${this.limits.maxPerMailbox} envelopes); it takes new ones as the owner deletes or they expire`)
    }
    // a sender can only be at its cap in a mailbox that holds at least that many
    if (box.length + box.pending >= this.limits.maxPerSender && this.liveSenderCount(box, env.sender_pub, now) >= this.limits.maxPerSender) {
      throw new KithError('RELAY_MAILBOX_FULL', `mailbox ${env.recipient_pub} already holds ${this.limits.maxPerSender} envelopes from sender ${env.sender_pub}, the most one sender may hold`)
    }
    const text = valueText(env)
    if (state.storedBytes + state.pendingBytes + text.length > this.limits.maxStoredBytes) {
      throw new KithError('RELAY_STORAGE_FULL', `the mailbox storage of this node is full (${this.limits.maxStoredBytes} bytes); it takes new envelopes as stored ones are deleted or expire`)
    }
    box.pending++
    state.pendingBytes += text.length
    const { record, payload } = journalRecord(KEY_BYTES + text.length)
    const key = envelopeKey(env.sent_at, env.id, env.recipient_pub, env.sender_pub, payload.subarray(0, KEY_BYTES))
    const value = payload.subarray(KEY_BYTES)
    value.write(text, 'latin1')
    const committed = state.journal.append(record).then(
      (at) => {
        box.pending--
        state.pendingBytes -= text.length
        state.storedBytes += value.length
        state.pending.delete(env.id)
        box.insert(env.sent_at, key, AT_BYTES, key, RECIPIENT_END, IN_JOURNAL, at.segment, at.offset + KEY_BYTES, value.length)
        state.ids.set(key, AT_BYTES, box.slot, env.sent_at)
        state.buckets.change(env.sent_at, 'live', +1, key, AT_BYTES)
        state.countSegment(at.segment, +1)
        this.merger.startWhenDue()
      },
      (err: unknown) => {
        box.pending--
        state.pendingBytes -= text.length
        state.pending.delete(env.id)
        state.dropIfEmpty(box)
        throw err
      })
    state.pending.set(env.id, { sentAt: env.sent_at, box, sender: env.sender_pub, committed })
    await committed
    return true
  }

  /**
   * Live envelopes of a mailbox, oldest first by (sent_at, id), as the inbox items' JSON joined
   * by commas: the served text, copied out of lmdb's read buffer into a scratch buffer and from
   * there into one string. Every member of an item is ASCII (hex, base64, digits, ISO time), so
   * latin1 is exact. A string rather than a Buffer: per-request Buffers of tens of KB are
   * external memory, and at a few thousand pages a second they drove a full (mark-compact) GC
   * every few hundred ms, 4–7 ms each.
   */
  inboxJson (pub: string, opts: InboxOptions): { json: string, count: number, hasMore: boolean } {
    const box = this.state.mailbox(pub)
    if (box === undefined) return { json: '', count: 0, hasMore: false }
    const liveFrom = this.state.liveFrom()
    const since = opts.since ?? 0
    const after = opts.after !== undefined && since >= liveFrom && CANONICAL_ID.test(opts.after) ? Buffer.from(opts.after, 'hex') : undefined
    let i = after !== undefined ? box.lowerBound(since, after) : box.lowerBound(Math.max(since, liveFrom))
    if (after !== undefined && i < box.length && box.indexOf(since, after) === i) i++
    let page = pageBuffer
    let bytes = 0
    let count = 0
    let hasMore = false
    for (; i < box.length; i++) {
      const value = this.state.valueAt(box, i)
      if (value === undefined) continue
      const item = itemBytes(value.subarray(0, value.length))
      if (count >= opts.limit || (opts.maxBytes !== undefined && count > 0 && bytes + item.length > opts.maxBytes)) {
        hasMore = true
        break
      }
      if (bytes + item.length + 1 > page.length) {
        const grown = Buffer.allocUnsafe(Math.max(2 * page.length, bytes + item.length + 1))
        page.copy(grown, 0, 0, bytes)
        page = grown
      }
      if (count > 0) page[bytes++] = COMMA
      bytes += item.copy(page, bytes)
      count++
    }
    return { json: page.toString('latin1', 0, bytes), count, hasMore }
  }

  /** Live envelopes of a mailbox, oldest first by (sent_at, id). */
  inbox (pub: string, opts: InboxOptions): InboxPage<Envelope> {
    const page = this.inboxJson(pub, opts)
    const items = page.count === 0 ? [] : (JSON.parse(`[${page.json}]`) as InboxItem[]).map((item) => this.get(item.id) ?? envelopeOf(item))
    return { items, hasMore: page.hasMore }
  }

  /** Live envelopes in a mailbox. */
  count (pub: string): number {
    const box = this.state.mailbox(pub)
    return box === undefined ? 0 : box.length - box.lowerBound(this.state.liveFrom())
  }

  /** A live envelope by id. */
  get (id: string): Envelope | undefined {
    const found = this.state.findLive(id)
    if (found === undefined || this.state.isExpired(found.sentAt)) return undefined
    const value = this.state.storedCopy(found.box, found.index)
    return value === undefined ? undefined : decodeValue(value)
  }

  /** Whether the id is known: stored, deleted (tombstone) or expired but not yet swept; or being stored. */
  has (id: string): boolean {
    const state = this.state
    return state.pending.has(id) || state.deleted.has(id) || (CANONICAL_ID.test(id) && state.ids.find(Buffer.from(id, 'hex')) >= 0)
  }

  /** The owner's delete proof of a deleted envelope. */
  tombstone (id: string): DeleteProof | undefined {
    return this.state.deleted.get(id)?.proof
  }

  /**
   * Deletes a live envelope of mailbox `pub`, keeping `proof` as its tombstone. With
   * `tombstoneUnknown`, an id this store never held gets a tombstone from the proof (a peer's
   * delete arriving before the envelope).
   */
  async delete (id: string, pub: string, proof: DeleteProof, opts: { tombstoneUnknown?: boolean } = {}): Promise<DeleteOutcome> {
    const state = this.state
    const { root, tombstones } = state.tables
    const now = state.clock.now()
    const tomb = state.deleted.get(id)
    if (tomb !== undefined) return tomb.proof.recipient_pub === pub && !state.isExpired(tomb.sentAt, now) ? 'already_deleted' : 'not_found'
    // A pending envelope is not readable yet, so its owner cannot have seen it.
    if (state.pending.has(id)) return 'not_found'
    const found = state.findLive(id)
    if (found === undefined) {
      if (opts.tombstoneUnknown !== true || state.isExpired(proof.sent_at, now)) return 'not_found'
      const stored = { ...proof, recipient_pub: pub }
      state.deleted.set(id, { sentAt: proof.sent_at, proof: stored })
      state.buckets.change(proof.sent_at, 'deleted', +1, Buffer.from(id, 'hex'))
      await tombstones.put(tombstoneKey(proof.sent_at, id), stored)
      await root.flushed
      return 'tombstoned'
    }
    const { box, index, sentAt } = found
    if (box.recipient.toString('hex') !== pub || state.isExpired(sentAt, now)) return 'not_found'
    const stored: DeleteProof = { ...proof, sent_at: sentAt }
    const keys = state.takeOut(box, index)
    state.deleted.set(id, { sentAt, proof: stored })
    state.buckets.change(sentAt, 'live', -1, keys.log, AT_BYTES)
    state.buckets.change(sentAt, 'deleted', +1, keys.log, AT_BYTES)
    await root.batch(() => {
      state.tables.removeKeys(keys)
      tombstones.put(tombstoneKey(sentAt, id), stored)
    })
    await root.flushed
    // its journal record may go only now: until the tombstone is synced, a replay must find the envelope
    if (keys.segment >= 0) state.countSegment(keys.segment, -1)
    return 'deleted'
  }

  /**
   * Deletes up to `batch` expired envelopes and tombstones in one transaction; returns how many.
   * Callers loop, yielding between batches, while it returns `batch` (store-sweep.ts).
   */
  async sweepExpired (now: number, batch: number): Promise<number> {
    return await this.sweep.sweepExpired(now, batch)
  }

  /** The digest of one bucket (zero counts when empty). */
  digest (bucket: number): BucketDigest {
    return this.state.buckets.digest(bucket)
  }

  /** Digests of the non-empty buckets in [from, to]. */
  digests (from: number, to: number): BucketDigest[] {
    return this.state.buckets.digests(from, to)
  }

  /** Ids of a bucket in (sent_at, id) order, split into live and deleted, `limit` at a time. */
  idsInBucket (bucket: number, opts: { after?: string, limit?: number } = {}): BucketIds {
    return idsInBucket(this.bucketSources, bucket, opts)
  }

  /** Envelopes and tombstones held in memory, for the operator's view of memory use. */
  /** Value bytes of the live envelopes, committed and being written: what maxStoredBytes bounds. */
  get storedBytes (): number {
    return this.state.storedBytes + this.state.pendingBytes
  }

  get size (): { envelopes: number, merged: number, tombstones: number, mailboxes: number } {
    const state = this.state
    return { envelopes: state.ids.size + state.pending.size, merged: state.mergedCount, tombstones: state.deleted.size, mailboxes: state.mailboxCount }
  }

  /**
   * Merges the journal (and an old log) into the mailbox table, a turn at a time (store-merge.ts).
   * Resolves when it is done; joins a merge already running.
   */
  async merge (): Promise<void> {
    await this.merger.merge()
  }

  async close (): Promise<void> {
    this.state.closing = true
    await this.merger.stopped()
    await this.state.journal.close()
    await this.state.tables.close()
  }

  private liveCount (box: MailboxEntries, now: number): number {
    return box.length + box.pending - box.lowerBound(this.state.liveFrom(now))
  }

  private liveSenderCount (box: MailboxEntries, sender: string, now: number): number {
    let n = box.countSender(Buffer.from(sender, 'hex'), box.lowerBound(this.state.liveFrom(now)))
    for (const p of this.state.pending.values()) if (p.box === box && p.sender === sender) n++
    return n
  }
}
