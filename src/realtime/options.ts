/** The real-time gateway's caps, with their defaults and the SVC_WS_* variables that set them. */

export interface RealtimeLimits {
  /** open WebSockets and SSE streams together; over it an upgrade is answered 503 */
  maxConnections: number
  /** per client IP; over it an upgrade is answered 429 (0 = no cap) */
  maxConnectionsPerIp: number
  /** subscriptions per WebSocket */
  maxSubscriptions: number
  /** largest client message, bytes (the node's request body cap); larger closes with 1009 */
  maxMessageBytes: number
  /** client messages per second per WebSocket, bursts of twice that (0 = no limit) */
  messagesPerSecond: number
  /** bytes a connection may have waiting to be sent; past it the slow consumer is closed (4000) */
  maxQueuedBytes: number
  /** protocol pings this often; a connection that has not answered the previous one is cut */
  heartbeatMs: number
  /** a WebSocket without subscriptions that sends nothing for this long is closed (4001) */
  idleMs: number
  /** SSE keep-alive comment interval */
  sseKeepAliveMs: number
  /** blocks an SSE stream replays after `Last-Event-ID` at most */
  sseBlockReplay: number
}

export const DEFAULT_REALTIME_LIMITS: RealtimeLimits = {
  maxConnections: 20_000,
  maxConnectionsPerIp: 100,
  maxSubscriptions: 64,
  maxMessageBytes: 1024 * 1024,
  messagesPerSecond: 20,
  maxQueuedBytes: 1024 * 1024,
  heartbeatMs: 30_000,
  idleMs: 120_000,
  sseKeepAliveMs: 15_000,
  sseBlockReplay: 1000
}

const ENV_NAMES: Partial<Record<keyof RealtimeLimits, string>> = {
  maxConnections: 'SVC_WS_MAX_CONNECTIONS',
  maxConnectionsPerIp: 'SVC_WS_MAX_CONNECTIONS_PER_IP',
  maxSubscriptions: 'SVC_WS_MAX_SUBSCRIPTIONS',
  messagesPerSecond: 'SVC_WS_MESSAGES_PER_SECOND',
  maxQueuedBytes: 'SVC_WS_MAX_QUEUED_BYTES',
  heartbeatMs: 'SVC_WS_HEARTBEAT_MS',
  idleMs: 'SVC_WS_IDLE_MS',
  sseKeepAliveMs: 'SVC_SSE_KEEPALIVE_MS'
}

/** Defaults overridden by SVC_WS_* (and SVC_SSE_KEEPALIVE_MS); a bad value fails start-up with its name. */
export function readRealtimeEnv (env: NodeJS.ProcessEnv = process.env, base: Partial<RealtimeLimits> = {}): RealtimeLimits {
  const limits: RealtimeLimits = { ...DEFAULT_REALTIME_LIMITS, ...base }
  for (const [key, name] of Object.entries(ENV_NAMES) as Array<[keyof RealtimeLimits, string]>) {
    const raw = env[name]
    if (raw === undefined || raw.trim() === '') continue
    const value = Number(raw)
    if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`)
    limits[key] = value
  }
  return limits
}
