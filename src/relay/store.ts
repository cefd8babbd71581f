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
 */
import { open, type Database, type RootDatabase } from 'lmdb'
import { KithError } from '../errors.js'
import { isoSeconds, type DeleteProof, type Envelope, type InboxItem } from './envelope.js'
import { Journal, journalRecord, type JournalPosition } from './journal.js'
import { IdTable, IN_JOURNAL, IN_LOG, IN_TABLE, MailboxArena, MailboxEntries, type Place } from './mailbox-index.js'

/** Width of an anti-entropy bucket, in seconds of sent_at. */
export const BUCKET_SECONDS = 3600
/** The journal (and the log) are merged once they hold this many envelopes and half as many as the mailbox table. */
const MERGE_MIN = 20_000
/** A merge copies whole mailboxes for this long per event-loop turn (reads from the journal or the old log are at random places) */
const MERGE_TURN_MS = 5
/** and switches, or removes in one transaction, this many envelopes at a time. */
const MERGE_TURN = 2_000
/** Mailboxes one sweep call looks at for expired merged envelopes (~1 ms of the loop) */
const SWEEP_MAILBOXES = 50_000
const FORMAT = 3
const ZERO_XOR = '0'.repeat(32)
const NEWLINE = 0x0a

// key layout of the log (and, first 22 bytes, of tombstones)
const AT_BYTES = 6
const ID_END = AT_BYTES + 16
const RECIPIENT_END = ID_END + 32
const KEY_BYTES = RECIPIENT_END + 32

/** Where a key holds each field, and where an envelope indexed by such a key is read from. */
interface KeyLayout { at: number, id: number, recipient: number, sender: number, place: Place }
const LOG: KeyLayout = { at: 0, id: AT_BYTES, recipient: ID_END, sender: RECIPIENT_END, place: IN_LOG }
/** a journal record's key: the log's layout */
const JOURNALED: KeyLayout = { ...LOG, place: IN_JOURNAL }
const MERGED: KeyLayout = { at: 32, id: 32 + AT_BYTES, recipient: 0, sender: 32 + ID_END, place: IN_TABLE }

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
  /** merge the journal into the mailbox table by itself (default true; see `merge`) */
  autoMerge?: boolean
  /** the journal's size that starts a merge (default MERGE_MIN) */
  mergeMin?: number
  /** told how each merge ended (for the operator's log) */
  onMerged?: (outcome: { envelopes: number, ms: number } | { error: unknown }) => void
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

export type DeleteOutcome = 'deleted' | 'tombstoned' | 'already_deleted' | 'not_found'

/** Decided, not yet committed: counts toward the caps, not readable yet. */
interface PendingEntry {
  sentAt: number
  box: MailboxEntries
  sender: string
  /** settles once the put is committed (or has failed) */
  committed: Promise<unknown>
}

interface Tombstone {
  sentAt: number
  proof: DeleteProof
}

interface BucketState {
  live: number
  liveXor: Buffer
  deleted: number
  deletedXor: Buffer
}

export function bucketOf (sentAt: number): number {
  return Math.floor(sentAt / BUCKET_SECONDS)
}

const CANONICAL_ID = /^[0-9a-f]{32}$/

function atPrefix (sentAt: number): Buffer {
  const key = Buffer.allocUnsafe(AT_BYTES)
  key.writeUIntBE(sentAt, 0, AT_BYTES)
  return key
}

function tombstoneKey (sentAt: number, id: string): Buffer {
  const key = Buffer.allocUnsafe(ID_END)
  key.writeUIntBE(sentAt, 0, AT_BYTES)
  key.write(id, AT_BYTES, 'hex')
  return key
}

function envelopeKey (sentAt: number, id: string, recipient: string, sender: string, into: Buffer = Buffer.allocUnsafe(KEY_BYTES)): Buffer {
  into.writeUIntBE(sentAt, 0, AT_BYTES)
  into.write(id, AT_BYTES, 'hex')
  into.write(recipient, ID_END, 'hex')
  into.write(sender, RECIPIENT_END, 'hex')
  return into
}

/** The key of entry i of a mailbox in `layout`, written into `into` (a fresh buffer unless given). */
function keyAt (box: MailboxEntries, i: number, into: Buffer = Buffer.allocUnsafe(KEY_BYTES), layout: KeyLayout = LOG): Buffer {
  into.writeUIntBE(box.sentAt(i), layout.at, AT_BYTES)
  box.copyId(i, into, layout.id)
  box.recipient.copy(into, layout.recipient)
  box.copySender(i, into, layout.sender)
  return into
}

function mergedKeyAt (box: MailboxEntries, i: number, into: Buffer = Buffer.allocUnsafe(KEY_BYTES)): Buffer {
  return keyAt(box, i, into, MERGED)
}

/** An envelope's keys in the log and in a mailbox table, and its journal segment (-1 when it is not in the journal). */
interface EnvelopeKeys { log: Buffer, merged: Buffer, segment: number }

/** An async put with MDB_APPEND: lmdb's write.js takes put's options form, its typings only putSync's. */
async function appendPut (db: Database<Buffer, Buffer>, key: Buffer, value: Buffer): Promise<boolean> {
  return await (db.put as unknown as (k: Buffer, v: Buffer, o: { append: true }) => Promise<boolean>).call(db, key, value, { append: true })
}

const nextTurn = async (): Promise<void> => await new Promise((resolve) => setImmediate(resolve))

/** A binary min-heap of mailbox cursors by their entry's (sent_at, id). */
interface Cursor { box: MailboxEntries, i: number }
const before = (a: Cursor, b: Cursor): boolean => a.box.compareEntries(a.i, b.box, b.i) < 0
function siftDown (heap: Cursor[], at: number): void {
  for (;;) {
    const l = 2 * at + 1
    const r = l + 1
    let min = at
    if (l < heap.length && before(heap[l], heap[min])) min = l
    if (r < heap.length && before(heap[r], heap[min])) min = r
    if (min === at) return
    const t = heap[at]
    heap[at] = heap[min]
    heap[min] = t
    at = min
  }
}

/** Key buffer for synchronous reads only (lmdb copies it before the call returns). */
const readKey = Buffer.allocUnsafe(KEY_BYTES)
/** Values read from the journal for valueAt (a view, valid until the next read; grown when one needs more). */
let journalScratch = Buffer.allocUnsafe(128 * 1024)
/** Scratch for assembling an inbox page (grown per call when a page needs more). */
const pageBuffer = Buffer.allocUnsafe(256 * 1024)
const COMMA = 0x2c

/**
 * The stored value: the served inbox item, then the fee_sig that is stored and gossiped but never
 * served. The item is JSON.stringify(presentInboxItem(env)) written out by hand (the store's
 * tests compare them): every member of a validated envelope is hex, base64, an ISO time or an
 * integer, so nothing needs escaping and the text is ASCII (stored as latin1, byte for byte).
 */
export function valueText (env: Envelope): string {
  const item = `{"id":"${env.id}","sender_pub":"${env.sender_pub}","sender_ed25519_pub":"${env.sender_ed25519_pub}",` +
    `"recipient_pub":"${env.recipient_pub}","fee_ut":${env.fee_ut},"sent_at":${env.sent_at},"sent_at_human":"${isoSeconds(env.sent_at)}",` +
    `"nonce":"${env.nonce}","ciphertext":"${env.ciphertext}"}`
  return env.fee_sig === null ? item : `${item}\n${env.fee_sig}`
}

function itemBytes (value: Buffer): Buffer {
  const end = value.indexOf(NEWLINE)
  return end < 0 ? value : value.subarray(0, end)
}

function envelopeOf (item: InboxItem, feeSig: string | null = null): Envelope {
  return {
    id: item.id,
    sender_pub: item.sender_pub,
    recipient_pub: item.recipient_pub,
    sender_ed25519_pub: item.sender_ed25519_pub,
    fee_ut: item.fee_ut,
    fee_sig: feeSig,
    nonce: item.nonce,
    ciphertext: item.ciphertext,
    sent_at: item.sent_at
  }
}

function decodeValue (value: Buffer): Envelope {
  const item = itemBytes(value)
  return envelopeOf(JSON.parse(item.toString('utf8')) as InboxItem, item.length < value.length ? value.subarray(item.length + 1).toString('utf8') : null)
}

/** lmdb may reuse a key's buffer for the next key: keep each one. */
function * copies (keys: Iterable<Buffer>): Iterator<Buffer> {
  for (const key of keys) yield Buffer.from(key)
}

export class RelayStore {
  private readonly root: RootDatabase
  private readonly envelopes: Database<Buffer, Buffer>
  /** mailboxes-0 and mailboxes-1: one is current, the other empty or being written by a merge */
  private readonly mailboxTables: [Database<Buffer, Buffer>, Database<Buffer, Buffer>]
  private current: 0 | 1
  private readonly meta: Database<number, string>
  private readonly tombstones: Database<DeleteProof, Buffer>
  /** committed live envelopes: id -> (mailbox slot, sent_at) */
  private readonly ids = new IdTable()
  private readonly pending = new Map<string, PendingEntry>()
  private readonly deleted = new Map<string, Tombstone>()
  /** mailboxes by slot (IdTable values), and their slots by recipient key */
  private readonly boxes: Array<MailboxEntries | undefined> = []
  private readonly boxSlots = new Map<string, number>()
  private readonly freeSlots: number[] = []
  /** where the mailboxes' entries live */
  private readonly arena = new MailboxArena()
  private readonly buckets = new Map<number, BucketState>()
  private readonly journal: Journal
  /** live envelopes read from each journal segment: one with none left is released */
  private readonly segmentLive = new Map<number, number>()
  /** live envelopes in the mailbox table (the rest are in the journal, or lmdb's log) */
  private mergedCount = 0
  private merging: Promise<void> | undefined
  /** the table a merge is writing: deletes and expiry reach it too */
  private target: Database<Buffer, Buffer> | undefined
  private readonly autoMerge: boolean
  private readonly mergeMin: number
  private readonly onMerged: RelayStoreOptions['onMerged']
  /** where the sweep of merged envelopes goes on from, by mailbox slot */
  private sweepSlot = 0
  private closing = false
  readonly limits: RelayLimits
  readonly ttlMs: number
  private readonly clock: Clock

  private constructor (path: string, opts: RelayStoreOptions) {
    this.root = open({ path, compression: false, noSync: opts.sync === false, mapSize: 2 ** 36 })
    this.envelopes = this.root.openDB({ name: 'envelopes', keyEncoding: 'binary', encoding: 'binary' })
    this.mailboxTables = [0, 1].map((n) => this.root.openDB<Buffer, Buffer>({ name: `mailboxes-${n}`, keyEncoding: 'binary', encoding: 'binary' })) as [Database<Buffer, Buffer>, Database<Buffer, Buffer>]
    this.tombstones = this.root.openDB({ name: 'tombstones', keyEncoding: 'binary' })
    this.meta = this.root.openDB<number, string>({ name: 'meta' })
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits }
    this.ttlMs = opts.ttlMs
    this.clock = opts.clock
    this.autoMerge = opts.autoMerge ?? true
    this.mergeMin = opts.mergeMin ?? MERGE_MIN
    this.onMerged = opts.onMerged
    this.migrateFormat1()
    // (a merge that did not finish leaves the other table partly written: the next merge empties it)
    this.current = this.meta.get('merged') === 1 ? 1 : 0
    this.load()
    // segments below `journalFrom` were merged into the mailbox table
    this.journal = new Journal(path, Number(this.meta.get('journalFrom') ?? 0), (payload, at) => this.replay(payload, at))
  }

  /** Opens the store and rebuilds the in-memory indexes from the keys (about 1 s per million envelopes, docs/relay.md). */
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
    const waiting = this.pending.get(env.id)
    if (waiting !== undefined) {
      // the first upload may still fail; then this one stores it
      if (!await waiting.committed.then(() => true, () => false)) return await this.put(env)
    }
    if (waiting !== undefined || this.has(env.id)) {
      await this.root.flushed
      return false
    }
    const now = this.clock.now()
    const box = this.mailbox(env.recipient_pub) ?? this.newMailbox(env.recipient_pub)
    if (box.length + box.pending >= this.limits.maxPerMailbox && this.liveCount(box, now) >= this.limits.maxPerMailbox) {
      throw new KithError('RELAY_MAILBOX_FULL', `mailbox ${env.recipient_pub} is full (${this.limits.maxPerMailbox} envelopes); it takes new ones as the owner deletes or they expire`)
    }
    // a sender can only be at its cap in a mailbox that holds at least that many
    if (box.length + box.pending >= this.limits.maxPerSender && this.liveSenderCount(box, env.sender_pub, now) >= this.limits.maxPerSender) {
      throw new KithError('RELAY_MAILBOX_FULL', `mailbox ${env.recipient_pub} already holds ${this.limits.maxPerSender} envelopes from sender ${env.sender_pub}, the most one sender may hold`)
    }
    box.pending++
    const text = valueText(env)
    const { record, payload } = journalRecord(KEY_BYTES + text.length)
    const key = envelopeKey(env.sent_at, env.id, env.recipient_pub, env.sender_pub, payload.subarray(0, KEY_BYTES))
    const value = payload.subarray(KEY_BYTES)
    value.write(text, 'latin1')
    const committed = this.journal.append(record).then(
      (at) => {
        box.pending--
        this.pending.delete(env.id)
        box.insert(env.sent_at, key, AT_BYTES, key, RECIPIENT_END, IN_JOURNAL, at.segment, at.offset + KEY_BYTES, value.length)
        this.ids.set(key, AT_BYTES, box.slot, env.sent_at)
        this.changeBucket(env.sent_at, 'live', +1, key, AT_BYTES)
        this.countSegment(at.segment, +1)
        this.mergeWhenDue()
      },
      (err: unknown) => {
        box.pending--
        this.pending.delete(env.id)
        this.dropIfEmpty(box)
        throw err
      })
    this.pending.set(env.id, { sentAt: env.sent_at, box, sender: env.sender_pub, committed })
    await committed
    return true
  }

  /** Starts a merge once the journal (and lmdb's log) hold mergeMin envelopes and half as many as the mailbox table. */
  private mergeWhenDue (): void {
    if (!this.autoMerge || this.closing || this.merging !== undefined) return
    const unmerged = this.ids.size - this.mergedCount
    if (unmerged >= this.mergeMin && unmerged >= this.mergedCount / 2) this.merge().catch(() => {})
  }

  private countSegment (segment: number, delta: 1 | -1): void {
    const n = this.segmentLive.get(segment)
    // a segment a merge has released is no longer counted
    if (n !== undefined || delta > 0) this.segmentLive.set(segment, (n ?? 0) + delta)
  }

  /** Recycles the closed journal segments that hold no live envelope (all merged, deleted or expired; a segment never counted holds none). */
  private releaseEmptySegments (below = 0): void {
    for (const segment of this.journal.closedSegments) {
      if (segment < below || (this.segmentLive.get(segment) ?? 0) === 0) {
        this.journal.release(segment)
        this.segmentLive.delete(segment)
      }
    }
  }

  /** A journal record kept from before: indexed where it lies, unless it is expired, deleted or already in lmdb. */
  private replay (payload: Buffer, at: JournalPosition): void {
    if (payload.length <= KEY_BYTES) return
    const key = payload.subarray(0, KEY_BYTES)
    const id = key.toString('hex', AT_BYTES, ID_END)
    if (this.isExpired(key.readUIntBE(0, AT_BYTES)) || this.deleted.has(id) || this.ids.find(key, AT_BYTES) >= 0) return
    this.index(key, JOURNALED, undefined, at.segment, at.offset + KEY_BYTES, payload.length - KEY_BYTES)
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
    const box = this.mailbox(pub)
    if (box === undefined) return { json: '', count: 0, hasMore: false }
    const liveFrom = this.liveFrom()
    const since = opts.since ?? 0
    const after = opts.after !== undefined && since >= liveFrom && CANONICAL_ID.test(opts.after) ? Buffer.from(opts.after, 'hex') : undefined
    let i = after !== undefined ? box.lowerBound(since, after) : box.lowerBound(Math.max(since, liveFrom))
    if (after !== undefined && i < box.length && box.indexOf(since, after) === i) i++
    let page = pageBuffer
    let bytes = 0
    let count = 0
    let hasMore = false
    for (; i < box.length; i++) {
      const value = this.valueAt(box, i)
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
    const box = this.mailbox(pub)
    return box === undefined ? 0 : box.length - box.lowerBound(this.liveFrom())
  }

  /** A live envelope by id. */
  get (id: string): Envelope | undefined {
    const found = this.findLive(id)
    if (found === undefined || this.isExpired(found.sentAt)) return undefined
    const value = this.storedCopy(found.box, found.index)
    return value === undefined ? undefined : decodeValue(value)
  }

  /** Whether the id is known: stored, deleted (tombstone) or expired but not yet swept; or being stored. */
  has (id: string): boolean {
    return this.pending.has(id) || this.deleted.has(id) || (CANONICAL_ID.test(id) && this.ids.find(Buffer.from(id, 'hex')) >= 0)
  }

  /** The owner's delete proof of a deleted envelope. */
  tombstone (id: string): DeleteProof | undefined {
    return this.deleted.get(id)?.proof
  }

  /**
   * Deletes a live envelope of mailbox `pub`, keeping `proof` as its tombstone. With
   * `tombstoneUnknown`, an id this store never held gets a tombstone from the proof (a peer's
   * delete arriving before the envelope).
   */
  async delete (id: string, pub: string, proof: DeleteProof, opts: { tombstoneUnknown?: boolean } = {}): Promise<DeleteOutcome> {
    const now = this.clock.now()
    const tomb = this.deleted.get(id)
    if (tomb !== undefined) return tomb.proof.recipient_pub === pub && !this.isExpired(tomb.sentAt, now) ? 'already_deleted' : 'not_found'
    // A pending envelope is not readable yet, so its owner cannot have seen it.
    if (this.pending.has(id)) return 'not_found'
    const found = this.findLive(id)
    if (found === undefined) {
      if (opts.tombstoneUnknown !== true || this.isExpired(proof.sent_at, now)) return 'not_found'
      const stored = { ...proof, recipient_pub: pub }
      this.deleted.set(id, { sentAt: proof.sent_at, proof: stored })
      this.changeBucket(proof.sent_at, 'deleted', +1, Buffer.from(id, 'hex'))
      await this.tombstones.put(tombstoneKey(proof.sent_at, id), stored)
      await this.root.flushed
      return 'tombstoned'
    }
    const { box, index, sentAt } = found
    if (box.recipient.toString('hex') !== pub || this.isExpired(sentAt, now)) return 'not_found'
    const stored: DeleteProof = { ...proof, sent_at: sentAt }
    const keys = this.takeOut(box, index)
    this.deleted.set(id, { sentAt, proof: stored })
    this.changeBucket(sentAt, 'live', -1, keys.log, AT_BYTES)
    this.changeBucket(sentAt, 'deleted', +1, keys.log, AT_BYTES)
    await this.root.batch(() => {
      this.removeKeys(keys)
      this.tombstones.put(tombstoneKey(sentAt, id), stored)
    })
    await this.root.flushed
    // its journal record may go only now: until the tombstone is synced, a replay must find the envelope
    if (keys.segment >= 0) this.countSegment(keys.segment, -1)
    return 'deleted'
  }

  /**
   * Deletes up to `batch` expired envelopes and tombstones (envelopes first: the log's oldest,
   * then merged ones by mailbox) in one transaction; returns how many. Callers loop, yielding
   * between batches, while it returns `batch`.
   */
  async sweepExpired (now: number, batch: number): Promise<number> {
    const liveFrom = this.liveFrom(now)
    const end = atPrefix(liveFrom)
    const logKeys = [...this.envelopes.getKeys({ end, limit: batch })].map((k) => Buffer.from(k))
    const taken: EnvelopeKeys[] = []
    // log keys of no indexed envelope (the id may since have been stored again under another sent_at)
    const strayLogKeys: Buffer[] = []
    for (const key of logKeys) {
      const sentAt = key.readUIntBE(0, AT_BYTES)
      const slot = this.ids.find(key, AT_BYTES)
      const box = slot >= 0 && this.ids.sentAtOf(slot) === sentAt ? this.boxes[this.ids.boxOf(slot)] as MailboxEntries : undefined
      const i = box?.indexOf(sentAt, key, AT_BYTES) ?? -1
      if (box !== undefined && i >= 0) taken.push(this.takeOut(box, i))
      else strayLogKeys.push(key)
    }
    // merged and journaled envelopes have no log key: each mailbox's oldest come first (at most
    // SWEEP_MAILBOXES mailboxes a call, going on from where the last call stopped)
    let swept = logKeys.length
    for (let visited = 0; visited < Math.min(this.boxes.length, SWEEP_MAILBOXES) && swept < batch; visited++) {
      this.sweepSlot = (this.sweepSlot + 1) % this.boxes.length
      const box = this.boxes[this.sweepSlot]
      for (; box !== undefined && box.length > 0 && box.sentAt(0) < liveFrom && swept < batch; swept++) taken.push(this.takeOut(box, 0))
    }
    const tombstoneKeys = swept < batch ? [...this.tombstones.getKeys({ end, limit: batch - swept })].map((k) => Buffer.from(k)) : []
    for (const keys of taken) this.changeBucket(keys.log.readUIntBE(0, AT_BYTES), 'live', -1, keys.log, AT_BYTES)
    for (const key of tombstoneKeys) {
      const sentAt = key.readUIntBE(0, AT_BYTES)
      const id = key.toString('hex', AT_BYTES, ID_END)
      if (this.deleted.get(id)?.sentAt === sentAt) {
        this.deleted.delete(id)
        this.changeBucket(sentAt, 'deleted', -1, Buffer.from(id, 'hex'))
      }
    }
    for (const keys of taken) if (keys.segment >= 0) this.countSegment(keys.segment, -1)
    if (swept + tombstoneKeys.length > 0) {
      await this.root.batch(() => {
        for (const key of strayLogKeys) this.envelopes.remove(key)
        for (const keys of taken) this.removeKeys(keys)
        for (const key of tombstoneKeys) this.tombstones.remove(key)
      })
    }
    this.releaseEmptySegments()
    return swept + tombstoneKeys.length
  }

  /** The digest of one bucket (zero counts when empty). */
  digest (bucket: number): BucketDigest {
    const state = this.buckets.get(bucket)
    if (state === undefined) return { bucket, live: 0, live_xor: ZERO_XOR, deleted: 0, deleted_xor: ZERO_XOR }
    return { bucket, live: state.live, live_xor: state.liveXor.toString('hex'), deleted: state.deleted, deleted_xor: state.deletedXor.toString('hex') }
  }

  /** Digests of the non-empty buckets in [from, to]. */
  digests (from: number, to: number): BucketDigest[] {
    return [...this.buckets.keys()].filter((b) => b >= from && b <= to).sort((a, b) => a - b).map((b) => this.digest(b))
  }

  /** Ids of a bucket in (sent_at, id) order, split into live and deleted, `limit` at a time. */
  idsInBucket (bucket: number, opts: { after?: string, limit?: number } = {}): BucketIds {
    const limit = opts.limit ?? 5000
    const from = bucket * BUCKET_SECONDS
    const afterAt = opts.after !== undefined ? this.sentAtOf(opts.after) : undefined
    const start = afterAt !== undefined && opts.after !== undefined && bucketOf(afterAt) === bucket ? tombstoneKey(afterAt, opts.after) : atPrefix(from)
    const end = atPrefix(from + BUCKET_SECONDS)
    // Two sources in (sent_at, id) order, merged on their first 22 key bytes: the live envelopes
    // of every mailbox (in memory, wherever lmdb holds them), and tombstones.
    const heads = [this.liveKeys(start, from + BUCKET_SECONDS), copies(this.tombstones.getKeys({ start, end }))]
    const current = heads.map((it) => it.next())
    const live: string[] = []
    const deleted: string[] = []
    let last: string | undefined
    let more = false
    for (;;) {
      let pick = -1
      for (let h = 0; h < current.length; h++) {
        const head = current[h]
        if (head.done === true) continue
        if (pick < 0 || Buffer.compare(head.value.subarray(0, ID_END), (current[pick].value as Buffer).subarray(0, ID_END)) < 0) pick = h
      }
      if (pick < 0) break
      const key = current[pick].value as Buffer
      current[pick] = heads[pick].next()
      const fromLive = pick === 0
      const id = key.toString('hex', AT_BYTES, ID_END)
      if (id === opts.after || id === last) continue
      if (!fromLive && this.deleted.get(id)?.sentAt !== key.readUIntBE(0, AT_BYTES)) continue
      if (live.length + deleted.length >= limit) { more = true; break }
      if (fromLive) live.push(id)
      else deleted.push(id)
      last = id
    }
    return { bucket, live, deleted, ...(more && last !== undefined ? { next: last } : {}) }
  }

  /**
   * `sent_at ‖ id` (22 bytes) of the live envelopes from `start` (such a key, or a 6-byte sent_at)
   * to sent_at `to` (excluded), across all mailboxes in (sent_at, id) order: a k-way merge of
   * the mailboxes' own orders.
   */
  private * liveKeys (start: Buffer, to: number): Generator<Buffer> {
    const startAt = start.readUIntBE(0, AT_BYTES)
    const heap: Cursor[] = []
    for (const box of this.boxes) {
      if (box === undefined) continue
      const i = start.length > AT_BYTES ? box.lowerBound(startAt, start, AT_BYTES) : box.lowerBound(startAt)
      if (i < box.length && box.sentAt(i) < to) heap.push({ box, i })
    }
    for (let k = (heap.length >> 1) - 1; k >= 0; k--) siftDown(heap, k)
    while (heap.length > 0) {
      const top = heap[0]
      const key = Buffer.allocUnsafe(ID_END)
      key.writeUIntBE(top.box.sentAt(top.i), 0, AT_BYTES)
      top.box.copyId(top.i, key, AT_BYTES)
      // the caller may stop here: the mailboxes must not be read after it changes them
      yield key
      top.i++
      if (top.i >= top.box.length || top.box.sentAt(top.i) >= to) {
        const lastCursor = heap.pop() as Cursor
        if (heap.length === 0) break
        heap[0] = lastCursor
      }
      siftDown(heap, 0)
    }
  }

  /** Envelopes and tombstones held in memory, for the operator's view of memory use. */
  get size (): { envelopes: number, merged: number, tombstones: number, mailboxes: number } {
    return { envelopes: this.ids.size + this.pending.size, merged: this.mergedCount, tombstones: this.deleted.size, mailboxes: this.boxSlots.size }
  }

  /**
   * Merges the journal (and an old log) into the mailbox table (see the header): the journal
   * starts a new segment, and every live envelope of the earlier ones, of the mailbox table and
   * of the log is appended, in mailbox order, to the other mailbox table; the store switches to
   * it (recording the first segment not merged in the same commit), then recycles the merged
   * segments, empties the old table and drops the merged keys from the log. Envelopes stored
   * meanwhile stay in the journal; deletes and expiry meanwhile reach the new table too. Runs a
   * turn at a time (MERGE_TURN_MS of copying or switching, MERGE_TURN keys per removal); a crash
   * or close at any point loses nothing (the next open ignores a half-written table, which the
   * next merge empties first; recycles the segments below `journalFrom`; and drops the log's
   * keys that the mailbox table also holds). Resolves when it is done; joins a merge already
   * running.
   */
  async merge (): Promise<void> {
    const started = Date.now()
    this.merging ??= this.runMerge().then(
      () => { if (!this.closing) this.onMerged?.({ envelopes: this.mergedCount, ms: Date.now() - started }) },
      (error: unknown) => { this.onMerged?.({ error }); throw error }
    ).finally(() => { this.merging = undefined })
    await this.merging
  }

  private async runMerge (): Promise<void> {
    const target = this.mailboxTables[1 - this.current]
    await this.removeWhere(target, () => true)
    // the merge takes the journal's segments below `cutoff`; envelopes answered from here on lie in later ones
    const cutoff = await this.journal.cut()
    // (answered envelopes are indexed in a microtask after their answer: all of them by the next turn)
    await nextTurn()
    this.target = target
    // hex order is byte order: the keys come in ascending order, as appends need
    const pubs = [...this.boxSlots.keys()].sort()
    // an append out of key order is refused (resolves false), and its envelope would be lost
    let refused = 0
    const checkAppend = (ok: boolean): void => { if (!ok) refused++ }
    try {
      let written: Promise<unknown> = Promise.resolve()
      const liveFrom = this.liveFrom()
      for (let p = 0; p < pubs.length;) {
        // whole mailboxes per turn: their entries cannot shift under the copy
        for (const turnEnd = performance.now() + MERGE_TURN_MS; p < pubs.length && performance.now() < turnEnd; p++) {
          const box = this.mailbox(pubs[p])
          if (box === undefined) continue
          for (let i = box.lowerBound(liveFrom); i < box.length; i++) {
            const merged = box.place(i) === IN_TABLE
            // journaled since the merge began: it stays in the journal
            if (box.place(i) === IN_JOURNAL && box.journalSegment(i) >= cutoff) continue
            const value = this.storedCopy(box, i)
            if (value === undefined) continue
            written = appendPut(target, mergedKeyAt(box, i), value).then(checkAppend)
            // the mark moves with the entry as its mailbox changes, and goes with it when deleted
            if (!merged) box.markCopied(i)
          }
        }
        // the table is left part-written: the next merge empties it first
        if (this.closing) return
        await nextTurn()
      }
      await written
      await this.root.flushed
      if (refused > 0) throw new Error(`the merge stopped: lmdb refused ${refused} appends as out of key order (the store keeps reading the tables it had)`)
      if (this.closing) return
      // one commit: the new table, and the journal segments it took
      await this.root.batch(() => {
        this.meta.put('merged', 1 - this.current)
        this.meta.put('journalFrom', cutoff)
      })
      await this.root.flushed
    } finally {
      this.target = undefined
    }
    const old = this.mailboxTables[this.current]
    // the new table holds every merged envelope, and the log and journal still hold the others, copied ones included
    this.current = this.current === 0 ? 1 : 0
    for (let p = 0; p < pubs.length;) {
      for (const turnEnd = performance.now() + MERGE_TURN_MS; p < pubs.length && performance.now() < turnEnd; p++) {
        this.mergedCount += this.mailbox(pubs[p])?.promoteCopied() ?? 0
      }
      // (once closing, the copied marks read as the journal until the next open, which recycles the segments taken)
      if (this.closing) return
      await nextTurn()
    }
    this.releaseEmptySegments(cutoff)
    await this.removeWhere(old, () => true)
    // the log's keys of envelopes the mailbox table now holds
    await this.removeWhere(this.envelopes, (key) => {
      const sentAt = key.readUIntBE(0, AT_BYTES)
      const slot = this.ids.find(key, AT_BYTES)
      if (slot < 0 || this.ids.sentAtOf(slot) !== sentAt) return false
      const box = this.boxes[this.ids.boxOf(slot)] as MailboxEntries
      const i = box.indexOf(sentAt, key, AT_BYTES)
      return i >= 0 && box.place(i) === IN_TABLE
    })
  }

  /**
   * Removes the keys of `db` that `doomed` picks, in key order, one transaction per chunk, each
   * synced before the next. Not one transaction for all: lmdb records the pages a transaction
   * frees as one entry of its free list, and every later commit that takes pages from a huge
   * entry loads it whole and writes the rest back. After a merge had emptied a million-entry
   * table in one transaction, broadcasts cost the node ~10 µs more CPU each (docs/relay.md).
   */
  private async removeWhere (db: Database<Buffer, Buffer>, doomed: (key: Buffer) => boolean): Promise<void> {
    const chunk = MERGE_TURN
    let start: Buffer | undefined
    for (;;) {
      const keys = [...db.getKeys({ start, limit: chunk })].map((k) => Buffer.from(k))
      let removed: Promise<unknown> | undefined
      for (const key of keys) {
        if (start !== undefined && key.equals(start)) continue
        if (doomed(key)) removed = db.remove(key)
      }
      await (removed ?? nextTurn())
      if (keys.length < chunk || this.closing) return
      start = keys[keys.length - 1]
    }
  }

  async close (): Promise<void> {
    this.closing = true
    await this.merging?.catch(() => {})
    await this.journal.close()
    await this.root.flushed
    await this.root.close()
  }

  // ---- in-memory indexes ----

  /** Rebuilds the indexes from the keys of live envelopes and tombstones. */
  private load (): void {
    const liveFrom = this.liveFrom()
    const start = atPrefix(liveFrom)
    let last: MailboxEntries | undefined
    // keys arrive in (mailbox, sent_at, id) and then in (sent_at, id) order: inserts are appends
    for (const key of this.mailboxTable.getKeys()) {
      if (key.readUIntBE(MERGED.at, AT_BYTES) >= liveFrom) last = this.index(key, MERGED, last)
    }
    // a merge that stopped before it dropped them from the log leaves copies there
    const copiesInLog: Buffer[] = []
    for (const key of this.envelopes.getKeys({ start })) {
      if (this.ids.find(key, AT_BYTES) >= 0) copiesInLog.push(Buffer.from(key))
      else last = this.index(key, LOG, last)
    }
    if (copiesInLog.length > 0) this.root.transactionSync(() => { for (const key of copiesInLog) this.envelopes.removeSync(key) })
    for (const { key, value } of this.tombstones.getRange({ start })) {
      const sentAt = key.readUIntBE(0, AT_BYTES)
      const id = key.toString('hex', AT_BYTES, ID_END)
      this.deleted.set(id, { sentAt, proof: value })
      this.changeBucket(sentAt, 'deleted', +1, Buffer.from(id, 'hex'))
    }
  }

  /**
   * Adds a committed envelope, by its key in `layout`, to the indexes; `recent` is tried as its
   * mailbox first. A journaled one gives its value's segment, offset and length.
   */
  private index (key: Buffer, layout: KeyLayout, recent?: MailboxEntries, segment = 0, offset = 0, length = 0): MailboxEntries {
    const sentAt = key.readUIntBE(layout.at, AT_BYTES)
    const r = layout.recipient
    const box = recent !== undefined && key.compare(recent.recipient, 0, 32, r, r + 32) === 0
      ? recent
      : (this.mailbox(key.toString('hex', r, r + 32)) ?? this.newMailbox(key.toString('hex', r, r + 32)))
    box.insert(sentAt, key, layout.id, key, layout.sender, layout.place, segment, offset, length)
    this.ids.set(key, layout.id, box.slot, sentAt)
    this.changeBucket(sentAt, 'live', +1, key, layout.id)
    if (layout.place === IN_TABLE) this.mergedCount++
    if (layout.place === IN_JOURNAL) this.countSegment(segment, +1)
    return box
  }

  private get mailboxTable (): Database<Buffer, Buffer> {
    return this.mailboxTables[this.current]
  }

  /**
   * Entry i's stored value (a view of a shared read buffer, lmdb's or the journal's, valid until
   * the next read): from the mailbox table, the journal or the log.
   */
  private valueAt (box: MailboxEntries, i: number): Buffer | undefined {
    switch (box.place(i)) {
      case IN_TABLE: return this.mailboxTable.getBinaryFast(mergedKeyAt(box, i, readKey))
      case IN_JOURNAL: {
        const length = box.valueLength(i)
        if (length > journalScratch.length) journalScratch = Buffer.allocUnsafe(2 * length)
        return this.journal.read(box.journalSegment(i), box.journalOffset(i), length, journalScratch)
      }
      default: return this.envelopes.getBinaryFast(keyAt(box, i, readKey))
    }
  }

  /** Entry i's stored value in a buffer of its own (valueAt's is shared). */
  private storedCopy (box: MailboxEntries, i: number): Buffer | undefined {
    switch (box.place(i)) {
      case IN_TABLE: return this.mailboxTable.getBinary(mergedKeyAt(box, i, readKey))
      case IN_JOURNAL: return this.journal.read(box.journalSegment(i), box.journalOffset(i), box.valueLength(i))
      default: return this.envelopes.getBinary(keyAt(box, i, readKey))
    }
  }

  private mailbox (pub: string): MailboxEntries | undefined {
    const slot = this.boxSlots.get(pub)
    return slot === undefined ? undefined : this.boxes[slot]
  }

  private newMailbox (pub: string): MailboxEntries {
    const slot = this.freeSlots.pop() ?? this.boxes.length
    const box = new MailboxEntries(Buffer.from(pub, 'hex'), slot, this.arena)
    this.boxes[slot] = box
    this.boxSlots.set(pub, slot)
    return box
  }

  private dropIfEmpty (box: MailboxEntries): void {
    if (box.length > 0 || box.pending > 0) return
    this.boxSlots.delete(box.recipient.toString('hex'))
    box.release()
    this.boxes[box.slot] = undefined
    this.freeSlots.push(box.slot)
  }

  /** Where a committed live envelope is. */
  private findLive (id: string): { box: MailboxEntries, index: number, sentAt: number } | undefined {
    if (!CANONICAL_ID.test(id)) return undefined
    const bytes = Buffer.from(id, 'hex')
    const slot = this.ids.find(bytes)
    if (slot < 0) return undefined
    const box = this.boxes[this.ids.boxOf(slot)] as MailboxEntries
    const sentAt = this.ids.sentAtOf(slot)
    return { box, index: box.indexOf(sentAt, bytes), sentAt }
  }

  private sentAtOf (id: string): number | undefined {
    return this.pending.get(id)?.sentAt ?? this.deleted.get(id)?.sentAt ?? this.findLive(id)?.sentAt
  }

  /** Takes entry i of `box` out of the in-memory indexes; returns its keys, for `removeKeys`. */
  private takeOut (box: MailboxEntries, i: number): EnvelopeKeys {
    const keys = { log: keyAt(box, i), merged: mergedKeyAt(box, i), segment: box.place(i) === IN_JOURNAL ? box.journalSegment(i) : -1 }
    if (box.place(i) === IN_TABLE) this.mergedCount--
    box.removeAt(i)
    this.ids.delete(keys.log, AT_BYTES)
    this.dropIfEmpty(box)
    return keys
  }

  /**
   * In an lmdb batch: an envelope out of every table that may hold it (a merge may be copying it,
   * or have copied it before its mark became `merged`). A journaled envelope was never in the log.
   */
  private removeKeys (keys: EnvelopeKeys): void {
    if (keys.segment < 0) this.envelopes.remove(keys.log)
    this.mailboxTable.remove(keys.merged)
    this.target?.remove(keys.merged)
  }

  private liveCount (box: MailboxEntries, now: number): number {
    return box.length + box.pending - box.lowerBound(this.liveFrom(now))
  }

  private liveSenderCount (box: MailboxEntries, sender: string, now: number): number {
    let n = box.countSender(Buffer.from(sender, 'hex'), box.lowerBound(this.liveFrom(now)))
    for (const p of this.pending.values()) if (p.box === box && p.sender === sender) n++
    return n
  }

  /**
   * Adds (+1) or removes (-1) an id in the live or deleted half of its bucket's digest (XOR is
   * its own inverse, so both directions are the same XOR); a delete moves an id across.
   */
  private changeBucket (sentAt: number, half: 'live' | 'deleted', delta: 1 | -1, idBytes: Uint8Array, at = 0): void {
    const bucket = bucketOf(sentAt)
    let state = this.buckets.get(bucket)
    if (state === undefined) {
      state = { live: 0, liveXor: Buffer.alloc(16), deleted: 0, deletedXor: Buffer.alloc(16) }
      this.buckets.set(bucket, state)
    }
    const xor = half === 'live' ? state.liveXor : state.deletedXor
    for (let i = 0; i < 16; i++) xor[i] ^= idBytes[at + i]
    if (half === 'live') state.live += delta
    else state.deleted += delta
    if (state.live === 0 && state.deleted === 0) this.buckets.delete(bucket)
  }

  // ---- format 1 (tables keyed by mailbox, before the in-memory indexes) ----

  /** Moves a format-1 store (mailbox, ids, time, counts, sender_counts, buckets) into the log, once. */
  private migrateFormat1 (): void {
    const meta = this.meta
    // format 2 is format 3 with nothing merged yet
    if (meta.get('format') === FORMAT) return
    if (meta.get('format') === 2) {
      meta.putSync('format', FORMAT)
      return
    }
    const oldMailbox = this.root.openDB<Envelope, [string, number, string]>({ name: 'mailbox' })
    const oldIds = this.root.openDB<{ recipient_pub: string, sent_at: number, deleted?: DeleteProof }, string>({ name: 'ids' })
    const oldTables = ['time', 'counts', 'sender_counts', 'buckets'].map((name) => this.root.openDB({ name }))
    this.root.transactionSync(() => {
      for (const { value: env } of oldMailbox.getRange()) {
        this.envelopes.putSync(envelopeKey(env.sent_at, env.id, env.recipient_pub, env.sender_pub), Buffer.from(valueText(env), 'latin1'))
      }
      for (const { key: id, value } of oldIds.getRange()) {
        if (value.deleted !== undefined) this.tombstones.putSync(tombstoneKey(value.sent_at, id), { ...value.deleted, sent_at: value.sent_at })
      }
      for (const table of [oldMailbox, oldIds, ...oldTables]) table.dropSync()
      meta.putSync('format', FORMAT)
    })
  }
}
