/**
 * The mailbox's journal: the first level of its log-structured store. Every accepted envelope is
 * appended to a segment file (`journal-<n>.log` beside the lmdb files) and stays there until a
 * merge has copied it into the mailbox table (store-merge.ts); until then it is read from here, by
 * position (pread). Appends are synced in groups: the appends of one event-loop turn are written
 * together on an O_DSYNC file in the loop's check phase, so one sync covers many uploads (group
 * commit).
 *
 * Why: an lmdb commit synced per event-loop turn rewrites whole 4 KiB pages up the B-tree for a
 * handful of envelopes, and its syncs were the limit of POST /relay/broadcast (docs/relay.md).
 * Appending the same records is a few hundred bytes each. Until 2026-11-22 lmdb also took every
 * journaled envelope into a log table, once a second; the journal now is that log, which saves
 * lmdb's writer thread and the hand-over (docs/relay.md).
 *
 * Groups are written by the thread pool, one at a time: while one is on its way to the disk the
 * loop goes on parsing uploads, which become the next group, so a busy node overlaps its syncs
 * with its work and the loop never waits for the disk. (Until 2026-11-22 a group of 8 or more
 * was written synchronously, which saves the cross-thread hand-off; that won only while the load
 * generator, not the node, bounded the benchmark: with a client that leaves the node the
 * bottleneck, writing every group from the pool accepted 15% more broadcasts, docs/relay.md.)

 * Record: u32 LE payload length ‖ u32 LE crc32(payload, seeded with the segment number) ‖
 * payload. A crash can tear only groups that were never acknowledged; replay of a segment stops
 * at its first record that is incomplete or fails its checksum (after a crash the journal goes
 * on in a new segment, so nothing acknowledged lies behind a torn record).
 *
 * Released segments are recycled (renamed `spare-<n>.log`, reused as a later segment) rather
 * than deleted: overwriting blocks a file already has needs no file-size or extent change, so a
 * synced write is one data flush (half the latency of an append here, and a 10x shorter tail;
 * docs/relay.md). The old records a recycled segment still holds were checksummed with another
 * segment number, so replay never takes them for new ones.
 */
import { closeSync, constants, fsyncSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, writev, writevSync } from 'node:fs'
import { join } from 'node:path'
import { crc32 } from 'node:zlib'

const HEADER_BYTES = 8
const SEGMENT_NAME = /^journal-(\d{10})\.log$/
const SPARE_NAME = /^spare-(\d{10})\.log$/
/** Released segments kept for reuse; more are deleted. */
const MAX_SPARES = 2
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

/** Where a record's payload lies: its segment, and its byte offset in that segment's file. */
export interface JournalPosition {
  segment: number
  offset: number
}

interface Waiter {
  resolve: (at: JournalPosition) => void
  reject: (err: unknown) => void
}

export class Journal {
  private fd: number
  private segment: number
  /** bytes assigned in the current segment: the offset of the next group */
  private segmentBytes = 0
  /** segments on disk that hold records (the current one too), oldest first */
  private readonly kept: number[] = []
  /** read descriptors of kept segments, opened on first read */
  private readonly readFds = new Map<number, number>()
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
   * Opens the journal in `dir`: recycles the segments numbered below `firstKept` (their records
   * are held elsewhere), hands every intact record of the others to `replay` (oldest first; the
   * payload is a view, valid during the call) and keeps them; then starts a new segment.
   */
  constructor (private readonly dir: string, firstKept: number, replay: (payload: Buffer, at: JournalPosition) => void) {
    const existing = numbered(dir, SEGMENT_NAME)
    this.spares = numbered(dir, SPARE_NAME)
    for (const n of existing) {
      if (n < firstKept) {
        this.recycle(n)
        continue
      }
      this.kept.push(n)
      const data = readFileSync(join(dir, segmentName(n)))
      let at = 0
      while (at + HEADER_BYTES <= data.length) {
        const length = data.readUInt32LE(at)
        if (length === 0) break // no record is empty: zeros are space never written
        const end = at + HEADER_BYTES + length
        if (end > data.length) break
        const payload = data.subarray(at + HEADER_BYTES, end)
        if (crc32(payload, n) !== data.readUInt32LE(at + 4)) break
        replay(payload, { segment: n, offset: at + HEADER_BYTES })
        at = end
      }
    }
    // numbers only grow, also past the spares (a reused file never gets the number its old records
    // carry) and past the merged ones (a new segment below `firstKept` would be recycled unread at the next open)
    this.segment = Math.max(existing.at(-1) ?? 0, this.spares.at(-1) ?? 0, firstKept - 1) + 1
    this.fd = this.createSegment()
    this.kept.push(this.segment)
  }

  /** The segment appends go to now. */
  get current (): number {
    return this.segment
  }

  /** Segments that hold records and are not the current one, oldest first. */
  get closedSegments (): readonly number[] {
    return this.kept.slice(0, -1)
  }

  /**
   * Appends a record made by `journalRecord` (its header is filled here) and resolves with the
   * position of its payload once it is synced to disk.
   */
  append (record: Buffer): Promise<JournalPosition> {
    if (this.closed) return Promise.reject(new Error('the journal is closed'))
    if (this.failed !== undefined) return Promise.reject(new Error('the journal failed to write; restart the node', { cause: this.failed }))
    this.queue.push(record)
    if (!this.scheduled) {
      this.scheduled = true
      // after this turn's I/O callbacks: every upload parsed in this turn joins the group
      setImmediate(() => { this.scheduled = false; this.writeGroup() })
    }
    // one promise per record, not an async function around it: this is every broadcast's path
    return new Promise<JournalPosition>((resolve, reject) => { this.waiters.push({ resolve, reject }) })
  }

  /**
   * Reads `length` bytes at `offset` of segment `segment` (a record's payload, or part of it)
   * into `into` (a fresh buffer unless given) and returns them; undefined when the segment was
   * released.
   */
  read (segment: number, offset: number, length: number, into: Buffer = Buffer.allocUnsafe(length)): Buffer | undefined {
    let fd = this.readFds.get(segment)
    if (fd === undefined) {
      if (!this.kept.includes(segment)) return undefined
      fd = openSync(join(this.dir, segmentName(segment)), 'r')
      this.readFds.set(segment, fd)
    }
    const read = readSync(fd, into, 0, length, offset)
    if (read !== length) throw new Error(`journal: read ${read} of ${length} bytes at ${offset} of segment ${segment}`)
    return into.subarray(0, length)
  }

  /**
   * Starts a new segment once no write is under way, and returns its number: every record
   * answered before the call lies in a lower segment. (Nothing is started when the current
   * segment is still empty.)
   */
  async cut (): Promise<number> {
    while (this.writing) await new Promise<void>((resolve) => this.idle.push(resolve))
    if (this.segmentBytes > 0 && !this.closed) this.startSegment()
    return this.segment
  }

  /** Recycles a closed segment whose records are all held elsewhere (or no longer needed). */
  release (segment: number): void {
    const at = this.kept.indexOf(segment)
    if (at < 0 || segment === this.segment) return
    this.kept.splice(at, 1)
    const fd = this.readFds.get(segment)
    if (fd !== undefined) closeSync(fd)
    this.readFds.delete(segment)
    this.recycle(segment)
  }

  /** Writes what is queued, then closes the segment files. Segments stay for replay. */
  async close (): Promise<void> {
    this.closed = true
    if (this.writing) await new Promise<void>((resolve) => this.idle.push(resolve))
    this.writeGroup(true)
    closeSync(this.fd)
    for (const fd of this.readFds.values()) closeSync(fd)
    this.readFds.clear()
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

  /** Closes the current segment (its fd for writing) and starts the next. */
  private startSegment (): void {
    closeSync(this.fd)
    this.segment++
    this.fd = this.createSegment()
    this.segmentBytes = 0
    this.kept.push(this.segment)
  }

  /**
   * Writes the queued records as one group at the end of the segment and answers their appends;
   * synchronously when `sync` (at close).
   */
  private writeGroup (sync = false): void {
    if (this.writing || this.queue.length === 0) return
    const records = this.queue
    const waiters = this.waiters
    this.queue = []
    this.waiters = []
    // where the group goes: set before it is written, read when it is answered
    let segment = this.segment
    let at = 0
    const answer = (): void => {
      let offset = at
      for (let i = 0; i < waiters.length; i++) {
        if (this.failed === undefined) waiters[i].resolve({ segment, offset: offset + HEADER_BYTES })
        else waiters[i].reject(this.failed)
        offset += records[i].length
      }
    }
    if (this.failed !== undefined) return answer()
    let bytes = 0
    try {
      // a full segment is closed before the group: each group lies whole in one file
      if (this.segmentBytes >= SEGMENT_BYTES) this.startSegment()
      segment = this.segment
      for (const record of records) {
        const payload = record.subarray(HEADER_BYTES)
        record.writeUInt32LE(payload.length, 0)
        record.writeUInt32LE(crc32(payload, this.segment), 4)
        bytes += record.length
      }
      // positional: a reused segment holds older bytes past the end of what was written
      at = this.segmentBytes
      this.segmentBytes += bytes
      if (sync) {
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
