/**
 * Anti-entropy over the mailbox store: per-hour digests of live ids and tombstones (count and
 * XOR, kept up to date as envelopes come and go) and the id lists of one hour, which peers
 * compare to find what gossip lost (sync.ts). Apart from store.ts because it only reads the
 * store: the digests are a pure tally, and the id lists see the store through `BucketSources`.
 */
import type { Database } from 'lmdb'
import type { DeleteProof } from './envelope.js'
import type { MailboxEntries } from './mailbox-index.js'
import { AT_BYTES, ID_END, atPrefix, tombstoneKey } from './store-keys.js'

/** Width of an anti-entropy bucket, in seconds of sent_at. */
export const BUCKET_SECONDS = 3600
const ZERO_XOR = '0'.repeat(32)

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

export function bucketOf (sentAt: number): number {
  return Math.floor(sentAt / BUCKET_SECONDS)
}

interface BucketState {
  live: number
  liveXor: Buffer
  deleted: number
  deletedXor: Buffer
}

/** hour -> {live, live_xor, deleted, deleted_xor} of the envelopes and tombstones the store holds. */
export class BucketDigests {
  private readonly buckets = new Map<number, BucketState>()

  /**
   * Adds (+1) or removes (-1) an id in the live or deleted half of its bucket's digest (XOR is
   * its own inverse, so both directions are the same XOR); a delete moves an id across.
   */
  change (sentAt: number, half: 'live' | 'deleted', delta: 1 | -1, idBytes: Uint8Array, at = 0): void {
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
}

/** What the id lists read: the live envelopes by mailbox (in memory), and the tombstones. */
export interface BucketSources {
  /** mailboxes by slot */
  readonly boxes: ReadonlyArray<MailboxEntries | undefined>
  readonly tombstones: Database<DeleteProof, Buffer>
  /** sent_at of an id being stored, deleted or live */
  sentAtOf: (id: string) => number | undefined
  /** sent_at of a tombstone the store holds */
  tombstoneSentAt: (id: string) => number | undefined
}

/** Ids of a bucket in (sent_at, id) order, split into live and deleted, `limit` at a time. */
export function idsInBucket (sources: BucketSources, bucket: number, opts: { after?: string, limit?: number } = {}): BucketIds {
  const limit = opts.limit ?? 5000
  const from = bucket * BUCKET_SECONDS
  const afterAt = opts.after !== undefined ? sources.sentAtOf(opts.after) : undefined
  const start = afterAt !== undefined && opts.after !== undefined && bucketOf(afterAt) === bucket ? tombstoneKey(afterAt, opts.after) : atPrefix(from)
  const end = atPrefix(from + BUCKET_SECONDS)
  // Two sources in (sent_at, id) order, merged on their first 22 key bytes: the live envelopes
  // of every mailbox (in memory, wherever lmdb holds them), and tombstones.
  const heads = [liveKeys(sources.boxes, start, from + BUCKET_SECONDS), copies(sources.tombstones.getKeys({ start, end }))]
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
    if (!fromLive && sources.tombstoneSentAt(id) !== key.readUIntBE(0, AT_BYTES)) continue
    if (live.length + deleted.length >= limit) { more = true; break }
    if (fromLive) live.push(id)
    else deleted.push(id)
    last = id
  }
  return { bucket, live, deleted, ...(more && last !== undefined ? { next: last } : {}) }
}

/** lmdb may reuse a key's buffer for the next key: keep each one. */
function * copies (keys: Iterable<Buffer>): Iterator<Buffer> {
  for (const key of keys) yield Buffer.from(key)
}

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

/**
 * `sent_at ‖ id` (22 bytes) of the live envelopes from `start` (such a key, or a 6-byte sent_at)
 * to sent_at `to` (excluded), across all mailboxes in (sent_at, id) order: a k-way merge of
 * the mailboxes' own orders.
 */
function * liveKeys (boxes: ReadonlyArray<MailboxEntries | undefined>, start: Buffer, to: number): Generator<Buffer> {
  const startAt = start.readUIntBE(0, AT_BYTES)
  const heap: Cursor[] = []
  for (const box of boxes) {
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
