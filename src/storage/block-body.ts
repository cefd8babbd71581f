/**
 * A committed block's transactions as a few records instead of a record and an id-index entry
 * per transaction, whose random keys dirtied a page of the B-tree each (docs/storage-choice.md,
 * "Block bodies"). A body is an index record and chunks of consecutive transactions, each closed
 * at TXS_PER_CHUNK transactions or CHUNK_BYTES: one transaction, found by its id, is read from the
 * index and its one chunk, which lmdb copies out (at most CHUNK_BYTES, or that one transaction),
 * not the whole block.
 *
 * Index record, little-endian: u8 version (1) · u32 count · u32 slots (a power of two, at least
 * twice count) · u32 chunks · u32 × chunks, each chunk's first transaction · slots × (u32 index
 * + 1, or 0 when empty · u32 hash of the id), an open-addressing table of the ids, probed linearly.
 * Chunk k (1, 2, …): u32 n · u32 × (n + 1) where each record starts, then its end · the records,
 * each transaction as the UTF-8 JSON array
 * [id, type, from, to, amount, fee, payload, signature, timestamp] (+ memo when it has one).
 * An id matches /^[A-Za-z0-9][A-Za-z0-9._:-]*$/ (TransactionSchema), so it is written without
 * escapes and each record starts with `["` + id + `"`.
 */
import type { Transaction } from '../chain/index.js'

export const TXS_PER_CHUNK = 64
export const CHUNK_BYTES = 64 * 1024
const VERSION = 1
const INDEX_HEADER = 13
const QUOTE = 0x22

type TxTuple = [string, Transaction['type'], string, string, number, number, string, string, string, string?]

function tuple (tx: Transaction): TxTuple {
  const row: TxTuple = [tx.id, tx.type, tx.from, tx.to, tx.amount, tx.fee, tx.payload, tx.signature, tx.timestamp]
  if (tx.memo !== undefined) row.push(tx.memo)
  return row
}

function fromTuple (row: TxTuple): Transaction {
  const [id, type, from, to, amount, fee, payload, signature, timestamp, memo] = row
  // members in TransactionSchema's order, as a parsed transaction has them
  return memo === undefined
    ? { id, type, from, to, amount, fee, payload, signature, timestamp }
    : { id, type, from, to, amount, fee, memo, payload, signature, timestamp }
}

/** FNV-1a over the id's characters (ASCII, by the id's schema). */
function idHash (id: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

function slotsFor (count: number): number {
  let slots = 2
  while (slots < 2 * count) slots *= 2
  return slots
}

function encodeChunk (records: readonly string[], lengths: readonly number[]): Buffer {
  const start = 4 + 4 * (records.length + 1)
  const buf = Buffer.allocUnsafe(start + lengths.reduce((a, b) => a + b, 0))
  buf.writeUInt32LE(records.length, 0)
  let offset = start
  for (let i = 0; i < records.length; i++) {
    buf.writeUInt32LE(offset, 4 + 4 * i)
    buf.write(records[i], offset, lengths[i], 'utf8')
    offset += lengths[i]
  }
  buf.writeUInt32LE(offset, 4 + 4 * records.length)
  return buf
}

/** The records of a body: the index first, then chunk 1, 2, … (stored under [height, k]). */
export function encodeBlockBody (txs: readonly Transaction[]): Buffer[] {
  const records = txs.map((tx) => JSON.stringify(tuple(tx)))
  const lengths = records.map((r) => Buffer.byteLength(r, 'utf8'))
  const starts: number[] = []
  const chunks: Buffer[] = []
  for (let from = 0; from < txs.length;) {
    let to = from + 1
    let bytes = lengths[from]
    while (to < txs.length && to - from < TXS_PER_CHUNK && bytes + lengths[to] <= CHUNK_BYTES) bytes += lengths[to++]
    starts.push(from)
    chunks.push(encodeChunk(records.slice(from, to), lengths.slice(from, to)))
    from = to
  }
  const slots = slotsFor(txs.length)
  const table = INDEX_HEADER + 4 * starts.length
  const index = Buffer.alloc(table + 8 * slots)
  index.writeUInt8(VERSION, 0)
  index.writeUInt32LE(txs.length, 1)
  index.writeUInt32LE(slots, 5)
  index.writeUInt32LE(starts.length, 9)
  starts.forEach((start, k) => index.writeUInt32LE(start, INDEX_HEADER + 4 * k))
  txs.forEach((tx, i) => {
    const hash = idHash(tx.id)
    let slot = hash & (slots - 1)
    while (index.readUInt32LE(table + 8 * slot) !== 0) slot = (slot + 1) & (slots - 1)
    index.writeUInt32LE(i + 1, table + 8 * slot)
    index.writeUInt32LE(hash, table + 8 * slot + 4)
  })
  return [index, ...chunks]
}

function view (bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/** One chunk, read in place. */
class Chunk {
  private readonly bytes: Buffer
  readonly count: number

  constructor (bytes: Uint8Array) {
    this.bytes = view(bytes)
    this.count = this.bytes.readUInt32LE(0)
  }

  private record (i: number): [number, number] {
    return [this.bytes.readUInt32LE(4 + 4 * i), this.bytes.readUInt32LE(8 + 4 * i)]
  }

  /** The id at `i`: the first string of its record, read without parsing the rest. */
  idAt (i: number): string {
    const [start, end] = this.record(i)
    const close = this.bytes.indexOf(QUOTE, start + 2)
    return this.bytes.toString('latin1', start + 2, close < 0 || close > end ? end : close)
  }

  txAt (i: number): Transaction {
    const [start, end] = this.record(i)
    return fromTuple(JSON.parse(this.bytes.toString('utf8', start, end)) as TxTuple)
  }
}

/** What a body's index says, read out of lmdb's buffer at once. */
interface IndexHead {
  count: number
  /** each chunk's first transaction */
  starts: number[]
}

function readIndex (bytes: Uint8Array): { index: Buffer, head: IndexHead, table: number } {
  const index = view(bytes)
  if (index.length < INDEX_HEADER || index.readUInt8(0) !== VERSION) throw new Error('not a block body this node can read')
  const chunks = index.readUInt32LE(9)
  const starts = new Array<number>(chunks)
  for (let k = 0; k < chunks; k++) starts[k] = index.readUInt32LE(INDEX_HEADER + 4 * k)
  return { index, head: { count: index.readUInt32LE(1), starts }, table: INDEX_HEADER + 4 * chunks }
}

/** The chunk (0-based) holding transaction `i`: the last whose first transaction is at or before it. */
function chunkHolding (starts: readonly number[], i: number): number {
  let lo = 0
  let hi = starts.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if (starts[mid] <= i) lo = mid
    else hi = mid - 1
  }
  return lo
}

/**
 * A stored body, read through `read(k)`, which gives record k or undefined when the block has
 * no body (no transactions, pruned, not committed). What `read` returns may be lmdb's reused read
 * buffer, so each record is used up before the next is read.
 */
export class BlockBody {
  constructor (private readonly read: (k: number) => Uint8Array | undefined) {}

  private chunk (k: number): Chunk {
    const bytes = this.read(1 + k)
    if (bytes === undefined) throw new Error(`block body is missing its chunk ${1 + k}`)
    return new Chunk(bytes)
  }

  /** The transaction with this id and where it is in the block; undefined when the block does not hold it. */
  find (id: string): { index: number, tx: Transaction } | undefined {
    const bytes = this.read(0)
    if (bytes === undefined) return undefined
    const { index, head, table } = readIndex(bytes)
    const slots = index.readUInt32LE(5)
    const hash = idHash(id)
    // the index's entries under this hash, read before any chunk is
    const candidates: number[] = []
    for (let slot = hash & (slots - 1), probes = 0; probes < slots; slot = (slot + 1) & (slots - 1), probes++) {
      const entry = index.readUInt32LE(table + 8 * slot)
      if (entry === 0) break
      if (index.readUInt32LE(table + 8 * slot + 4) === hash) candidates.push(entry - 1)
    }
    for (const i of candidates) {
      const k = chunkHolding(head.starts, i)
      const chunk = this.chunk(k)
      if (chunk.idAt(i - head.starts[k]) === id) return { index: i, tx: chunk.txAt(i - head.starts[k]) }
    }
    return undefined
  }

  private each<T> (get: (chunk: Chunk, i: number) => T): T[] | undefined {
    const bytes = this.read(0)
    if (bytes === undefined) return undefined
    const { head } = readIndex(bytes)
    const out = new Array<T>(head.count)
    head.starts.forEach((start, k) => {
      const chunk = this.chunk(k)
      for (let i = 0; i < chunk.count; i++) out[start + i] = get(chunk, i)
    })
    return out
  }

  /** The ids in block order; undefined when there is no body. */
  ids (): string[] | undefined {
    return this.each((chunk, i) => chunk.idAt(i))
  }

  /** The transactions in block order; undefined when there is no body. */
  txs (): Transaction[] | undefined {
    return this.each((chunk, i) => chunk.txAt(i))
  }
}
