import type { Registry } from 'prom-client'
import type { Logger } from 'pino'

export type GossipTopic = 'tx' | 'proposal' | 'vote' | 'status' | 'envelope' | 'envelope_delete' | 'version'
export type Validation = 'accept' | 'ignore' | 'reject'

export const GOSSIP_TOPICS: readonly GossipTopic[] = ['tx', 'proposal', 'vote', 'status', 'envelope', 'envelope_delete', 'version']

export interface PeerInfo {
  peerId: string
  /** remote addresses of the open connections, or the configured address when disconnected */
  addrs: string[]
  version?: string
  protocolVersion?: number
  height?: number
  connected: boolean
}

export interface P2POptions {
  /** 32-byte Ed25519 seed of the node key (the peer id derives from it) */
  nodeKeySeed: Uint8Array
  /** e.g. ['/ip4/127.0.0.1/tcp/26001'], also '/ip4/.../tcp/N/ws' */
  listen: string[]
  /** multiaddrs with /p2p/<peerId>, dialed at start and re-dialed with backoff while disconnected */
  peers: string[]
  chainId: string
  nodeVersion: string
  protocolVersion: number
  /** default 64 */
  maxConnections?: number
  /** used as given: pass a child logger that names the subsystem */
  logger: Logger
  /**
   * Peers to refuse: inbound and outbound connections are denied and open ones closed (checked
   * on every maintenance tick, 250 ms). Tests use it to partition nodes.
   */
  denyPeers?: () => Set<string>
  /** gossip validations in flight per topic beyond which new messages are answered 'ignore' (default 10,000) */
  maxInFlightValidations?: number
  /** interval of version announcements (default 10 s) */
  versionIntervalMs?: number
  /** where libp2p's own metrics go (connections, streams, gossipsub), beside the node's */
  metricsRegistry?: Registry
}

export interface P2PHandlers {
  /**
   * Validate (and consume) a gossip message; only 'accept' is forwarded; 'reject' penalises the
   * peer that relayed it (`via`) via gossipsub peer scoring (use it only for provable
   * misbehaviour). Gossip messages are unsigned: `via`, the direct peer it came from
   * (authenticated by the connection), is the only peer identity there is; it is not the
   * origin. Who made a payload is proven only by the signatures inside it.
   */
  onGossip (topic: GossipTopic, data: Uint8Array, via: string): Validation | Promise<Validation>
  /** answer a request-response call (block sync, consensus catch-up); throw to answer an error */
  onRequest (data: Uint8Array, from: string): Promise<Uint8Array>
}

export interface GossipStats {
  /** validations currently awaiting onGossip, per topic */
  inFlight: Record<GossipTopic, number>
  /** messages answered 'ignore' because too many validations were in flight, per topic */
  dropped: Record<GossipTopic, number>
}
