/**
 * The mailbox store's in-memory indexes, built from typed arrays so that a million stored
 * envelopes are a few dozen heap objects, not millions. A full GC over a heap of small
 * objects (one entry, one id string and one sender record per envelope) paused the event
 * loop for up to half a second with 1M envelopes (docs/benchmarks.md). Here:
 *
 *   MailboxEntries  one mailbox's committed envelopes in (sent_at, id) order: a region of rows,
 *                   each sent_at (u32), where its value is (u8: the journal, the merged mailbox
 *                   table, or lmdb's log of older stores; either of the first and last while a
 *                   running merge has copied it; store-merge.ts), id (16 bytes), sender key (32
 *                   bytes), and its position in the journal (segment, offset, length)
 *   MailboxArena    where the regions live: small ones (up to SHARED_ROWS rows) in shared 1 MiB
 *                   slabs, reused through free lists by size; larger ones in buffers of their own.
 *                   A mailbox is then one small object, not five typed arrays: with arrays of its
 *                   own each mailbox cost ~1,060 bytes of heap and ~230 of malloc, and 200,000
 *                   of them a 180 ms full GC (docs/relay.md)
 *   IdTable         open-addressing hash (linear probing, backward-shift deletion) from a
 *                   16-byte id to (mailbox slot, sent_at); ids are sha256 prefixes, so their
 *                   first bytes are the hash
 *
 * 98-197 bytes per envelope: a row of 64 bytes in a region up to twice as large as needed, and
 * 34-69 bytes of the id table (24 bytes a slot, 35-70% full).
 */

/** a canonical envelope id */
export const ID_BYTES = 16
/** an X25519 key */
export const PUB_BYTES = 32

/** Where an entry's value is: its row's state byte (the merge's copied marks are two more). */
export const IN_LOG = 0
export const IN_TABLE = 1
export const IN_JOURNAL = 3
export type Place = typeof IN_LOG | typeof IN_TABLE | typeof IN_JOURNAL
/** in the log, or the journal, and copied into the table a running merge writes */
const LOG_COPIED = 2
const JOURNAL_COPIED = 4

// a row: sent_at u32 (native order, read through a Uint32Array) ‖ state u8 ‖ value length u24 LE
// ‖ id ‖ sender ‖ journal segment u32 ‖ journal offset u32 (the last three for the journal's entries)
const ROW = 64
const ROW_WORDS = ROW / 4
const STATE = 4
const LENGTH = 5
const ID = 8
const SENDER = ID + ID_BYTES
const SEGMENT_WORD = (SENDER + PUB_BYTES) / 4
const OFFSET_WORD = SEGMENT_WORD + 1
/** the smallest region, in rows; regions are powers of two */
const MIN_ROWS = 4
/** regions up to this many rows come from the shared slabs */
const SHARED_ROWS = 256
const SLAB_ROWS = 16_384
/** size classes of shared regions: MIN_ROWS << class rows */
const CLASSES = Math.log2(SHARED_ROWS / MIN_ROWS) + 1
/** a mailbox whose last entry goes gives a region larger than this back */
const KEEP_ROWS = 64

const NO_BYTES = Buffer.alloc(0)
const NO_WORDS = new Uint32Array(0)

/** Compares 16-byte ids at offsets without allocating. */
function compareIds (a: Uint8Array, aOff: number, b: Uint8Array, bOff: number): number {
  for (let i = 0; i < ID_BYTES; i++) {
    const d = a[aOff + i] - b[bOff + i]
    if (d !== 0) return d
  }
  return 0
}

/** Shared slabs of rows for small mailboxes; a region is named by slab * SLAB_ROWS + first row. */
export class MailboxArena {
  private readonly slabs: Buffer[] = []
  private readonly slabWords: Uint32Array[] = []
  /** rows handed out of the newest slab */
  private used = SLAB_ROWS
  private readonly free: number[][] = Array.from({ length: CLASSES }, () => [])

  /** A region of `rows` rows (a power of two, MIN_ROWS to SHARED_ROWS). */
  take (rows: number): number {
    const reused = this.free[Math.log2(rows / MIN_ROWS)].pop()
    if (reused !== undefined) return reused
    if (this.used + rows > SLAB_ROWS) {
      // the rest of a full slab is too small for this region: it goes to the free lists of smaller ones
      this.spare(this.slabs.length - 1, this.used)
      const bytes = Buffer.alloc(SLAB_ROWS * ROW)
      this.slabs.push(bytes)
      this.slabWords.push(new Uint32Array(bytes.buffer, bytes.byteOffset, SLAB_ROWS * ROW_WORDS))
      this.used = 0
    }
    const region = (this.slabs.length - 1) * SLAB_ROWS + this.used
    this.used += rows
    return region
  }

  give (region: number, rows: number): void {
    this.free[Math.log2(rows / MIN_ROWS)].push(region)
  }

  bytesOf (region: number): Buffer {
    return this.slabs[Math.floor(region / SLAB_ROWS)]
  }

  wordsOf (region: number): Uint32Array {
    return this.slabWords[Math.floor(region / SLAB_ROWS)]
  }

  /** Rows of all slabs, and of those the rows not in any region (free lists and the newest slab's rest). */
  get rowCounts (): { slabs: number, free: number } {
    const free = this.free.reduce((n, list, c) => n + list.length * (MIN_ROWS << c), 0)
    return { slabs: this.slabs.length * SLAB_ROWS, free: free + (this.slabs.length > 0 ? SLAB_ROWS - this.used : 0) }
  }

  /** Cuts rows [from, SLAB_ROWS) of a slab into free regions, the largest that fit first. */
  private spare (slab: number, from: number): void {
    if (slab < 0) return
    let row = from
    for (let c = CLASSES - 1; c >= 0; c--) {
      const rows = MIN_ROWS << c
      while (row + rows <= SLAB_ROWS) {
        this.free[c].push(slab * SLAB_ROWS + row)
        row += rows
      }
    }
  }
}

export class MailboxEntries {
  length = 0
  /** envelopes decided for this mailbox and not yet committed (they count toward its cap) */
  pending = 0
  /** the region's rows: a slab of the arena, or a buffer of its own (region -1) */
  private bytes: Buffer = NO_BYTES
  private words: Uint32Array = NO_WORDS
  /** the region's first row in `bytes` */
  private base = 0
  private rows = 0
  private region = -1

  /** `recipient` is the mailbox key (32 bytes); `slot` its number in the IdTable. */
  constructor (readonly recipient: Buffer, readonly slot: number, private readonly arena: MailboxArena) {}

  sentAt (i: number): number {
    return this.words[(this.base + i) * ROW_WORDS]
  }

  /** Where entry i's value is read from (a copied entry still from where it was copied). */
  place (i: number): Place {
    const state = this.bytes[(this.base + i) * ROW + STATE]
    return state === LOG_COPIED ? IN_LOG : state === JOURNAL_COPIED ? IN_JOURNAL : state as Place
  }

  /** The journal segment holding entry i (an entry in the journal). */
  journalSegment (i: number): number {
    return this.words[(this.base + i) * ROW_WORDS + SEGMENT_WORD]
  }

  /** The offset of entry i's value in its journal segment. */
  journalOffset (i: number): number {
    return this.words[(this.base + i) * ROW_WORDS + OFFSET_WORD]
  }

  /** The byte length of entry i's value (an entry in the journal). */
  valueLength (i: number): number {
    const at = (this.base + i) * ROW + LENGTH
    return this.bytes[at] | (this.bytes[at + 1] << 8) | (this.bytes[at + 2] << 16)
  }

  /**
   * Marks entry i, still read from the log or the journal, as copied by a running merge (one that
   * stops leaves the mark, which reads as before, for the next to set again).
   */
  markCopied (i: number): void {
    const at = (this.base + i) * ROW + STATE
    if (this.bytes[at] === IN_LOG) this.bytes[at] = LOG_COPIED
    else if (this.bytes[at] === IN_JOURNAL) this.bytes[at] = JOURNAL_COPIED
  }

  /** Once the merge's table is current: every copied entry is merged; returns how many. */
  promoteCopied (): number {
    let n = 0
    for (let at = this.base * ROW + STATE, end = (this.base + this.length) * ROW; at < end; at += ROW) {
      if (this.bytes[at] === LOG_COPIED || this.bytes[at] === JOURNAL_COPIED) {
        this.bytes[at] = IN_TABLE
        n++
      }
    }
    return n
  }

  idHex (i: number): string {
    const at = (this.base + i) * ROW + ID
    return this.bytes.toString('hex', at, at + ID_BYTES)
  }

  /** Copies entry i's id and sender key into `into` at the given offsets (building an lmdb key). */
  copyId (i: number, into: Buffer, at: number): void {
    const from = (this.base + i) * ROW + ID
    this.bytes.copy(into, at, from, from + ID_BYTES)
  }

  copySender (i: number, into: Buffer, at: number): void {
    const from = (this.base + i) * ROW + SENDER
    this.bytes.copy(into, at, from, from + PUB_BYTES)
  }

  /** Index of the first entry not before (sentAt, id); without an id, the first of that second. */
  lowerBound (sentAt: number, id?: Uint8Array, idOff = 0): number {
    let lo = 0
    let hi = this.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const row = this.base + mid
      const at = this.words[row * ROW_WORDS]
      const before = at < sentAt || (at === sentAt && id !== undefined && compareIds(this.bytes, row * ROW + ID, id, idOff) < 0)
      if (before) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** Index of the entry (sentAt, id), or -1. */
  indexOf (sentAt: number, id: Uint8Array, idOff = 0): number {
    const i = this.lowerBound(sentAt, id, idOff)
    return i < this.length && this.sentAt(i) === sentAt && compareIds(this.bytes, (this.base + i) * ROW + ID, id, idOff) === 0 ? i : -1
  }

  /**
   * Inserts in order (at the end for the usual newest envelope); returns its index. An entry in
   * the journal gives its value's segment, offset and length (under 16 MiB).
   */
  insert (sentAt: number, id: Buffer, idOff: number, sender: Buffer, senderOff: number, place: Place = IN_LOG, segment = 0, offset = 0, length = 0): number {
    if (this.length === this.rows) this.relocate(Math.max(MIN_ROWS, this.rows * 2))
    const i = this.lowerBound(sentAt, id, idOff)
    const row = (this.base + i) * ROW
    if (i < this.length) this.bytes.copyWithin(row + ROW, row, (this.base + this.length) * ROW)
    this.words[row / 4] = sentAt
    this.bytes[row + STATE] = place
    this.bytes[row + LENGTH] = length
    this.bytes[row + LENGTH + 1] = length >> 8
    this.bytes[row + LENGTH + 2] = length >> 16
    id.copy(this.bytes, row + ID, idOff, idOff + ID_BYTES)
    sender.copy(this.bytes, row + SENDER, senderOff, senderOff + PUB_BYTES)
    this.words[row / 4 + SEGMENT_WORD] = segment
    this.words[row / 4 + OFFSET_WORD] = offset
    this.length++
    return i
  }

  removeAt (i: number): void {
    const row = (this.base + i) * ROW
    this.bytes.copyWithin(row, row + ROW, (this.base + this.length) * ROW)
    this.length--
    if (this.length === 0 && this.rows > KEEP_ROWS) this.release()
  }

  /**
   * Gives the region back (the store drops an empty mailbox). An insert after it takes a new
   * region, so a stale reference can never write into another mailbox's rows.
   */
  release (): void {
    if (this.length > 0) throw new Error('a mailbox with entries keeps its region')
    if (this.region >= 0) this.arena.give(this.region, this.rows)
    this.bytes = NO_BYTES
    this.words = NO_WORDS
    this.base = 0
    this.rows = 0
    this.region = -1
  }

  /** Compares entry i with entry j of `other` in (sent_at, id) order. */
  compareEntries (i: number, other: MailboxEntries, j: number): number {
    const d = this.sentAt(i) - other.sentAt(j)
    return d !== 0 ? d : compareIds(this.bytes, (this.base + i) * ROW + ID, other.bytes, (other.base + j) * ROW + ID)
  }

  /** Entries from `from` on whose sender key is `sender` (32 bytes). */
  countSender (sender: Buffer, from = 0): number {
    let n = 0
    for (let at = (this.base + from) * ROW + SENDER, end = (this.base + this.length) * ROW; at < end; at += ROW) {
      if (sender.compare(this.bytes, at, at + PUB_BYTES) === 0) n++
    }
    return n
  }

  /** Moves the entries to a region of `rows` rows. */
  private relocate (rows: number): void {
    let region = -1
    let bytes: Buffer
    let words: Uint32Array
    let base = 0
    if (rows <= SHARED_ROWS) {
      region = this.arena.take(rows)
      bytes = this.arena.bytesOf(region)
      words = this.arena.wordsOf(region)
      base = region % SLAB_ROWS
    } else {
      bytes = Buffer.alloc(rows * ROW)
      words = new Uint32Array(bytes.buffer, bytes.byteOffset, rows * ROW_WORDS)
    }
    this.bytes.copy(bytes, base * ROW, this.base * ROW, (this.base + this.length) * ROW)
    if (this.region >= 0) this.arena.give(this.region, this.rows)
    this.bytes = bytes
    this.words = words
    this.base = base
    this.rows = rows
    this.region = region
  }
}

const EMPTY = -1

export class IdTable {
  size = 0
  private mask: number
  private keys: Buffer
  private boxes: Int32Array
  private sentAts: Uint32Array

  constructor (capacity = 1024) {
    let cap = 1024
    while (cap < capacity) cap *= 2
    this.mask = cap - 1
    this.keys = Buffer.alloc(cap * ID_BYTES)
    this.boxes = new Int32Array(cap).fill(EMPTY)
    this.sentAts = new Uint32Array(cap)
  }

  /** The slot holding `id`, or -1. */
  find (id: Uint8Array, off = 0): number {
    let i = this.home(id, off)
    while (this.boxes[i] !== EMPTY) {
      if (compareIds(this.keys, i * ID_BYTES, id, off) === 0) return i
      i = (i + 1) & this.mask
    }
    return -1
  }

  boxOf (slot: number): number {
    return this.boxes[slot]
  }

  sentAtOf (slot: number): number {
    return this.sentAts[slot]
  }

  /** Adds or replaces `id` -> (box, sentAt). */
  set (id: Buffer, off: number, box: number, sentAt: number): void {
    if ((this.size + 1) * 10 > (this.mask + 1) * 7) this.resize()
    let i = this.home(id, off)
    while (this.boxes[i] !== EMPTY) {
      if (compareIds(this.keys, i * ID_BYTES, id, off) === 0) break
      i = (i + 1) & this.mask
    }
    if (this.boxes[i] === EMPTY) this.size++
    id.copy(this.keys, i * ID_BYTES, off, off + ID_BYTES)
    this.boxes[i] = box
    this.sentAts[i] = sentAt
  }

  delete (id: Uint8Array, off = 0): boolean {
    let hole = this.find(id, off)
    if (hole < 0) return false
    this.size--
    // backward shift: pull later members of the probe run into the hole
    let j = hole
    for (;;) {
      j = (j + 1) & this.mask
      if (this.boxes[j] === EMPTY) break
      const home = this.home(this.keys, j * ID_BYTES)
      const between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j)
      if (between) continue
      this.keys.copy(this.keys, hole * ID_BYTES, j * ID_BYTES, (j + 1) * ID_BYTES)
      this.boxes[hole] = this.boxes[j]
      this.sentAts[hole] = this.sentAts[j]
      hole = j
    }
    this.boxes[hole] = EMPTY
    return true
  }

  private home (id: Uint8Array, off: number): number {
    return (id[off] | (id[off + 1] << 8) | (id[off + 2] << 16) | (id[off + 3] << 24)) & this.mask
  }

  private resize (): void {
    const old = { keys: this.keys, boxes: this.boxes, sentAts: this.sentAts }
    const cap = (this.mask + 1) * 2
    this.mask = cap - 1
    this.keys = Buffer.alloc(cap * ID_BYTES)
    this.boxes = new Int32Array(cap).fill(EMPTY)
    this.sentAts = new Uint32Array(cap)
    this.size = 0
    for (let i = 0; i < old.boxes.length; i++) {
      if (old.boxes[i] !== EMPTY) this.set(old.keys, i * ID_BYTES, old.boxes[i], old.sentAts[i])
    }
  }
}
