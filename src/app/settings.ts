/**
 * Every setting of `kith start` outside the flags, declared once: its SVC_* variable, the key that
 * sets it in the home's config.json, what it does, and where its effective value is read. Layered
 * defaults → config.json → environment (docs/operating.md § Configuration); flags layer on the
 * node settings of config.ts. `bin/kith config` prints the result with where each value came from.
 */
import { readPendingLimits, type PendingLimits } from '../feed/index.js'
import { readMediaEnv, type MediaEnv } from '../media/index.js'
import { readRealtimeEnv, type RealtimeLimits } from '../realtime/index.js'
import { readRelayEnv, type RelayEnv } from '../relay/index.js'
import { KithError } from '../errors/index.js'
import { readEnv, type EnvSettings } from '../node/index.js'

/** What the subsystems read from the layered environment. */
export interface ServiceSettings {
  api: EnvSettings
  relay: RelayEnv
  media: MediaEnv
  realtime: RealtimeLimits
  pending: PendingLimits
}

export interface EnvSetting {
  /** the environment variable */
  env: string
  /** the same setting in config.json */
  key: string
  doc: string
  /** masked by `bin/kith config` */
  secret?: true
  /** its effective value, defaults included */
  read: (s: ServiceSettings) => unknown
}

const mib = (bytes: number): number | string => (bytes === Infinity ? 'unbounded' : bytes / 2 ** 20)

export const ENV_SETTINGS: readonly EnvSetting[] = [
  { env: 'SVC_API_TOKEN', key: 'api_token', secret: true, doc: 'bearer token for writes (and for every route when api_private)', read: (s) => s.api.apiToken },
  { env: 'SVC_API_PRIVATE', key: 'api_private', doc: 'true: every route needs the token', read: (s) => s.api.apiPrivate },
  { env: 'SVC_RATE_LIMIT_RPS', key: 'rate_limit_rps', doc: 'requests per second per client IP across HTTP, WebSocket and SSE', read: (s) => s.api.rateLimitRps },
  { env: 'SVC_MAX_BODY_BYTES', key: 'max_body_bytes', doc: 'largest request body', read: (s) => s.api.maxBodyBytes },
  { env: 'SVC_MAX_UPLOAD_BYTES', key: 'max_upload_bytes', doc: 'largest POST /feed/publish body', read: (s) => s.api.maxUploadBytes },
  { env: 'SVC_DISABLE_SWAGGER', key: 'disable_swagger', doc: 'true: no /swagger', read: (s) => s.api.disableSwagger },
  { env: 'SVC_DISABLE_EXPLORER', key: 'disable_explorer', doc: 'true: no block explorer at /', read: (s) => s.api.disableExplorer },
  { env: 'SVC_UPDATE_SOURCE_URL', key: 'update_source_url', doc: 'release feed read by GET /api/update-check', read: (s) => s.api.updateSourceUrl },
  { env: 'SVC_UPDATE_TIMEOUT_MS', key: 'update_timeout_ms', doc: 'how long the release source may take', read: (s) => s.api.updateTimeoutMs },
  { env: 'SVC_HEADERS_TIMEOUT_MS', key: 'headers_timeout_ms', doc: 'time a client has to send a request head', read: (s) => s.api.headersTimeoutMs },
  { env: 'SVC_REQUEST_TIMEOUT_MS', key: 'request_timeout_ms', doc: 'time a client has to send a whole request', read: (s) => s.api.requestTimeoutMs },
  { env: 'SVC_KEEP_ALIVE_TIMEOUT_MS', key: 'keep_alive_timeout_ms', doc: 'idle keep-alive connections are closed after this', read: (s) => s.api.keepAliveTimeoutMs },
  { env: 'SVC_MAILBOX_TTL_DAYS', key: 'mailbox_ttl_days', doc: 'days an envelope is kept', read: (s) => s.relay.ttlMs / 86_400_000 },
  { env: 'SVC_MAILBOX_MAX_MB', key: 'mailbox_max_mb', doc: 'MiB of envelopes all mailboxes may hold', read: (s) => mib(s.relay.maxStoredBytes) },
  { env: 'SVC_DISABLE_INBOX_DELETE', key: 'disable_inbox_delete', doc: 'true: no DELETE /relay/inbox/{id}', read: (s) => s.relay.disableInboxDelete },
  { env: 'SVC_RELAY_READ_AUTH', key: 'relay_read_auth', doc: 'true: inbox reads must be signed', read: (s) => s.relay.requireReadAuth },
  { env: 'SVC_RELAY_SENDER_RPS', key: 'relay_sender_rps', doc: 'envelopes per second per sender (0: off)', read: (s) => s.relay.rateLimitPerSender },
  { env: 'SVC_RELAY_CLIENT_MAILBOX_PER_MIN', key: 'relay_client_mailbox_per_min', doc: 'envelopes per minute from one client IP into one mailbox (0: off)', read: (s) => s.relay.admission.clientMailboxPerMin },
  { env: 'SVC_RELAY_CLIENT_MAILBOX_MAX', key: 'relay_client_mailbox_max', doc: 'envelopes one client IP may hold in one mailbox (0: off)', read: (s) => s.relay.admission.clientMailboxMax },
  { env: 'SVC_RELAY_MAILBOX_PER_MIN', key: 'relay_mailbox_per_min', doc: 'envelopes per minute into one mailbox (0: off)', read: (s) => s.relay.admission.mailboxPerMin },
  { env: 'SVC_MEDIA_SIDECAR_URL', key: 'media_sidecar_url', doc: 'the video and audio scrubbing sidecar', read: (s) => s.media.sidecarUrl },
  { env: 'SVC_MEDIA_SIDECAR_TIMEOUT_MS', key: 'media_sidecar_timeout_ms', doc: 'how long one sidecar request may take', read: (s) => s.media.sidecarTimeoutMs },
  { env: 'SVC_ALLOW_UNSCRUBBED_VIDEO', key: 'allow_unscrubbed_video', doc: 'true: keep video and audio as uploaded when no sidecar is set', read: (s) => s.media.allowUnscrubbedVideo },
  { env: 'SVC_WS_MAX_CONNECTIONS', key: 'ws_max_connections', doc: 'open WebSockets and SSE streams together', read: (s) => s.realtime.maxConnections },
  { env: 'SVC_WS_MAX_CONNECTIONS_PER_IP', key: 'ws_max_connections_per_ip', doc: 'per client IP (0: no cap)', read: (s) => s.realtime.maxConnectionsPerIp },
  { env: 'SVC_WS_MAX_SUBSCRIPTIONS', key: 'ws_max_subscriptions', doc: 'subscriptions per WebSocket', read: (s) => s.realtime.maxSubscriptions },
  { env: 'SVC_WS_MESSAGES_PER_SECOND', key: 'ws_messages_per_second', doc: 'client messages per second per WebSocket (0: off)', read: (s) => s.realtime.messagesPerSecond },
  { env: 'SVC_WS_MAX_QUEUED_BYTES', key: 'ws_max_queued_bytes', doc: 'bytes waiting to be sent before a slow consumer is closed', read: (s) => s.realtime.maxQueuedBytes },
  { env: 'SVC_WS_HEARTBEAT_MS', key: 'ws_heartbeat_ms', doc: 'protocol ping interval', read: (s) => s.realtime.heartbeatMs },
  { env: 'SVC_WS_IDLE_MS', key: 'ws_idle_ms', doc: 'a WebSocket without subscriptions silent this long is closed', read: (s) => s.realtime.idleMs },
  { env: 'SVC_SSE_KEEPALIVE_MS', key: 'sse_keepalive_ms', doc: 'SSE keep-alive comment interval', read: (s) => s.realtime.sseKeepAliveMs },
  { env: 'SVC_FEED_PENDING_PER_AUTHOR', key: 'feed_pending_per_author', doc: 'uncommitted post bodies per author (0: no bound)', read: (s) => s.pending.maxPerAuthor },
  { env: 'SVC_FEED_PENDING_MB_PER_AUTHOR', key: 'feed_pending_mb_per_author', doc: 'MiB of uncommitted bodies per author', read: (s) => mib(s.pending.maxBytesPerAuthor) },
  { env: 'SVC_FEED_PENDING_PER_IP', key: 'feed_pending_per_ip', doc: 'uncommitted bodies per client IP', read: (s) => s.pending.maxPerClient },
  { env: 'SVC_FEED_PENDING_MB_PER_IP', key: 'feed_pending_mb_per_ip', doc: 'MiB of uncommitted bodies per client IP', read: (s) => mib(s.pending.maxBytesPerClient) }
]

export type SettingSource = 'default' | 'config.json' | 'environment' | 'flag'

/** The environment the subsystems read: config.json's values for these settings, under the real environment. */
export function layeredEnv (fileConfig: unknown, env: NodeJS.ProcessEnv): { env: NodeJS.ProcessEnv, sources: Map<string, SettingSource> } {
  const file = typeof fileConfig === 'object' && fileConfig !== null ? fileConfig as Record<string, unknown> : {}
  const out: NodeJS.ProcessEnv = { ...env }
  const sources = new Map<string, SettingSource>()
  for (const s of ENV_SETTINGS) {
    const fromEnv = env[s.env]
    if (fromEnv !== undefined && fromEnv !== '') {
      sources.set(s.env, 'environment')
      continue
    }
    const value = file[s.key]
    if (value === undefined || value === null) continue
    if (typeof value === 'object') throw new KithError('CONFIG_INVALID', `config.json: ${s.key} must be a string, number or boolean`)
    out[s.env] = String(value)
    sources.set(s.env, 'config.json')
  }
  return { env: out, sources }
}

/** Every subsystem's settings from a (layered) environment; throws naming the first bad value. */
export function readServiceSettings (env: NodeJS.ProcessEnv): ServiceSettings {
  const api = readEnv(env)
  return {
    api,
    relay: readRelayEnv(env),
    media: readMediaEnv(env),
    // a WebSocket message may carry what a POST body may
    realtime: readRealtimeEnv(env, { maxMessageBytes: api.maxBodyBytes }),
    pending: readPendingLimits(env)
  }
}

/** config.json keys that name no setting: most likely a typo, which would otherwise be ignored. */
export function unknownConfigKeys (fileConfig: unknown, nodeKeys: readonly string[]): string[] {
  if (typeof fileConfig !== 'object' || fileConfig === null) return []
  const known = new Set([...nodeKeys, ...ENV_SETTINGS.map((s) => s.key)])
  return Object.keys(fileConfig).filter((k) => !known.has(k))
}
