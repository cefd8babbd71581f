/**
 * The mailbox's write-ahead journal: what makes an accepted envelope durable before it reaches
 * lmdb. Records are appended to segment files (`journal-<n>.log` beside the lmdb files) and
 * synced in groups: the appends of one event-loop turn are written together on an O_DSYNC file in
 * the loop's check phase, so one sync covers many uploads (group commit).
 *
 * Why: an lmdb commit synced per event-loop turn rewrites whole 4 KiB pages up the B-tree for a
 * handful of envelopes, and its syncs were the limit of POST /relay/broadcast (docs/relay.md).
 * Appending the same records is a few hundred bytes each; lmdb then takes them in large batches.
 *
 * A small group is written by the thread pool, so the loop never waits for the disk when it is
 * not busy. A group of SYNC_GROUP_RECORDS or more (the node is busy) is written synchronously:
 * handing a group to the thread pool and its answer back costs more CPU than the write itself on
 * these VMs (cross-thread wake-ups: about 25 µs per envelope in all at 13 envelopes a group,
 * docs/relay.md), while the write of a reused segment takes 0.1-0.4 ms (p99 3-7 ms, when lmdb
 * is flushing). One write at a time: the next group waits, so groups are answered in order.
 *
 * Record: u32 LE payload length ‖ u32 LE crc32(payload, seeded with the segment number) ‖
 * payload. A crash can tear only groups that were never acknowledged; replay stops at the first
 * record that is incomplete or fails its checksum.
 *
 * Released segments are recycled (renamed `spare-<n>.log`, reused as a later segment) rather
 * than deleted: overwriting blocks a file already has needs no file-size or extent change, so a
 * synced write is one data flush (half the latency of an append here, and a 10x shorter tail;
 * docs/relay.md). The old records a recycled segment still holds were checksummed with another
 * segment number, so replay never takes them for new ones.
 */
import { closeSync, constants, fsyncSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writev, writevSync } from 'node:fs'
import { join } from 'node:path'
import { crc32 } from 'node:zlib'

const HEADER_BYTES = 8
const SEGMENT_NAME = /^journal-(\d{10})\.log$/
const SPARE_NAME = /^spare-(\d{10})\.log$/
/** Released segments kept for reuse; more are deleted. */
const MAX_SPARES = 2
/** Groups this large are written synchronously (see above). */
const SYNC_GROUP_RECORDS = 8
/** A new segment starts once the current one holds this many bytes (and at least one record). */
const SEGMENT_BYTES = 16 * 1024 * 1024

function segmentName (n: number): string {
  return `journal-${String(n).padStart(10, '0')}.log`
}

function spareName (n: number): string {
  return `spare-${String(n).padStart(10, '0')}.log`
}

function numbered (dir: string, pattern: RegExp): number[] {
  return readdirSync(dir).map((name) => pattern.exec(name)).filter((m) => m !== null)
    .map((m) => Number(m[1])).sort((a, b) => a - b)
}

/** A record's payload with room for its header in front: fill `payload`, then append `record`. */
export function journalRecord (payloadBytes: number): { record: Buffer, payload: Buffer } {
  const record = Buffer.allocUnsafe(HEADER_BYTES + payloadBytes)
  return { record, payload: record.subarray(HEADER_BYTES) }
}

interface Waiter {
  seq: number
  resolve: (seq: number) => void
  reject: (err: unknown) => void
}

export class Journal {
  private fd: number
  private segment: number
  /** bytes assigned in the current segment: the offset of the next group */
  private segmentBytes = 0
  /** segment of every record appended so far, by sequence number: records [firstSeq, nextSeq) */
  private readonly segmentStarts: Array<{ segment: number, firstSeq: number }> = []
  private nextSeq = 0
  private queue: Buffer[] = []
  private waiters: Waiter[] = []
  private scheduled = false
  /** a group is being written by the thread pool */
  private writing = false
  private idle: Array<() => void> = []
  /** released segments to reuse, by their former number (the number their old records were checksummed with) */
  private readonly spares: number[]
  private closed = false
  /** a failed write may have left a partial group: nothing is written or acknowledged after it */
  private failed: Error | undefined

  /**
   * Opens the journal in `dir`: hands the intact records of the existing segments to `replay`
   * (oldest first), then recycles those segments and starts a new one. `replay` must have made
   * the records durable elsewhere when it returns.
   */
  constructor (private readonly dir: string, replay: (payloads: Buffer[]) => void) {
    const existing = numbered(dir, SEGMENT_NAME)
    this.spares = numbered(dir, SPARE_NAME)
    const payloads: Buffer[] = []
    for (const n of existing) {
      const data = readFileSync(join(dir, segmentName(n)))
      let at = 0
      while (at + HEADER_BYTES <= data.length) {
        const length = data.readUInt32LE(at)
        if (length === 0) break // no record is empty: zeros are space never written
        const end = at + HEADER_BYTES + length
        if (end > data.length) break
        const payload = data.subarray(at + HEADER_BYTES, end)
        if (crc32(payload, n) !== data.readUInt32LE(at + 4)) break
        payloads.push(payload)
        at = end
      }
    }
    if (payloads.length > 0) replay(payloads)
    // numbers only grow, also past the spares: a reused file never gets the number its old records carry
    this.segment = Math.max(existing.at(-1) ?? 0, this.spares.at(-1) ?? 0) + 1
    this.fd = this.createSegment()
    for (const n of existing) this.recycle(n)
    this.segmentStarts.push({ segment: this.segment, firstSeq: 0 })
  }

  /**
   * Appends a record made by `journalRecord` (its header is filled here) and resolves with its
   * sequence number once it is synced to disk.
   */
  append (record: Buffer): Promise<number> {
    if (this.closed) return Promise.reject(new Error('the journal is closed'))
    if (this.failed !== undefined) return Promise.reject(new Error('the journal failed to write; restart the node', { cause: this.failed }))
    const seq = this.nextSeq++
    this.queue.push(record)
    if (!this.scheduled) {
      this.scheduled = true
      // after this turn's I/O callbacks: every upload parsed in this turn joins the group
      setImmediate(() => { this.scheduled = false; this.writeGroup() })
    }
    // one promise per record, not an async function around it: this is every broadcast's path
    return new Promise<number>((resolve, reject) => { this.waiters.push({ seq, resolve, reject }) })
  }

  /**
   * Recycles the segments all of whose records are below `seq` (their effects are durable
   * elsewhere). When the current segment holds only such records and nothing is queued, a new
   * segment is started first, so the current one goes too.
   */
  release (seq: number): void {
    if (!this.writing && this.queue.length === 0 && this.segmentBytes > 0 && seq >= this.nextSeq) this.startSegment()
    while (this.segmentStarts.length > 1 && this.segmentStarts[1].firstSeq <= seq) {
      const done = this.segmentStarts.shift() as { segment: number }
      this.recycle(done.segment)
    }
  }

  /** Writes what is queued, then closes the segment file. Segments stay for replay. */
  async close (): Promise<void> {
    this.closed = true
    if (this.writing) await new Promise<void>((resolve) => this.idle.push(resolve))
    this.writeGroup(true)
    closeSync(this.fd)
  }

  /**
   * Creates segment `this.segment`, from a spare if there is one; its directory entry is synced,
   * so a synced record in it is found after a power loss.
   */
  private createSegment (): number {
    const path = join(this.dir, segmentName(this.segment))
    const spare = this.spares.shift()
    if (spare !== undefined) renameSync(join(this.dir, spareName(spare)), path)
    // O_DSYNC: a write returns once its data (and the file size, when it grows) is on disk
    const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_DSYNC, 0o644)
    const dirFd = openSync(this.dir, 'r')
    try {
      fsyncSync(dirFd)
    } finally {
      closeSync(dirFd)
    }
    return fd
  }

  /** A released segment becomes a spare, or is deleted when there are enough. */
  private recycle (segment: number): void {
    const path = join(this.dir, segmentName(segment))
    if (this.spares.length >= MAX_SPARES) return rmSync(path, { force: true })
    renameSync(path, join(this.dir, spareName(segment)))
    this.spares.push(segment)
  }

  /** Closes the current segment and starts the next; its first record is the oldest of the last `unwritten` appended. */
  private startSegment (unwritten = 0): void {
    closeSync(this.fd)
    this.segment++
    this.fd = this.createSegment()
    this.segmentBytes = 0
    this.segmentStarts.push({ segment: this.segment, firstSeq: this.nextSeq - this.queue.length - unwritten })
  }

  /**
   * Writes the queued records as one group at the end of the segment and answers their appends;
   * synchronously when `sync` or when the group is large.
   */
  private writeGroup (sync = false): void {
    if (this.writing || this.queue.length === 0) return
    const records = this.queue
    const waiters = this.waiters
    this.queue = []
    this.waiters = []
    const answer = (): void => {
      for (const w of waiters) {
        if (this.failed === undefined) w.resolve(w.seq)
        else w.reject(this.failed)
      }
    }
    if (this.failed !== undefined) return answer()
    let bytes = 0
    try {
      // a full segment is closed before the group: each group lies whole in one file
      if (this.segmentBytes >= SEGMENT_BYTES) this.startSegment(records.length)
      for (const record of records) {
        const payload = record.subarray(HEADER_BYTES)
        record.writeUInt32LE(payload.length, 0)
        record.writeUInt32LE(crc32(payload, this.segment), 4)
        bytes += record.length
      }
      // positional: a reused segment holds older bytes past the end of what was written
      const at = this.segmentBytes
      this.segmentBytes += bytes
      if (sync || records.length >= SYNC_GROUP_RECORDS) {
        const written = writevSync(this.fd, records, at)
        if (written !== bytes) throw new Error(`journal: wrote ${written} of ${bytes} bytes`)
        return answer()
      }
      this.writing = true
      writev(this.fd, records, at, (err, written) => {
        this.writing = false
        if (err !== null) this.failed ??= err
        else if (written !== bytes) this.failed ??= new Error(`journal: wrote ${written} of ${bytes} bytes`)
        answer()
        for (const resolve of this.idle.splice(0)) resolve()
        if (!this.closed) this.writeGroup()
      })
    } catch (err) {
      this.writing = false
      this.failed ??= err as Error
      answer()
    }
  }
}
