/**
 * The mailbox's write-ahead journal: what makes an accepted envelope durable before it reaches
 * lmdb. Records are appended to segment files (`journal-<n>.log` beside the lmdb files) and
 * synced in groups: every append issued while one group is being written and fdatasync'd goes
 * into the next group, so one sync covers many uploads (group commit).
 *
 * Why: an lmdb commit synced per event-loop turn rewrites whole 4 KiB pages up the B-tree for a
 * handful of envelopes, and its syncs were the limit of POST /relay/broadcast (docs/relay.md).
 * Appending the same records is a few hundred bytes each; lmdb then takes them in large batches.
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
import { closeSync, constants, fsyncSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writev } from 'node:fs'
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

/** Groups being written at once: one would leave the disk idle while its answer travels back to the event loop. */
const MAX_GROUPS_IN_FLIGHT = 4

interface Waiter {
  resolve: () => void
  reject: (err: unknown) => void
}

interface Group {
  waiters: Waiter[]
  /** written and synced */
  done: boolean
  error?: Error
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
  /** groups being written, oldest first */
  private readonly inFlight: Group[] = []
  private scheduled = false
  private idle: Array<() => void> = []
  /** released segments to reuse, by their former number (the number their old records were checksummed with) */
  private readonly spares: number[]
  private closed = false
  /** a failed write may have left a partial group: nothing is acknowledged after it */
  private failed: Error | undefined

  /**
   * Opens the journal in `dir`: hands the intact records of the existing segments to `replay`
   * (oldest first), then removes those segments and starts a new one. `replay` must have made
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
  async append (record: Buffer): Promise<number> {
    if (this.closed) throw new Error('the journal is closed')
    if (this.failed !== undefined) throw new Error('the journal failed to write; restart the node', { cause: this.failed })
    const seq = this.nextSeq++
    this.queue.push(record)
    await new Promise<void>((resolve, reject) => {
      this.waiters.push({ resolve, reject })
      if (!this.scheduled) {
        this.scheduled = true
        // after this turn's I/O callbacks: every upload parsed in this turn joins the group
        setImmediate(() => { this.scheduled = false; this.writeGroups() })
      }
    })
    return seq
  }

  /**
   * Removes the segments all of whose records are below `seq` (their effects are durable
   * elsewhere). When the current segment holds only such records and nothing is being written,
   * a new segment is started first, so the current one goes too.
   */
  release (seq: number): void {
    if (this.inFlight.length === 0 && this.queue.length === 0 && this.segmentBytes > 0 && seq >= this.nextSeq) this.startSegment()
    while (this.segmentStarts.length > 1 && this.segmentStarts[1].firstSeq <= seq) {
      const done = this.segmentStarts.shift() as { segment: number }
      this.recycle(done.segment)
    }
  }

  /** Waits for the groups being written, then closes the segment file. Segments stay for replay. */
  async close (): Promise<void> {
    this.closed = true
    if (this.inFlight.length > 0 || this.queue.length > 0) await new Promise<void>((resolve) => this.idle.push(resolve))
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
    // O_DSYNC: a write returns once its data (and the file size) is on disk: one trip to the thread pool per group
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

  private startSegment (): void {
    closeSync(this.fd)
    this.segment++
    this.fd = this.createSegment()
    this.segmentBytes = 0
    this.segmentStarts.push({ segment: this.segment, firstSeq: this.nextSeq - this.queue.length })
  }

  /** Starts writing the queued records as one group, if fewer than MAX_GROUPS_IN_FLIGHT are being written. */
  private writeGroups (): void {
    if (this.queue.length === 0 || this.inFlight.length >= MAX_GROUPS_IN_FLIGHT) return
    if (this.failed !== undefined) {
      for (const w of this.waiters.splice(0)) w.reject(this.failed)
      this.queue = []
      return this.settleIdle()
    }
    // a full segment is closed once the groups in it are written: each group lies whole in one file
    if (this.segmentBytes >= SEGMENT_BYTES) {
      if (this.inFlight.length > 0) return
      this.startSegment()
    }
    const records = this.queue
    const group: Group = { waiters: this.waiters, done: false }
    this.queue = []
    this.waiters = []
    this.inFlight.push(group)
    let bytes = 0
    for (const record of records) {
      const payload = record.subarray(HEADER_BYTES)
      record.writeUInt32LE(payload.length, 0)
      record.writeUInt32LE(crc32(payload, this.segment), 4)
      bytes += record.length
    }
    const at = this.segmentBytes
    this.segmentBytes += bytes
    writev(this.fd, records, at, (err, written) => {
      group.done = true
      if (err !== null) group.error = err
      else if (written !== bytes) group.error = new Error(`journal: wrote ${written} of ${bytes} bytes`)
      this.acknowledge()
      this.writeGroups()
    })
  }

  /** Answers the finished groups at the head, in order: a group is acknowledged only after every earlier one. */
  private acknowledge (): void {
    while (this.inFlight.length > 0 && this.inFlight[0].done) {
      const group = this.inFlight.shift() as Group
      if (group.error !== undefined) this.failed ??= group.error
      for (const w of group.waiters) {
        if (this.failed === undefined) w.resolve()
        else w.reject(this.failed)
      }
    }
    this.settleIdle()
  }

  private settleIdle (): void {
    if (this.inFlight.length === 0 && this.queue.length === 0) for (const resolve of this.idle.splice(0)) resolve()
  }
}
