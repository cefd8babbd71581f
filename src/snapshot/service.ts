/**
 * A node's own snapshots (`--snapshot-interval`): one taken at every height divisible by the
 * interval, in a worker thread, into `data/snapshots/<height>.snapshot` (the backup file format);
 * the newest `--snapshot-keep` kept, and offered to peers for state sync, rate-limited per peer.
 *
 * Every node takes its snapshot at the same heights from the same state, and chunking is
 * deterministic, so the nodes that offer a height offer byte-identical chunks: a joiner fetches
 * them from several peers at once.
 */
import { Worker } from 'node:worker_threads'
import { mkdir, open, readdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { MAX_RESPONSE_BYTES } from '../p2p/index.js'
import { readManifest } from './file.js'
import { CHUNK_TARGET_BYTES } from './format.js'
import { SnapshotRequestSchema, type SnapshotOffer } from './protocol.js'
import type { SnapshotJob, SnapshotWorkerMessage } from './worker.js'

/** What one node serves to peers, so a joiner (or a hostile stranger) cannot take its disk and uplink. */
export interface ServeLimits {
  /** bytes a peer may take a second, on average (manifests and chunks) */
  peerBytesPerSecond: number
  /** what a peer may take at once before the average applies */
  peerBurstBytes: number
  /** chunk reads one peer may have under way */
  peerConcurrent: number
  /** chunk reads under way for all peers together (peer ids are free to make) */
  totalConcurrent: number
  /** peers whose budgets are remembered; the oldest is forgotten (it starts full again) */
  trackedPeers: number
}

export const DEFAULT_SERVE_LIMITS: ServeLimits = {
  peerBytesPerSecond: 16 * 1024 * 1024,
  peerBurstBytes: 32 * 1024 * 1024,
  peerConcurrent: 2,
  totalConcurrent: 6,
  trackedPeers: 1024
}

export interface SnapshotServiceOptions {
  dataDir: string
  /** take a snapshot at every height divisible by this; 0 takes none (and serves none) */
  interval: number
  /** the first height whose header carries a state hash (genesis params.state_hash_height) */
  firstHeight: number
  /** how many to keep, newest first */
  keep: number
  /** the chunk target (default CHUNK_TARGET_BYTES); tests make it small to get many chunks from a small state */
  chunkBytes?: number | undefined
  log: Logger
  limits?: Partial<ServeLimits>
  now?: () => number
}

interface Held {
  offer: SnapshotOffer
  file: string
  manifest: Buffer
  /** where each chunk starts in the file, and one past the last */
  offsets: number[]
}

export const SNAPSHOT_DIR = 'snapshots'
/** how long a commit waits for the snapshot thread to open its read transaction (it takes milliseconds) */
const PIN_TIMEOUT_MS = 2000
const SUFFIX = '.snapshot'

export class SnapshotService {
  private held: Held[] = []
  private taking: Promise<void> | undefined
  private worker: Worker | undefined
  private stopped = false
  private readonly dir: string
  private readonly limits: ServeLimits
  private readonly now: () => number
  private readonly budgets = new Map<string, { tokens: number, at: number, reading: number }>()
  private reading = 0

  private constructor (private readonly opts: SnapshotServiceOptions) {
    this.dir = join(opts.dataDir, SNAPSHOT_DIR)
    this.limits = { ...DEFAULT_SERVE_LIMITS, ...opts.limits }
    this.now = opts.now ?? Date.now
  }

  /** Loads the snapshots on disk (a file a crash left half-written is removed). */
  static async open (opts: SnapshotServiceOptions): Promise<SnapshotService> {
    const service = new SnapshotService(opts)
    await mkdir(service.dir, { recursive: true })
    for (const name of await readdir(service.dir)) {
      const file = join(service.dir, name)
      if (!name.endsWith(SUFFIX)) {
        await rm(file, { force: true, recursive: true })
        continue
      }
      try {
        service.add(await load(file))
      } catch (err) {
        opts.log.warn({ err, file }, 'removing a snapshot that cannot be read')
        await rm(file, { force: true })
      }
    }
    await service.prune()
    return service
  }

  /** What this node offers, newest first. */
  offers (): SnapshotOffer[] {
    return this.held.map((h) => h.offer)
  }

  /**
   * Called after each commit, before the next: at a snapshot height, starts the worker and waits
   * only until it holds its view of this height (milliseconds); the file is written meanwhile.
   */
  async afterCommit (height: number): Promise<void> {
    const { interval, log } = this.opts
    if (interval === 0 || height + 1 < this.opts.firstHeight || this.stopped) return
    // the thread starts a block ahead (its start costs ~0.4 s of CPU, which a node that never
    // reaches a snapshot height, or the commit waiting for the pin, should not pay); then it stays
    if ((height + 1) % interval === 0) this.thread()
    if (height % interval !== 0 || height < this.opts.firstHeight) return
    if (this.taking !== undefined) {
      log.warn({ height }, 'skipping a snapshot: the one before is still being written (raise --snapshot-interval)')
      return
    }
    const file = join(this.dir, `${height}${SUFFIX}`)
    const job: SnapshotJob = { dataDir: this.opts.dataDir, file, height, chunkBytes: this.opts.chunkBytes ?? CHUNK_TARGET_BYTES }
    const started = Date.now()
    const worker = this.thread()
    let pinnedMs = 0
    let pinned!: () => void
    const pinnedOrEnded = new Promise<void>((resolve) => { pinned = resolve })
    this.taking = new Promise<void>((resolve) => {
      const end = (): void => {
        pinned()
        worker.off('message', onMessage)
        worker.off('exit', onExit)
        resolve()
      }
      const onMessage = (message: SnapshotWorkerMessage): void => {
        if (message.kind === 'pinned') {
          pinnedMs = Date.now() - started
          pinned()
        } else if (message.kind === 'done') {
          log.info({ height, bytes: message.bytes, entries: message.entries, chunks: message.chunks, pinnedMs, ms: Date.now() - started }, 'snapshot taken')
          void this.loadTaken(file).finally(end)
        } else {
          log.warn({ height, reason: message.message }, 'snapshot failed')
          void rm(`${file}.partial`, { force: true }).finally(end)
        }
      }
      const onExit = (): void => {
        if (!this.stopped) log.warn({ height }, 'the snapshot thread ended before the snapshot was written')
        end()
      }
      worker.on('message', onMessage)
      worker.on('exit', onExit)
      worker.postMessage(job)
    }).finally(() => { this.taking = undefined })
    // the chain must not stall on a thread that does not answer: past the bound it goes on, and
    // the thread, pinning late, finds a newer head and gives this snapshot up
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<void>((resolve) => { timer = setTimeout(resolve, PIN_TIMEOUT_MS) })
    const outcome = await Promise.race([pinnedOrEnded.then(() => 'answered'), late.then(() => 'late')])
    clearTimeout(timer)
    if (outcome === 'late') log.warn({ height, waitedMs: Date.now() - started }, 'the snapshot thread did not pin its view in time; commits go on')
  }

  /** The snapshot thread, started once (and again if it died). */
  private thread (): Worker {
    if (this.worker !== undefined) return this.worker
    const worker = new Worker(new URL('./worker.js', import.meta.url))
    worker.on('error', (err) => { this.opts.log.warn({ err }, 'the snapshot thread failed') })
    worker.once('exit', () => { if (this.worker === worker) this.worker = undefined })
    // it waits for jobs between snapshots; that must not keep the process alive
    worker.unref()
    this.worker = worker
    return worker
  }

  /** Answers a peer's snapshot request (throws, and the peer gets the message, when it cannot). */
  async answer (raw: unknown, from: string): Promise<Uint8Array> {
    const parsed = SnapshotRequestSchema.safeParse(raw)
    if (!parsed.success) throw new Error('malformed snapshot request')
    const request = parsed.data
    if (request.type === 'snapshots') return Buffer.from(JSON.stringify({ snapshots: this.offers() }))
    const held = this.held.find((h) => h.offer.height === request.height)
    if (held === undefined) throw new Error(`no snapshot at height ${request.height} here (offered: ${this.offers().map((o) => o.height).join(', ') || 'none'})`)
    if (request.type === 'snapshot_manifest') {
      this.spend(from, held.manifest.length)
      return held.manifest
    }
    const start = held.offsets[request.index]
    const end = held.offsets[request.index + 1]
    if (start === undefined || end === undefined) throw new Error(`the snapshot at ${request.height} has ${held.offer.chunks} chunks, no chunk ${request.index}`)
    if ((this.budgets.get(from)?.reading ?? 0) >= this.limits.peerConcurrent) throw new Error(`busy: ${this.limits.peerConcurrent} chunk reads of yours are under way`)
    if (this.reading >= this.limits.totalConcurrent) throw new Error('busy: serving other peers, ask again shortly')
    const budget = this.spend(from, end - start)
    budget.reading++
    this.reading++
    try {
      return await readRange(held.file, start, end)
    } finally {
      budget.reading--
      this.reading--
    }
  }

  /** Stops taking snapshots; a file being written is left as `.partial` and removed at the next open. */
  async stop (): Promise<void> {
    this.stopped = true
    await this.worker?.terminate()
    this.worker = undefined
    await this.taking
  }

  /** Takes `bytes` from the peer's budget, or throws saying when it may ask again. */
  private spend (peer: string, bytes: number): { tokens: number, at: number, reading: number } {
    const { peerBytesPerSecond, peerBurstBytes, trackedPeers } = this.limits
    const now = this.now()
    let budget = this.budgets.get(peer)
    if (budget === undefined) {
      if (this.budgets.size >= trackedPeers) this.budgets.delete(this.budgets.keys().next().value as string)
      budget = { tokens: peerBurstBytes, at: now, reading: 0 }
      this.budgets.set(peer, budget)
    }
    budget.tokens = Math.min(peerBurstBytes, budget.tokens + (now - budget.at) / 1000 * peerBytesPerSecond)
    budget.at = now
    if (budget.tokens < bytes) {
      const waitMs = Math.ceil((bytes - budget.tokens) / peerBytesPerSecond * 1000)
      throw new Error(`rate limited: ask again in ${waitMs} ms`)
    }
    budget.tokens -= bytes
    return budget
  }

  private add (held: Held): void {
    this.held = [...this.held.filter((h) => h.offer.height !== held.offer.height), held].sort((a, b) => b.offer.height - a.offer.height)
  }

  private async loadTaken (file: string): Promise<void> {
    try {
      this.add(await load(file))
      await this.prune()
    } catch (err) {
      this.opts.log.warn({ err, file }, 'a snapshot just taken cannot be read')
    }
  }

  /** Drops all but the newest `keep` (a read of a dropped file under way fails, and the peer asks another). */
  private async prune (): Promise<void> {
    const dropped = this.held.slice(this.opts.keep)
    this.held = this.held.slice(0, this.opts.keep)
    for (const h of dropped) await rm(h.file, { force: true })
  }
}

async function load (file: string): Promise<Held> {
  const handle = await open(file, 'r')
  try {
    const { manifest, start, line } = await readManifest(handle)
    const offsets = [start]
    for (const chunk of manifest.chunks) offsets.push((offsets.at(-1) as number) + chunk.bytes)
    const size = (await handle.stat()).size
    if (size !== offsets.at(-1)) throw new Error(`the file is ${size} bytes, its manifest accounts for ${String(offsets.at(-1))}`)
    if (line.length > MAX_RESPONSE_BYTES) throw new Error(`its manifest is ${line.length} bytes, more than one response carries`)
    return { offer: { height: manifest.height, block_hash: manifest.block_hash, chunks: manifest.chunks.length, manifest_bytes: line.length }, file, manifest: line, offsets }
  } finally {
    await handle.close()
  }
}

async function readRange (file: string, start: number, end: number): Promise<Buffer> {
  const handle = await open(file, 'r')
  try {
    const bytes = Buffer.alloc(end - start)
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, start)
    if (bytesRead !== bytes.length) throw new Error('the snapshot file is shorter than its manifest says')
    return bytes
  } finally {
    await handle.close()
  }
}
