/**
 * State sync: a new node asks its peers what snapshots they offer, takes the newest one whose
 * manifest checks out (a certificate of more than two thirds of the validators over a header
 * that carries the state hash), fetches its chunks from every peer that offers it at once,
 * checks each chunk on arrival against its lanes, and builds the store aside before moving it
 * into place (restoreStore). A peer that sends a bad manifest or chunk is dropped for the rest of
 * the sync and the chunk fetched from another; one that times out or is busy is asked again later.
 */
import type { Logger } from 'pino'
import { genesisHash, type Genesis, type StateHash, type StateValue } from '../chain/index.js'
import { KithError } from '../errors/index.js'
import { restoreStore } from './file.js'
import { SnapshotManifestSchema, isTrustFailure, verifyChunk, verifyManifest, type SnapshotManifest, type TrustOptions } from './format.js'
import { SnapshotOffersSchema, type SnapshotOffer, type SnapshotRequest } from './protocol.js'

/** How the sync reaches peers: the libp2p host, or a test's stand-in. */
export interface SyncNetwork {
  /** peers connected now */
  peers: () => string[]
  request: (peer: string, data: Uint8Array, timeoutMs: number) => Promise<Uint8Array>
}

export interface StateSyncOptions {
  dataDir: string
  genesis: Genesis
  trust?: TrustOptions
  network: SyncNetwork
  log: Logger
  /** how long to look for a snapshot before giving up (default 60 s) */
  discoveryMs?: number
  /** chunk requests under way at once, over all peers (default 8; each peer gets at most 2) */
  window?: number
  /** per request (default 20 s: 8 MiB over a slow link) */
  requestTimeoutMs?: number
  /** stops the sync (the node is shutting down) */
  signal?: AbortSignal
  /** a test's hook, called after each chunk is stored (the kill -9 test crashes there) */
  afterChunk?: (index: number) => void
}

export interface StateSyncResult {
  height: number
  block_hash: string
  chunks: number
  entries: number
  /** peers chunks came from */
  served_by: string[]
  /** peers dropped for a bad manifest or chunk */
  dropped: string[]
}

const PER_PEER_IN_FLIGHT = 2
/** consecutive failures (timeouts, busy answers) after which a peer is left out of this snapshot */
const MAX_PEER_FAILURES = 5
const RETRY_DELAY_MS = 250

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }
const encode = (request: SnapshotRequest): Uint8Array => Buffer.from(JSON.stringify(request))

interface Candidate { offer: SnapshotOffer, peers: Set<string> }

export class StateSync {
  /** peers that proved themselves liars in this sync */
  private readonly dropped = new Set<string>()
  private readonly discoveryMs: number
  private readonly window: number
  private readonly timeoutMs: number

  constructor (private readonly opts: StateSyncOptions) {
    this.discoveryMs = opts.discoveryMs ?? 60_000
    this.window = opts.window ?? 8
    this.timeoutMs = opts.requestTimeoutMs ?? 20_000
  }

  /** Fills the node's data directory from a snapshot; throws if no peer offered one that checked out in time. */
  async run (): Promise<StateSyncResult> {
    const deadline = Date.now() + this.discoveryMs
    const tried = new Set<string>()
    let lastError: unknown
    while (Date.now() < deadline) {
      this.opts.signal?.throwIfAborted()
      const candidates = (await this.discover()).filter((c) => !tried.has(key(c.offer)))
      if (candidates.length === 0) {
        await sleep(1000)
        continue
      }
      for (const candidate of candidates) {
        tried.add(key(candidate.offer))
        try {
          return await this.syncFrom(candidate)
        } catch (err) {
          lastError = err
          this.opts.log.warn({ err, height: candidate.offer.height }, 'state sync from this snapshot failed; trying another')
        }
      }
      // the snapshots tried all failed: newer ones may be offered by now
      tried.clear()
      await sleep(1000)
    }
    throw new KithError('SNAPSHOT_INVALID', `no peer offered a snapshot that could be synced within ${this.discoveryMs} ms${lastError instanceof Error ? `: ${lastError.message}` : ''}`)
  }

  /** Asks every connected peer what it offers; the newest snapshots first, then those most peers offer. */
  private async discover (): Promise<Candidate[]> {
    const byKey = new Map<string, Candidate>()
    const peers = this.opts.network.peers().filter((p) => !this.dropped.has(p))
    await Promise.all(peers.map(async (peer) => {
      try {
        const answer = SnapshotOffersSchema.safeParse(JSON.parse(Buffer.from(await this.request(peer, { type: 'snapshots' }, Math.min(5000, this.timeoutMs))).toString('utf8')))
        if (!answer.success) return
        for (const offer of answer.data.snapshots) {
          const candidate = byKey.get(key(offer)) ?? { offer, peers: new Set<string>() }
          candidate.peers.add(peer)
          byKey.set(key(offer), candidate)
        }
      } catch {
        // a peer that offers nothing (or is not serving yet) is simply not a source
      }
    }))
    return [...byKey.values()].sort((a, b) => b.offer.height - a.offer.height || b.peers.size - a.peers.size)
  }

  private async syncFrom (candidate: Candidate): Promise<StateSyncResult> {
    const { manifest, stateHash } = await this.fetchManifest(candidate)
    const sources = [...candidate.peers].filter((p) => !this.dropped.has(p))
    const fetcher = new ChunkFetcher(manifest, sources, this.window, (peer, index) => this.request(peer, { type: 'snapshot_chunk', height: manifest.height, index }, this.timeoutMs), (peer, reason) => this.drop(peer, reason))
    const abort = (): void => { fetcher.fail(new Error('state sync stopped: the node is shutting down')) }
    this.opts.signal?.addEventListener('abort', abort)
    fetcher.start()
    try {
      await restoreStore(this.opts.dataDir, manifest, stateHash, fetcher.inOrder(this.opts.afterChunk))
    } finally {
      this.opts.signal?.removeEventListener('abort', abort)
      fetcher.stop()
    }
    return {
      height: manifest.height,
      block_hash: manifest.block_hash,
      chunks: manifest.chunks.length,
      entries: manifest.entries,
      served_by: [...fetcher.servedBy],
      dropped: [...this.dropped]
    }
  }

  /** The manifest from the first peer whose copy checks out. */
  private async fetchManifest (candidate: Candidate): Promise<{ manifest: SnapshotManifest, stateHash: StateHash }> {
    const { genesis, trust } = this.opts
    for (const peer of candidate.peers) {
      if (this.dropped.has(peer)) continue
      let bytes: Uint8Array
      try {
        bytes = await this.request(peer, { type: 'snapshot_manifest', height: candidate.offer.height }, this.timeoutMs)
      } catch (err) {
        this.opts.log.debug({ err, peer }, 'manifest request failed')
        continue
      }
      try {
        const manifest = SnapshotManifestSchema.parse(JSON.parse(Buffer.from(bytes).toString('utf8')))
        if (manifest.height !== candidate.offer.height || manifest.block_hash !== candidate.offer.block_hash) throw new Error('the manifest is not of the snapshot offered')
        const stateHash = verifyManifest(manifest, genesis, genesisHash(genesis), trust ?? {})
        return { manifest, stateHash }
      } catch (err) {
        // certified by validators the genesis does not vouch for: the operator must say whom to trust
        if (isTrustFailure(err)) throw new Error(`${(err as Error).message}: start with --state-sync-trust-hash <the block hash at height ${candidate.offer.height}, from a node you trust>`, { cause: err })
        this.drop(peer, `bad manifest: ${err instanceof Error ? err.message : String(err)}`)
      }
    }
    throw new Error(`no peer gave a manifest of snapshot ${candidate.offer.height} that checks out`)
  }

  private drop (peer: string, reason: string): void {
    if (this.dropped.has(peer)) return
    this.dropped.add(peer)
    this.opts.log.warn({ peer, reason }, 'state sync: dropping a peer that sent bad data')
  }

  private async request (peer: string, request: SnapshotRequest, timeoutMs: number): Promise<Uint8Array> {
    return await this.opts.network.request(peer, encode(request), timeoutMs)
  }
}

function key (offer: SnapshotOffer): string {
  return `${offer.height}:${offer.block_hash}`
}

/**
 * Fetches a manifest's chunks from several peers, at most `window` under way and two per peer,
 * and hands them over in order; a chunk arrives checked against its lanes.
 */
class ChunkFetcher {
  readonly servedBy = new Set<string>()
  private readonly arrived = new Map<number, Array<[string, StateValue]>>()
  private readonly queue: number[] = []
  private readonly inFlight = new Map<string, number>()
  private readonly failures = new Map<string, number>()
  private next = 0
  private stopped = false
  private failure: Error | undefined
  private wake: (() => void) | undefined

  constructor (
    private readonly manifest: SnapshotManifest,
    private readonly peers: string[],
    private readonly window: number,
    private readonly fetch: (peer: string, index: number) => Promise<Uint8Array>,
    private readonly onBadData: (peer: string, reason: string) => void
  ) {
    for (let i = 0; i < manifest.chunks.length; i++) this.queue.push(i)
    for (const peer of peers) this.inFlight.set(peer, 0)
  }

  start (): void {
    this.pump()
  }

  stop (): void {
    this.stopped = true
    this.signal()
  }

  /** Ends the fetch: the consumer's next wait throws `err`. */
  fail (err: Error): void {
    this.failure = err
    this.stopped = true
    this.signal()
  }

  /** The chunks' entries in order; throws once no peer is left to ask. */
  async * inOrder (afterChunk?: (index: number) => void): AsyncGenerator<Array<[string, StateValue]>> {
    while (this.next < this.manifest.chunks.length) {
      if (this.stopped && this.failure !== undefined) throw this.failure
      const entries = this.arrived.get(this.next)
      if (entries !== undefined) {
        this.arrived.delete(this.next)
        const index = this.next
        this.next++
        this.pump()
        yield entries
        afterChunk?.(index)
        continue
      }
      if (this.failure !== undefined) throw this.failure
      await new Promise<void>((resolve) => { this.wake = resolve })
    }
  }

  private signal (): void {
    const wake = this.wake
    this.wake = undefined
    wake?.()
  }

  private usable (): string[] {
    return this.peers.filter((p) => this.inFlight.has(p))
  }

  /** Starts requests while the window has room: chunks beyond `next + window` wait, so memory stays bounded. */
  private pump (): void {
    if (this.stopped) return
    const live = this.usable()
    if (live.length === 0) {
      this.failure ??= new Error('every peer offering this snapshot failed or sent bad data')
      this.signal()
      return
    }
    for (;;) {
      const underWay = [...this.inFlight.values()].reduce((a, b) => a + b, 0)
      if (underWay >= this.window || this.queue.length === 0) return
      const index = this.queue[0]
      if (index >= this.next + this.window) return
      const peer = live.filter((p) => (this.inFlight.get(p) ?? 0) < PER_PEER_IN_FLIGHT).sort((a, b) => (this.inFlight.get(a) ?? 0) - (this.inFlight.get(b) ?? 0))[0]
      if (peer === undefined) return
      this.queue.shift()
      this.inFlight.set(peer, (this.inFlight.get(peer) ?? 0) + 1)
      void this.fetchOne(peer, index)
    }
  }

  private async fetchOne (peer: string, index: number): Promise<void> {
    let bytes: Uint8Array | undefined
    try {
      bytes = await this.fetch(peer, index)
    } catch {
      bytes = undefined
    }
    if (this.stopped) return
    const count = this.inFlight.get(peer)
    if (count !== undefined) this.inFlight.set(peer, count - 1)
    if (bytes === undefined) {
      // a timeout or a busy answer: ask again (this peer or another) a little later
      const failures = (this.failures.get(peer) ?? 0) + 1
      this.failures.set(peer, failures)
      if (failures >= MAX_PEER_FAILURES) this.inFlight.delete(peer)
      this.queue.unshift(index)
      this.queue.sort((a, b) => a - b)
      setTimeout(() => { this.pump() }, RETRY_DELAY_MS)
      return
    }
    try {
      const entries = verifyChunk(this.manifest, index, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), undefined)
      this.failures.set(peer, 0)
      this.servedBy.add(peer)
      this.arrived.set(index, entries)
    } catch (err) {
      this.inFlight.delete(peer)
      this.onBadData(peer, `bad chunk ${index}: ${err instanceof Error ? err.message : String(err)}`)
      this.queue.unshift(index)
      this.queue.sort((a, b) => a - b)
    }
    this.signal()
    this.pump()
  }
}
