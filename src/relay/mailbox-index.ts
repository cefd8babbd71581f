/**
 * The mailbox store's in-memory indexes, built from typed arrays so that a million stored
 * envelopes are a few dozen heap objects, not millions. A full GC over a heap of small
 * objects (one entry, one id string and one sender record per envelope) paused the event
 * loop for up to half a second with 1M envelopes (docs/benchmarks.md). Here:
 *
 *   MailboxEntries  one mailbox's committed envelopes in (sent_at, id) order: parallel arrays of
 *                   sent_at (u32), id (16 bytes), sender key (32 bytes) and which lmdb table
 *                   holds it (u8: the log, the merged mailbox table, or the log while a running
 *                   merge has copied it; store.ts)
 *   IdTable         open-addressing hash (linear probing, backward-shift deletion) from a
 *                   16-byte id to (mailbox slot, sent_at); ids are sha256 prefixes, so their
 *                   first bytes are the hash
 *
 * About 130 bytes per envelope at the arrays' worst slack.
 */

/** a canonical envelope id */
export const ID_BYTES = 16
/** an X25519 key */
export const PUB_BYTES = 32

// where an entry's value is (MailboxEntries.merged)
const IN_LOG = 0
const MERGED = 1
/** in the log, and copied into the table a running merge writes */
const COPIED = 2

/** Compares 16-byte ids at offsets without allocating. */
function compareIds (a: Uint8Array, aOff: number, b: Uint8Array, bOff: number): number {
  for (let i = 0; i < ID_BYTES; i++) {
    const d = a[aOff + i] - b[bOff + i]
    if (d !== 0) return d
  }
  return 0
}

export class MailboxEntries {
  length = 0
  /** envelopes decided for this mailbox and not yet committed (they count toward its cap) */
  pending = 0
  private at = new Uint32Array(4)
  private idBytes = Buffer.alloc(4 * ID_BYTES)
  private senderBytes = Buffer.alloc(4 * PUB_BYTES)
  private merged = new Uint8Array(4)

  /** `recipient` is the mailbox key (32 bytes); `slot` its number in the IdTable. */
  constructor (readonly recipient: Buffer, readonly slot: number) {}

  sentAt (i: number): number {
    return this.at[i]
  }

  /** Whether entry i is in the merged mailbox table (else in the log). */
  isMerged (i: number): boolean {
    return this.merged[i] === MERGED
  }

  /** Marks entry i, still read from the log, as copied by a running merge (one that stops leaves the mark, which reads as the log, for the next to set again). */
  markCopied (i: number): void {
    this.merged[i] = COPIED
  }

  /** Once the merge's table is current: every copied entry is merged; returns how many. */
  promoteCopied (): number {
    let n = 0
    for (let i = 0; i < this.length; i++) {
      if (this.merged[i] === COPIED) {
        this.merged[i] = MERGED
        n++
      }
    }
    return n
  }

  idHex (i: number): string {
    return this.idBytes.toString('hex', i * ID_BYTES, (i + 1) * ID_BYTES)
  }

  /** Copies entry i's id and sender key into `into` at the given offsets (building an lmdb key). */
  copyId (i: number, into: Buffer, at: number): void {
    this.idBytes.copy(into, at, i * ID_BYTES, (i + 1) * ID_BYTES)
  }

  copySender (i: number, into: Buffer, at: number): void {
    this.senderBytes.copy(into, at, i * PUB_BYTES, (i + 1) * PUB_BYTES)
  }

  /** Index of the first entry not before (sentAt, id); without an id, the first of that second. */
  lowerBound (sentAt: number, id?: Uint8Array, idOff = 0): number {
    let lo = 0
    let hi = this.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const at = this.at[mid]
      const before = at < sentAt || (at === sentAt && id !== undefined && compareIds(this.idBytes, mid * ID_BYTES, id, idOff) < 0)
      if (before) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** Index of the entry (sentAt, id), or -1. */
  indexOf (sentAt: number, id: Uint8Array, idOff = 0): number {
    const i = this.lowerBound(sentAt, id, idOff)
    return i < this.length && this.at[i] === sentAt && compareIds(this.idBytes, i * ID_BYTES, id, idOff) === 0 ? i : -1
  }

  /** Inserts in order (at the end for the usual newest envelope); returns its index. */
  insert (sentAt: number, id: Buffer, idOff: number, sender: Buffer, senderOff: number, merged = false): number {
    if (this.length === this.at.length) this.grow()
    const i = this.lowerBound(sentAt, id, idOff)
    if (i < this.length) {
      this.at.copyWithin(i + 1, i, this.length)
      this.merged.copyWithin(i + 1, i, this.length)
      this.idBytes.copyWithin((i + 1) * ID_BYTES, i * ID_BYTES, this.length * ID_BYTES)
      this.senderBytes.copyWithin((i + 1) * PUB_BYTES, i * PUB_BYTES, this.length * PUB_BYTES)
    }
    this.at[i] = sentAt
    this.merged[i] = merged ? MERGED : IN_LOG
    // copy, not set(subarray(...)): no view allocated for every stored envelope
    id.copy(this.idBytes, i * ID_BYTES, idOff, idOff + ID_BYTES)
    sender.copy(this.senderBytes, i * PUB_BYTES, senderOff, senderOff + PUB_BYTES)
    this.length++
    return i
  }

  removeAt (i: number): void {
    this.at.copyWithin(i, i + 1, this.length)
    this.merged.copyWithin(i, i + 1, this.length)
    this.idBytes.copyWithin(i * ID_BYTES, (i + 1) * ID_BYTES, this.length * ID_BYTES)
    this.senderBytes.copyWithin(i * PUB_BYTES, (i + 1) * PUB_BYTES, this.length * PUB_BYTES)
    this.length--
    if (this.length === 0 && this.at.length > 64) this.shrink()
  }

  /** Compares entry i with entry j of `other` in (sent_at, id) order. */
  compareEntries (i: number, other: MailboxEntries, j: number): number {
    const d = this.at[i] - other.at[j]
    return d !== 0 ? d : compareIds(this.idBytes, i * ID_BYTES, other.idBytes, j * ID_BYTES)
  }

  /** Entries from `from` on whose sender key is `sender` (32 bytes). */
  countSender (sender: Buffer, from = 0): number {
    let n = 0
    for (let i = from; i < this.length; i++) {
      if (sender.compare(this.senderBytes, i * PUB_BYTES, (i + 1) * PUB_BYTES) === 0) n++
    }
    return n
  }

  private grow (): void {
    const cap = this.at.length * 2
    const at = new Uint32Array(cap)
    at.set(this.at)
    const merged = new Uint8Array(cap)
    merged.set(this.merged)
    const ids = Buffer.alloc(cap * ID_BYTES)
    this.idBytes.copy(ids)
    const senders = Buffer.alloc(cap * PUB_BYTES)
    this.senderBytes.copy(senders)
    this.at = at
    this.merged = merged
    this.idBytes = ids
    this.senderBytes = senders
  }

  private shrink (): void {
    this.at = new Uint32Array(4)
    this.merged = new Uint8Array(4)
    this.idBytes = Buffer.alloc(4 * ID_BYTES)
    this.senderBytes = Buffer.alloc(4 * PUB_BYTES)
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
