/**
 * The node's outbound side of the network: what it publishes (transactions and envelopes in
 * batches, proposals, votes, statuses) and the requests it sends, through a NetworkPort (the
 * libp2p host). Before a port is attached, and after stop, everything sent is dropped.
 */
import type { Logger } from 'pino'
import type { Transaction } from '../chain/index.js'
import type { GossipTopic, PeerInfo } from '../p2p/index.js'
import type { Envelope } from '../relay/index.js'
import { encode } from './wire.js'

/** A peer as the node reports it: the p2p host's view. */
export type PeerView = PeerInfo

/** What the node needs from a libp2p host (src/p2p's P2PHost provides it). */
export interface NetworkPort {
  readonly peerId: string
  publish (topic: GossipTopic, data: Uint8Array): Promise<void>
  request (peerId: string, data: Uint8Array, opts?: { timeoutMs?: number }): Promise<Uint8Array>
  peers (): PeerView[]
  setLocalHeight (height: number): void
}

/**
 * Transactions and envelopes are gossiped in batches: each gossip message has a fixed cost
 * (framing, a message id, a validation result, a mesh forward on every hop) that one message per
 * transaction would pay thousands of times a second.
 */
const BATCH_MS = 20
const TX_BATCH_MAX = 500
export const ENVELOPE_BATCH_MAX = 100
/** envelopes carry up to 64 KiB each: a batch is sent once it holds this much ciphertext text */
const ENVELOPE_BATCH_CHARS = 1024 * 1024

export class Outbound {
  private port: NetworkPort | undefined
  private stopped = false
  private readonly txBatch = new GossipBatch<Transaction>((txs) => this.broadcast('tx', txs), TX_BATCH_MAX, Infinity, () => 0)
  private readonly envelopeBatch = new GossipBatch<Envelope>((envelopes) => this.broadcast('envelope', envelopes),
    ENVELOPE_BATCH_MAX, ENVELOPE_BATCH_CHARS, (e) => e.ciphertext.length)

  constructor (private readonly log: Logger) {}

  attach (port: NetworkPort): void {
    this.port = port
  }

  /** Whether a port is attached and the node has not stopped. */
  get open (): boolean {
    return this.port !== undefined && !this.stopped
  }

  /** This node's peer id; undefined before a port is attached. */
  get peerId (): string | undefined {
    return this.port?.peerId
  }

  stop (): void {
    this.stopped = true
    this.txBatch.clear()
    this.envelopeBatch.clear()
  }

  peers (): PeerView[] {
    return this.port?.peers() ?? []
  }

  isConnected (peerId: string): boolean {
    return this.peers().some((p) => p.peerId === peerId && p.connected)
  }

  /** Tells the host the height this node has committed (its peers' protocol checks use it). */
  setLocalHeight (height: number): void {
    this.port?.setLocalHeight(height)
  }

  /** Queues an accepted transaction for the next gossip batch. */
  gossipTx (tx: Transaction): void {
    if (this.open) this.txBatch.add(tx)
  }

  /** Queues an envelope this node's mailbox accepted for the next gossip batch. */
  gossipEnvelope (envelope: Envelope): void {
    if (this.open) this.envelopeBatch.add(envelope)
  }

  broadcast (topic: GossipTopic, value: unknown): void {
    const port = this.port
    if (port === undefined || this.stopped) return
    // Nobody to tell (a lone dev node): skip the encoding.
    if (!port.peers().some((p) => p.connected)) return
    port.publish(topic, encode(value)).catch((err: unknown) => this.log.debug({ err, topic }, 'publish failed'))
  }

  /** Sends `request` to a peer; rejects when no port is attached, on a timeout or a failed dial. */
  async request (peerId: string, request: unknown, timeoutMs: number): Promise<Uint8Array> {
    if (this.port === undefined) throw new Error('no network attached')
    return await this.port.request(peerId, encode(request), { timeoutMs })
  }
}

/** Items collected for one gossip message: sent after BATCH_MS, or at once when full. */
class GossipBatch<T> {
  private items: T[] = []
  private weight = 0
  private timer: NodeJS.Timeout | undefined

  constructor (
    private readonly send: (items: T[]) => void,
    private readonly maxItems: number,
    private readonly maxWeight: number,
    private readonly weigh: (item: T) => number
  ) {}

  add (item: T): void {
    this.items.push(item)
    this.weight += this.weigh(item)
    if (this.items.length >= this.maxItems || this.weight >= this.maxWeight) this.flush()
    else this.timer ??= setTimeout(() => this.flush(), BATCH_MS)
  }

  flush (): void {
    const items = this.items
    this.clear()
    if (items.length > 0) this.send(items)
  }

  clear (): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    this.items = []
    this.weight = 0
  }
}
