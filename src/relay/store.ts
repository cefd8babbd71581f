/**
 * The mailbox store: its own lmdb environment (`<dataDir>/relay`), separate from the chain's,
 * so mailbox traffic never contends with block commits.
 *
 * Tables
 *   mailbox        [recipient_pub, sent_at, id] -> Envelope     inbox pages are one range read
 *   ids            id -> IdEntry                                 dedup, delete, tombstones
 *   time           [sent_at, id] -> 1                            sweep and anti-entropy buckets
 *   counts         recipient_pub -> number                       per-mailbox cap
 *   sender_counts  [recipient_pub, sender_pub] -> number         per-(mailbox, sender) cap
 *   buckets        hour -> BucketRecord                          anti-entropy digests
 *
 * Expiry is `sent_at + ttl`, with one TTL for every envelope, so the time index doubles as the
 * expiry index: the sweep deletes from its start. A changed SVC_MAILBOX_TTL_DAYS therefore
 * applies to envelopes already stored. Expired envelopes are filtered out of every read even
 * before the sweep reaches them.
 *
 * A deleted envelope leaves a tombstone (its id entry, with the owner's signed proof) until it
 * would have expired, so gossip and anti-entropy cannot bring it back.
 *
 * Writes decide inside the lmdb transaction and only then write: lmdb-js does not undo the puts
 * of a transaction callback that throws. `put` and `delete` resolve after `flushed` (fsync).
 */
import { open, type Database, type RootDatabase } from 'lmdb'
import { KithError } from '../errors.js'
import type { DeleteProof, Envelope } from './envelope.js'

/** Width of an anti-entropy bucket, in seconds of sent_at. */
export const BUCKET_SECONDS = 3600
const ZERO_XOR = '0'.repeat(32)
const MAX_TIME = Number.MAX_SAFE_INTEGER

export interface Clock {
  /** unix ms */
  now(): number
}

export interface RelayLimits {
  /** envelopes one mailbox may hold; a new one beyond is refused (429), never an old one evicted */
  maxPerMailbox: number
  /** envelopes one sender (X25519 key) may hold in one mailbox */
  maxPerSender: number
}

export const DEFAULT_LIMITS: RelayLimits = { maxPerMailbox: 10_000, maxPerSender: 1_000 }

export interface RelayStoreOptions {
  /** retention of an envelope after its sent_at, ms */
  ttlMs: number
  clock: Clock
  limits?: Partial<RelayLimits>
  /** fsync on commit (default true) */
  sync?: boolean
}

export interface InboxPage {
  items: Envelope[]
  hasMore: boolean
}

export interface InboxOptions {
  /** unix s; items with sent_at >= since (default 0) */
  since?: number
  /** with `since`: only items after (since, after) in (sent_at, id) order, the page cursor */
  after?: string
  limit: number
  /** stop adding items once their ciphertext text exceeds this many characters (at least one item is returned) */
  maxChars?: number
}

/** Anti-entropy summary of one hour of sent_at: live ids and tombstones, each as count and XOR. */
export interface BucketDigest {
  bucket: number
  live: number
  /** XOR of the 16-byte ids, hex */
  live_xor: string
  deleted: number
  deleted_xor: string
}

export interface BucketIds {
  bucket: number
  live: string[]
  deleted: string[]
  /** pass as `after` for the next page; absent on the last page */
  next?: string
}

interface IdEntry {
  recipient_pub: string
  sender_pub: string
  sent_at: number
  /** present once deleted: the tombstone */
  deleted?: DeleteProof
}

type BucketRecord = Omit<BucketDigest, 'bucket'>
type MailboxKey = [string, number, string]
type TimeKey = [number, string]
type SenderKey = [string, string]

type PutOutcome = 'stored' | 'known' | 'mailbox_full' | 'sender_full'
export type DeleteOutcome = 'deleted' | 'tombstoned' | 'already_deleted' | 'not_found'

export function bucketOf (sentAt: number): number {
  return Math.floor(sentAt / BUCKET_SECONDS)
}

function xorHex (a: string, b: string): string {
  const x = Buffer.from(a, 'hex')
  const y = Buffer.from(b, 'hex')
  for (let i = 0; i < x.length; i++) x[i] ^= y[i]
  return x.toString('hex')
}

export class RelayStore {
  private readonly root: RootDatabase
  private readonly mailbox: Database<Envelope, MailboxKey>
  private readonly ids: Database<IdEntry, string>
  private readonly time: Database<1, TimeKey>
  private readonly counts: Database<number, string>
  private readonly senderCounts: Database<number, SenderKey>
  private readonly buckets: Database<BucketRecord, number>
  readonly limits: RelayLimits
  readonly ttlMs: number
  private readonly clock: Clock

  private constructor (path: string, opts: RelayStoreOptions) {
    this.root = open({ path, compression: false, noSync: opts.sync === false, mapSize: 2 ** 34 })
    this.mailbox = this.root.openDB({ name: 'mailbox' })
    this.ids = this.root.openDB({ name: 'ids' })
    this.time = this.root.openDB({ name: 'time' })
    this.counts = this.root.openDB({ name: 'counts' })
    this.senderCounts = this.root.openDB({ name: 'sender_counts' })
    this.buckets = this.root.openDB({ name: 'buckets' })
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits }
    this.ttlMs = opts.ttlMs
    this.clock = opts.clock
  }

  static open (path: string, opts: RelayStoreOptions): RelayStore {
    if (!(opts.ttlMs > 0)) throw new RangeError('the mailbox TTL must be positive')
    return new RelayStore(path, opts)
  }

  /** The smallest sent_at (unix s) still live at `now` (ms): live iff sent_at*1000 + ttl > now. */
  liveFrom (now: number = this.clock.now()): number {
    return Math.floor((now - this.ttlMs) / 1000) + 1
  }

  isExpired (sentAt: number, now: number = this.clock.now()): boolean {
    return sentAt < this.liveFrom(now)
  }

  /**
   * Stores an envelope (canonical id, final sent_at). Resolves true once it is on disk, false
   * when the id is already known (stored, deleted, or expired and not yet swept). Throws
   * RELAY_MAILBOX_FULL when the mailbox or this sender's share of it is at its cap.
   */
  async put (env: Envelope): Promise<boolean> {
    const outcome = await this.root.transaction((): PutOutcome => {
      if (this.ids.get(env.id) !== undefined) return 'known'
      const now = this.clock.now()
      const r = env.recipient_pub
      if ((this.counts.get(r) ?? 0) >= this.limits.maxPerMailbox && this.liveCount(r, now) >= this.limits.maxPerMailbox) return 'mailbox_full'
      if ((this.senderCounts.get([r, env.sender_pub]) ?? 0) >= this.limits.maxPerSender &&
        this.liveSenderCount(r, env.sender_pub, now) >= this.limits.maxPerSender) return 'sender_full'
      this.mailbox.put([r, env.sent_at, env.id], env)
      this.ids.put(env.id, { recipient_pub: r, sender_pub: env.sender_pub, sent_at: env.sent_at })
      this.time.put([env.sent_at, env.id], 1)
      this.counts.put(r, (this.counts.get(r) ?? 0) + 1)
      this.senderCounts.put([r, env.sender_pub], (this.senderCounts.get([r, env.sender_pub]) ?? 0) + 1)
      this.changeBucket(env.sent_at, env.id, 'live', +1)
      return 'stored'
    })
    // Also for 'known': a concurrent put of the same id may be committed but not yet synced.
    await this.root.flushed
    if (outcome === 'mailbox_full') {
      throw new KithError('RELAY_MAILBOX_FULL', `mailbox ${env.recipient_pub} is full (${this.limits.maxPerMailbox} envelopes); it takes new ones as the owner deletes or they expire`)
    }
    if (outcome === 'sender_full') {
      throw new KithError('RELAY_MAILBOX_FULL', `mailbox ${env.recipient_pub} already holds ${this.limits.maxPerSender} envelopes from sender ${env.sender_pub}, the most one sender may hold`)
    }
    return outcome === 'stored'
  }

  /** Live envelopes of a mailbox, oldest first by (sent_at, id). */
  inbox (pub: string, opts: InboxOptions): InboxPage {
    const liveFrom = this.liveFrom()
    const since = opts.since ?? 0
    const cursor = opts.after !== undefined && since >= liveFrom ? opts.after : undefined
    const start: MailboxKey | [string, number] = cursor !== undefined ? [pub, since, cursor] : [pub, Math.max(since, liveFrom)]
    const items: Envelope[] = []
    let chars = 0
    let hasMore = false
    for (const { key, value } of this.mailbox.getRange({ start, end: [pub, MAX_TIME] })) {
      if (cursor !== undefined && key[1] === since && key[2] === cursor) continue
      if (items.length >= opts.limit || (opts.maxChars !== undefined && items.length > 0 && chars + value.ciphertext.length > opts.maxChars)) {
        hasMore = true
        break
      }
      items.push(value)
      chars += value.ciphertext.length
    }
    return { items, hasMore }
  }

  /** Live envelopes in a mailbox. */
  count (pub: string): number {
    return this.liveCount(pub, this.clock.now())
  }

  /** A live envelope by id. */
  get (id: string): Envelope | undefined {
    const entry = this.ids.get(id)
    if (entry === undefined || entry.deleted !== undefined || this.isExpired(entry.sent_at)) return undefined
    return this.mailbox.get([entry.recipient_pub, entry.sent_at, id])
  }

  /** Whether the id is known: stored, deleted (tombstone) or expired but not yet swept. */
  has (id: string): boolean {
    return this.ids.get(id) !== undefined
  }

  /** The owner's delete proof of a deleted envelope. */
  tombstone (id: string): DeleteProof | undefined {
    return this.ids.get(id)?.deleted
  }

  /**
   * Deletes a live envelope of mailbox `pub`, keeping `proof` as its tombstone. With
   * `tombstoneUnknown`, an id this store never held gets a tombstone from the proof (a peer's
   * delete arriving before the envelope).
   */
  async delete (id: string, pub: string, proof: DeleteProof, opts: { tombstoneUnknown?: boolean } = {}): Promise<DeleteOutcome> {
    const outcome = await this.root.transaction((): DeleteOutcome => {
      const entry = this.ids.get(id)
      const now = this.clock.now()
      if (entry === undefined) {
        if (opts.tombstoneUnknown !== true || this.isExpired(proof.sent_at, now)) return 'not_found'
        this.ids.put(id, { recipient_pub: pub, sender_pub: '', sent_at: proof.sent_at, deleted: proof })
        this.time.put([proof.sent_at, id], 1)
        this.changeBucket(proof.sent_at, id, 'deleted', +1)
        return 'tombstoned'
      }
      if (entry.recipient_pub !== pub || this.isExpired(entry.sent_at, now)) return 'not_found'
      if (entry.deleted !== undefined) return 'already_deleted'
      this.removeLive(id, entry)
      this.ids.put(id, { ...entry, deleted: { ...proof, sent_at: entry.sent_at } })
      this.changeBucket(entry.sent_at, id, 'live', -1)
      this.changeBucket(entry.sent_at, id, 'deleted', +1)
      return 'deleted'
    })
    await this.root.flushed
    return outcome
  }

  /**
   * Deletes up to `batch` expired envelopes and tombstones (oldest first) in one transaction;
   * returns how many. Callers loop, yielding between batches, while it returns `batch`.
   */
  async sweepExpired (now: number, batch: number): Promise<number> {
    return await this.root.transaction(() => {
      const keys = [...this.time.getKeys({ end: [this.liveFrom(now)], limit: batch })]
      for (const key of keys) {
        const [sentAt, id] = key
        const entry = this.ids.get(id)
        if (entry !== undefined && entry.deleted === undefined) {
          this.removeLive(id, entry)
          this.changeBucket(sentAt, id, 'live', -1)
        } else if (entry !== undefined) {
          this.changeBucket(sentAt, id, 'deleted', -1)
        }
        this.ids.remove(id)
        this.time.remove(key)
      }
      return keys.length
    })
  }

  /** The digest of one bucket (zero counts when empty). */
  digest (bucket: number): BucketDigest {
    return { bucket, ...(this.buckets.get(bucket) ?? { live: 0, live_xor: ZERO_XOR, deleted: 0, deleted_xor: ZERO_XOR }) }
  }

  /** Digests of the non-empty buckets in [from, to]. */
  digests (from: number, to: number): BucketDigest[] {
    const out: BucketDigest[] = []
    for (const { key, value } of this.buckets.getRange({ start: from, end: to + 1 })) out.push({ bucket: key, ...value })
    return out
  }

  /** Ids of a bucket in (sent_at, id) order, split into live and deleted, `limit` at a time. */
  idsInBucket (bucket: number, opts: { after?: string, limit?: number } = {}): BucketIds {
    const limit = opts.limit ?? 5000
    const from = bucket * BUCKET_SECONDS
    const afterAt = opts.after !== undefined ? this.ids.get(opts.after)?.sent_at : undefined
    const start: TimeKey | [number] = afterAt !== undefined && opts.after !== undefined && bucketOf(afterAt) === bucket ? [afterAt, opts.after] : [from]
    const live: string[] = []
    const deleted: string[] = []
    let last: string | undefined
    let more = false
    for (const [, id] of this.time.getKeys({ start, end: [from + BUCKET_SECONDS] })) {
      if (id === opts.after) continue
      if (live.length + deleted.length >= limit) { more = true; break }
      const entry = this.ids.get(id)
      if (entry === undefined) continue
      if (entry.deleted === undefined) live.push(id)
      else deleted.push(id)
      last = id
    }
    return { bucket, live, deleted, ...(more && last !== undefined ? { next: last } : {}) }
  }

  async close (): Promise<void> {
    await this.root.flushed
    await this.root.close()
  }

  // Helpers below run inside write transactions (or as reads of committed state).

  private liveCount (pub: string, now: number): number {
    const total = this.counts.get(pub) ?? 0
    if (total === 0) return 0
    return total - this.mailbox.getKeysCount({ start: [pub], end: [pub, this.liveFrom(now)] })
  }

  private liveSenderCount (pub: string, sender: string, now: number): number {
    let expired = 0
    for (const { value } of this.mailbox.getRange({ start: [pub], end: [pub, this.liveFrom(now)] })) {
      if (value.sender_pub === sender) expired++
    }
    return (this.senderCounts.get([pub, sender]) ?? 0) - expired
  }

  private removeLive (id: string, entry: IdEntry): void {
    const r = entry.recipient_pub
    this.mailbox.remove([r, entry.sent_at, id])
    const count = (this.counts.get(r) ?? 1) - 1
    if (count > 0) this.counts.put(r, count)
    else this.counts.remove(r)
    const senderKey: SenderKey = [r, entry.sender_pub]
    const senderCount = (this.senderCounts.get(senderKey) ?? 1) - 1
    if (senderCount > 0) this.senderCounts.put(senderKey, senderCount)
    else this.senderCounts.remove(senderKey)
  }

  /**
   * Adds (+1) or removes (-1) an id in the live or deleted half of its bucket's digest (XOR is
   * its own inverse, so both directions are the same XOR); a delete moves an id across.
   */
  private changeBucket (sentAt: number, id: string, half: 'live' | 'deleted', delta: 1 | -1): void {
    const bucket = bucketOf(sentAt)
    const next: BucketRecord = { ...(this.buckets.get(bucket) ?? { live: 0, live_xor: ZERO_XOR, deleted: 0, deleted_xor: ZERO_XOR }) }
    if (half === 'live') {
      next.live += delta
      next.live_xor = xorHex(next.live_xor, id)
    } else {
      next.deleted += delta
      next.deleted_xor = xorHex(next.deleted_xor, id)
    }
    if (next.live === 0 && next.deleted === 0) this.buckets.remove(bucket)
    else this.buckets.put(bucket, next)
  }
}
