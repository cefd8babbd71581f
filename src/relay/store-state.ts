/**
 * What every part of the mailbox store works on: the lmdb tables (store-tables.ts), the journal
 * (journal.ts), and the in-memory indexes over both (mailbox-index.ts, store-digests.ts), with
 * the few operations that keep them consistent with each other: index an envelope where it
 * lies, take one out, read its value wherever it is, count the live envelopes of each journal
 * segment. The store's facade (store.ts), the merge (store-merge.ts) and the sweep
 * (store-sweep.ts) all change the store through these, so an envelope is added and removed one
 * way whichever of them does it. Rebuilt at open from the tables' keys and the journal's records.
 */
import type { DeleteProof } from './envelope.js'
import { Journal, type JournalPosition } from './journal.js'
import { IdTable, IN_JOURNAL, IN_TABLE, MailboxArena, MailboxEntries } from './mailbox-index.js'
import { BucketDigests } from './store-digests.js'
import { AT_BYTES, CANONICAL_ID, ID_END, JOURNALED, KEY_BYTES, LOG, MERGED, atPrefix, keyAt, mergedKeyAt, type EnvelopeKeys, type KeyLayout } from './store-keys.js'
import { StoreTables } from './store-tables.js'

export interface Clock {
  /** unix ms */
  now(): number
}

/** Decided, not yet committed: counts toward the caps, not readable yet. */
export interface PendingEntry {
  sentAt: number
  box: MailboxEntries
  sender: string
  /** settles once the put is committed (or has failed) */
  committed: Promise<unknown>
}

export interface Tombstone {
  sentAt: number
  proof: DeleteProof
}

/** Key buffer for synchronous reads only (lmdb copies it before the call returns). */
const readKey = Buffer.allocUnsafe(KEY_BYTES)
/** Values read from the journal for valueAt (a view, valid until the next read; grown when one needs more). */
let journalScratch = Buffer.allocUnsafe(128 * 1024)

export class StoreState {
  readonly tables: StoreTables
  readonly journal: Journal
  /** committed live envelopes: id -> (mailbox slot, sent_at) */
  readonly ids = new IdTable()
  readonly pending = new Map<string, PendingEntry>()
  readonly deleted = new Map<string, Tombstone>()
  /** mailboxes by slot (IdTable values), and their slots by recipient key */
  readonly boxes: Array<MailboxEntries | undefined> = []
  private readonly boxSlots = new Map<string, number>()
  private readonly freeSlots: number[] = []
  /** where the mailboxes' entries live */
  private readonly arena = new MailboxArena()
  readonly buckets = new BucketDigests()
  /** live envelopes read from each journal segment: one with none left is released */
  private readonly segmentLive = new Map<number, number>()
  /** live envelopes in the mailbox table (the rest are in the journal, or lmdb's log) */
  mergedCount = 0
  closing = false
  private readonly ttlMs: number
  readonly clock: Clock

  /** Opens the tables and the journal and rebuilds the indexes from their keys and records. */
  /** value bytes of the committed live envelopes (what the global byte cap counts) */
  storedBytes = 0
  /** value bytes of envelopes accepted and still being written */
  pendingBytes = 0

  constructor (path: string, opts: { ttlMs: number, clock: Clock, sync?: boolean }) {
    this.tables = new StoreTables(path, opts.sync !== false)
    this.ttlMs = opts.ttlMs
    this.clock = opts.clock
    this.load()
    // segments below `journalFrom` were merged into the mailbox table
    this.journal = new Journal(path, this.tables.journalFrom, (payload, at) => this.replay(payload, at))
  }

  /** The smallest sent_at (unix s) still live at `now` (ms): live iff sent_at*1000 + ttl > now. */
  liveFrom (now: number = this.clock.now()): number {
    return Math.floor((now - this.ttlMs) / 1000) + 1
  }

  isExpired (sentAt: number, now: number = this.clock.now()): boolean {
    return sentAt < this.liveFrom(now)
  }

  // ---- mailboxes ----

  mailbox (pub: string): MailboxEntries | undefined {
    const slot = this.boxSlots.get(pub)
    return slot === undefined ? undefined : this.boxes[slot]
  }

  newMailbox (pub: string): MailboxEntries {
    const slot = this.freeSlots.pop() ?? this.boxes.length
    const box = new MailboxEntries(Buffer.from(pub, 'hex'), slot, this.arena)
    this.boxes[slot] = box
    this.boxSlots.set(pub, slot)
    return box
  }

  dropIfEmpty (box: MailboxEntries): void {
    if (box.length > 0 || box.pending > 0) return
    this.boxSlots.delete(box.recipient.toString('hex'))
    box.release()
    this.boxes[box.slot] = undefined
    this.freeSlots.push(box.slot)
  }

  /** The recipient keys (hex) of the mailboxes held. */
  get mailboxPubs (): IterableIterator<string> {
    return this.boxSlots.keys()
  }

  get mailboxCount (): number {
    return this.boxSlots.size
  }

  // ---- finding envelopes ----

  /** Where a committed live envelope is. */
  findLive (id: string): { box: MailboxEntries, index: number, sentAt: number } | undefined {
    if (!CANONICAL_ID.test(id)) return undefined
    const bytes = Buffer.from(id, 'hex')
    const slot = this.ids.find(bytes)
    if (slot < 0) return undefined
    const box = this.boxes[this.ids.boxOf(slot)] as MailboxEntries
    const sentAt = this.ids.sentAtOf(slot)
    return { box, index: box.indexOf(sentAt, bytes), sentAt }
  }

  /** The indexed envelope a key of the log (or a journal record's key) names, unless its id is indexed under another sent_at. */
  findByLogKey (key: Buffer): { box: MailboxEntries, index: number } | undefined {
    const sentAt = key.readUIntBE(0, AT_BYTES)
    const slot = this.ids.find(key, AT_BYTES)
    if (slot < 0 || this.ids.sentAtOf(slot) !== sentAt) return undefined
    const box = this.boxes[this.ids.boxOf(slot)] as MailboxEntries
    const index = box.indexOf(sentAt, key, AT_BYTES)
    return index >= 0 ? { box, index } : undefined
  }

  sentAtOf (id: string): number | undefined {
    return this.pending.get(id)?.sentAt ?? this.deleted.get(id)?.sentAt ?? this.findLive(id)?.sentAt
  }

  /**
   * Entry i's stored value (a view of a shared read buffer, lmdb's or the journal's, valid until
   * the next read): from the mailbox table, the journal or the log.
   */
  valueAt (box: MailboxEntries, i: number): Buffer | undefined {
    switch (box.place(i)) {
      case IN_TABLE: return this.tables.mailboxTable.getBinaryFast(mergedKeyAt(box, i, readKey))
      case IN_JOURNAL: {
        const length = box.valueLength(i)
        if (length > journalScratch.length) journalScratch = Buffer.allocUnsafe(2 * length)
        return this.journal.read(box.journalSegment(i), box.journalOffset(i), length, journalScratch)
      }
      default: return this.tables.log.getBinaryFast(keyAt(box, i, readKey))
    }
  }

  /** Entry i's stored value in a buffer of its own (valueAt's is shared). */
  storedCopy (box: MailboxEntries, i: number): Buffer | undefined {
    switch (box.place(i)) {
      case IN_TABLE: return this.tables.mailboxTable.getBinary(mergedKeyAt(box, i, readKey))
      case IN_JOURNAL: return this.journal.read(box.journalSegment(i), box.journalOffset(i), box.valueLength(i))
      default: return this.tables.log.getBinary(keyAt(box, i, readKey))
    }
  }

  // ---- adding and taking out ----

  /**
   * Adds a committed envelope, by its key in `layout`, to the indexes; `recent` is tried as its
   * mailbox first. A journaled one gives its value's segment, offset and length.
   */
  index (key: Buffer, layout: KeyLayout, recent?: MailboxEntries, segment = 0, offset = 0, length = 0): MailboxEntries {
    this.storedBytes += length
    const sentAt = key.readUIntBE(layout.at, AT_BYTES)
    const r = layout.recipient
    const box = recent !== undefined && key.compare(recent.recipient, 0, 32, r, r + 32) === 0
      ? recent
      : (this.mailbox(key.toString('hex', r, r + 32)) ?? this.newMailbox(key.toString('hex', r, r + 32)))
    box.insert(sentAt, key, layout.id, key, layout.sender, layout.place, segment, offset, length)
    this.ids.set(key, layout.id, box.slot, sentAt)
    this.buckets.change(sentAt, 'live', +1, key, layout.id)
    if (layout.place === IN_TABLE) this.mergedCount++
    if (layout.place === IN_JOURNAL) this.countSegment(segment, +1)
    return box
  }

  /** Takes entry i of `box` out of the in-memory indexes; returns its keys, for `tables.removeKeys`. */
  takeOut (box: MailboxEntries, i: number): EnvelopeKeys {
    this.storedBytes -= box.valueLength(i)
    const keys = { log: keyAt(box, i), merged: mergedKeyAt(box, i), segment: box.place(i) === IN_JOURNAL ? box.journalSegment(i) : -1 }
    if (box.place(i) === IN_TABLE) this.mergedCount--
    box.removeAt(i)
    this.ids.delete(keys.log, AT_BYTES)
    this.dropIfEmpty(box)
    return keys
  }

  // ---- journal segments ----

  countSegment (segment: number, delta: 1 | -1): void {
    const n = this.segmentLive.get(segment)
    // a segment a merge has released is no longer counted
    if (n !== undefined || delta > 0) this.segmentLive.set(segment, (n ?? 0) + delta)
  }

  /** Recycles the closed journal segments that hold no live envelope (all merged, deleted or expired; a segment never counted holds none). */
  releaseEmptySegments (below = 0): void {
    for (const segment of this.journal.closedSegments) {
      if (segment < below || (this.segmentLive.get(segment) ?? 0) === 0) {
        this.journal.release(segment)
        this.segmentLive.delete(segment)
      }
    }
  }

  // ---- rebuild at open ----

  /** Rebuilds the indexes from the keys of live envelopes and tombstones. */
  private load (): void {
    const { root, log, mailboxTable, tombstones } = this.tables
    const liveFrom = this.liveFrom()
    const start = atPrefix(liveFrom)
    let last: MailboxEntries | undefined
    // keys arrive in (mailbox, sent_at, id) and then in (sent_at, id) order: inserts are appends
    // values are read for their length only (the global byte cap counts stored value bytes)
    for (const { key, value } of mailboxTable.getRange()) {
      if (key.readUIntBE(MERGED.at, AT_BYTES) >= liveFrom) last = this.index(key, MERGED, last, 0, 0, value.length)
    }
    // a merge that stopped before it dropped them from the log leaves copies there
    const copiesInLog: Buffer[] = []
    for (const { key, value } of log.getRange({ start })) {
      if (this.ids.find(key, AT_BYTES) >= 0) copiesInLog.push(Buffer.from(key))
      else last = this.index(key, LOG, last, 0, 0, value.length)
    }
    if (copiesInLog.length > 0) root.transactionSync(() => { for (const key of copiesInLog) log.removeSync(key) })
    for (const { key, value } of tombstones.getRange({ start })) {
      const sentAt = key.readUIntBE(0, AT_BYTES)
      const id = key.toString('hex', AT_BYTES, ID_END)
      this.deleted.set(id, { sentAt, proof: value })
      this.buckets.change(sentAt, 'deleted', +1, Buffer.from(id, 'hex'))
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
}
