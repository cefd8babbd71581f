/**
 * Real-time push, the only door into src/realtime. A WebSocket at /api/ws (subscribe to blocks,
 * transactions by address, mailboxes and typing; submit transactions; prove an Ed25519 key with
 * a nonce) and the legacy SSE stream at /api/events, both fed by the node's `block` and `tx`
 * events and the mailbox's `inbox` event through one hub. Pure parts (schemas, topic keys and
 * fan-out, the replay seam, the handshake, the per-connection protocol over a Sink) are apart
 * from the `ws` I/O in gateway.ts. Wire formats, caps and close codes: docs/realtime.md.
 */
export { RealtimeGateway, WS_PATH, type RealtimeOptions, type ChainSource } from './gateway.js'
export { Connection, type Sink, type MailboxSource, type ConnectionContext, type AddressLimiter } from './connection.js'
export { Hub, Frame, TopicKeys, DEFAULT_FANOUT_CHUNK, subscriptionKey, textFrame, type Subscriber, type HubOptions } from './hub.js'
export { ReplaySeam } from './seam.js'
export { NonceHandshake, authText, newNonce } from './auth.js'
export { SseStream, sseTopicKeys, parseLastEventId } from './sse.js'
export { blockFrame, txFrame, inboxFrame, typingFrame, txKeys, typingKeys } from './events.js'
export { DEFAULT_REALTIME_LIMITS, readRealtimeEnv, type RealtimeLimits } from './options.js'
export * from './schemas.js'
