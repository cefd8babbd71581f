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
 * Record: u32 LE payload length ‖ u32 LE crc32(payload) ‖ payload. A crash can tear only the last
 * group of the last segment, which was never acknowledged; replay stops at the first record
 * that is incomplete or fails its checksum.
 */
import { closeSync, constants, fsyncSync, openSync, readdirSync, readFileSync, rmSync, writev } from 'node:fs'
import { join } from 'node:path'
import { crc32 } from 'node:zlib'

const HEADER_BYTES = 8
const SEGMENT_NAME = /^journal-(\d{10})\.log$/
/** A new segment starts once the current one holds this many bytes (and at least one record). */
const SEGMENT_BYTES = 16 * 1024 * 1024

function segmentName (n: number): string {
  return `journal-${String(n).padStart(10, '0')}.log`
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
  private closed = false
  /** a failed write may have left a partial group: nothing is acknowledged after it */
  private failed: Error | undefined

  /**
   * Opens the journal in `dir`: hands the intact records of the existing segments to `replay`
   * (oldest first), then removes those segments and starts a new one. `replay` must have made
   * the records durable elsewhere when it returns.
   */
  constructor (private readonly dir: string, replay: (payloads: Buffer[]) => void) {
    const existing = readdirSync(dir).map((name) => SEGMENT_NAME.exec(name)).filter((m) => m !== null)
      .map((m) => Number(m[1])).sort((a, b) => a - b)
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
        if (crc32(payload) !== data.readUInt32LE(at + 4)) break
        payloads.push(payload)
        at = end
      }
    }
    if (payloads.length > 0) replay(payloads)
    this.segment = (existing.at(-1) ?? 0) + 1
    this.fd = this.createSegment()
    for (const n of existing) rmSync(join(dir, segmentName(n)), { force: true })
    this.segmentStarts.push({ segment: this.segment, firstSeq: 0 })
  }

  /**
   * Appends a record made by `journalRecord` (its header is filled here) and resolves with its
   * sequence number once it is synced to disk.
   */
  async append (record: Buffer): Promise<number> {
    if (this.closed) throw new Error('the journal is closed')
    if (this.failed !== undefined) throw new Error('the journal failed to write; restart the node', { cause: this.failed })
    const payload = record.subarray(HEADER_BYTES)
    record.writeUInt32LE(payload.length, 0)
    record.writeUInt32LE(crc32(payload), 4)
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
      rmSync(join(this.dir, segmentName(done.segment)), { force: true })
    }
  }

  /** Waits for the groups being written, then closes the segment file. Segments stay for replay. */
  async close (): Promise<void> {
    this.closed = true
    if (this.inFlight.length > 0 || this.queue.length > 0) await new Promise<void>((resolve) => this.idle.push(resolve))
    closeSync(this.fd)
  }

  /** Creates segment `this.segment`; its directory entry is synced, so a synced record in it is found after a power loss. */
  private createSegment (): number {
    // O_DSYNC: a write returns once its data (and the file size) is on disk: one trip to the thread pool per group
    const fd = openSync(join(this.dir, segmentName(this.segment)), constants.O_WRONLY | constants.O_CREAT | constants.O_DSYNC, 0o644)
    const dirFd = openSync(this.dir, 'r')
    try {
      fsyncSync(dirFd)
    } finally {
      closeSync(dirFd)
    }
    return fd
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
    const bytes = records.reduce((n, b) => n + b.length, 0)
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
