/**
 * The peer-to-peer layer: a libp2p host (TCP and WebSockets, Noise, Yamux) that carries the
 * chain's gossip (transactions, proposals, votes, status, relay envelopes, version
 * announcements) on `/kith/<chainId>/<topic>/1`, validating every message through the node
 * before gossipsub forwards it, and one request-response protocol `/kith/<chainId>/req/1` for
 * block sync and consensus catch-up. It keeps configured peers connected. It knows nothing of
 * blocks or votes: payloads are bytes, and their meaning belongs to src/node.
 */
export type { GossipStats, GossipTopic, P2PHandlers, P2POptions, PeerInfo, Validation } from './types.js'
export { GOSSIP_TOPICS } from './types.js'
export { P2PError, isP2PError, type P2PErrorCode } from './errors.js'
export {
  P2PHost, peerIdFromSeed, topicName, requestProtocol,
  MAX_GOSSIP_BYTES, MAX_REQUEST_BYTES, MAX_RESPONSE_BYTES, DEFAULT_REQUEST_TIMEOUT_MS
} from './host.js'
