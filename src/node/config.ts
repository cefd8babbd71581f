/**
 * Node configuration, layered: defaults -> home config.json -> SVC_* environment -> flags.
 * Every `start` flag is defined once in START_FLAGS; the CLI and docs read it from here.
 */
import { z } from 'zod'
import { MAX_POST_SIZE } from '../chain/index.js'
import { DEFAULT_MEMPOOL_OPTIONS } from '../mempool/index.js'
import { DEFAULT_LAG_GATE } from './lag-gate.js'
import { KithError } from '../errors/index.js'
import { parseOrThrow } from '../validation/index.js'
import { DEFAULT_SOURCE_TIMEOUT_MS, parseSourceUrl } from '../release/index.js'

/** at one block a second under load, a snapshot about every 3 minutes (docs/operating.md, "State sync") */
export const DEFAULT_SNAPSHOT_INTERVAL = 200

export const NodeConfigSchema = z.object({
  /** the HTTP and WebSocket listener */
  http_addr: z.string().default(':8080'),
  p2p_listen: z.array(z.string()).default(['/ip4/0.0.0.0/tcp/4001']),
  peers: z.array(z.string()).default([]),
  block_interval_ms: z.number().int().min(10).max(600_000).default(1000),
  /** false: an idle chain commits no block but the heartbeat (docs/operating.md, "Empty blocks") */
  empty_blocks: z.boolean().default(false),
  /** with empty_blocks false: a block this long after the last one even when idle; 0 never */
  empty_block_interval_ms: z.number().int().min(0).max(86_400_000).default(30_000),
  /** keep the transactions of the newest N blocks only; 0 keeps all (docs/operating.md, "Pruning") */
  prune_keep_blocks: z.number().int().min(0).default(0),
  /** take a state snapshot every N blocks and offer it to peers for state sync; 0 never (docs/operating.md, "State sync") */
  snapshot_interval: z.number().int().min(0).default(DEFAULT_SNAPSHOT_INTERVAL),
  /** how many of the node's snapshots to keep, newest first */
  snapshot_keep: z.number().int().min(1).max(16).default(2),
  /** a new home fills its store from a snapshot its peers offer, instead of replaying every block */
  state_sync: z.boolean().default(false),
  /** a validator whose store came from a snapshot waits before it signs (docs/operating.md, "Restoring a validator") */
  restore_guard: z.boolean().default(true),
  /** the block hash of the snapshot to trust, when the validators have changed since genesis */
  state_sync_trust_hash: z.string().regex(/^[0-9a-f]{64}$/, 'a block hash: 64 lowercase hex digits').optional(),
  max_cpu: z.number().positive().optional(),
  /** HTTP edge threads on the public listener (src/api/edge); 0 serves HTTP on the core thread; default from max_cpu */
  http_workers: z.number().int().min(0).max(64).optional(),
  max_ram_mb: z.number().int().positive().optional(),
  feed_disk_limit_mb: z.number().int().positive().optional(),
  chain_disk_limit_mb: z.number().int().positive().optional(),
  log_level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** mempool bounds (docs/protocol.md § 3.2) */
  mempool_max_txs: z.number().int().min(1).default(DEFAULT_MEMPOOL_OPTIONS.maxTxs),
  mempool_max_bytes: z.number().int().min(1024).default(DEFAULT_MEMPOOL_OPTIONS.maxBytes),
  mempool_max_per_sender: z.number().int().min(1).default(DEFAULT_MEMPOOL_OPTIONS.maxPerSender),
  /** new transactions get 503 for a while after the event loop lagged this long (ms); 0 never sheds (lag-gate.ts) */
  admission_max_lag_ms: z.number().int().min(0).default(DEFAULT_LAG_GATE.maxLagMs),
  /** the onboarding faucet: an operator-funded account that pays new users' first fees */
  onboarding: z.object({
    enabled: z.boolean().default(false),
    /** path (relative to the home) of a key file like dev_account.json: {pub_key, seed} */
    key_file: z.string().default('onboarding_key.json'),
    amount_ut: z.number().int().min(1).default(20_000),
    /** one claim per client IP per this many seconds, and one per key per this many */
    per_ip_interval_s: z.number().int().min(0).default(3600),
    per_key_interval_s: z.number().int().min(0).default(86_400)
  }).default({ enabled: false, key_file: 'onboarding_key.json', amount_ut: 20_000, per_ip_interval_s: 3600, per_key_interval_s: 86_400 })
})
export type NodeConfig = z.output<typeof NodeConfigSchema>

export interface FlagDef {
  flag: string
  key: keyof NodeConfig
  kind: 'string' | 'int' | 'number' | 'list' | 'bool'
  help: string
}

export const START_FLAGS: FlagDef[] = [
  { flag: '--http-addr <host:port>', key: 'http_addr', kind: 'string', help: 'HTTP and WebSocket listener (default :8080)' },
  { flag: '--p2p-listen <multiaddr>', key: 'p2p_listen', kind: 'list', help: 'libp2p listen address; may repeat (default /ip4/0.0.0.0/tcp/4001)' },
  { flag: '--peer <multiaddr>', key: 'peers', kind: 'list', help: 'a peer to dial, with /p2p/<peerId>; may repeat' },
  { flag: '--block-interval-ms <n>', key: 'block_interval_ms', kind: 'int', help: 'target time between blocks (default 1000)' },
  { flag: '--empty-blocks <true|false>', key: 'empty_blocks', kind: 'bool', help: 'commit a block every interval even when no transaction waits (default false)' },
  { flag: '--empty-block-interval-ms <n>', key: 'empty_block_interval_ms', kind: 'int', help: 'with --empty-blocks false, a heartbeat block this long after the last one; 0 never (default 30000)' },
  { flag: '--prune-keep-blocks <n>', key: 'prune_keep_blocks', kind: 'int', help: 'keep the transactions of the newest N blocks and drop older ones; headers and certificates stay (default 0: keep all)' },
  { flag: '--snapshot-interval <n>', key: 'snapshot_interval', kind: 'int', help: `take a state snapshot every N blocks and offer it to peers for state sync; 0 never (default ${DEFAULT_SNAPSHOT_INTERVAL})` },
  { flag: '--snapshot-keep <n>', key: 'snapshot_keep', kind: 'int', help: 'how many snapshots to keep, newest first (default 2)' },
  { flag: '--state-sync [true|false]', key: 'state_sync', kind: 'bool', help: 'a new home fetches a snapshot from its peers instead of replaying every block (default false)' },
  { flag: '--state-sync-trust-hash <hash>', key: 'state_sync_trust_hash', kind: 'string', help: 'the block hash of the snapshot to trust, once the validator set has changed since genesis' },
  { flag: '--restore-guard <true|false>', key: 'restore_guard', kind: 'bool', help: 'a validator restored from a snapshot signs nothing until the chain has moved past its start (default true)' },
  { flag: '--max-cpu <n>', key: 'max_cpu', kind: 'number', help: 'CPU cap in cores (default unlimited)' },
  { flag: '--http-workers <n>', key: 'http_workers', kind: 'int', help: 'threads that serve HTTP and WebSocket in front of the one that orders transactions; 0: that one thread serves them (default 0)' },
  { flag: '--max-ram-mb <n>', key: 'max_ram_mb', kind: 'int', help: 'memory cap in MiB (default unlimited)' },
  { flag: '--feed-disk-limit-mb <n>', key: 'feed_disk_limit_mb', kind: 'int', help: 'hard quota for new post bodies (default unlimited)' },
  { flag: '--chain-disk-limit-mb <n>', key: 'chain_disk_limit_mb', kind: 'int', help: 'advisory chain size limit; warns once a minute when exceeded' },
  { flag: '--log-level <level>', key: 'log_level', kind: 'string', help: 'fatal|error|warn|info|debug|trace|silent (default info)' }
]

/** Settings read from SVC_* environment variables (spec and decisions.md). */
export interface EnvSettings {
  apiToken: string | undefined
  apiPrivate: boolean
  rateLimitRps: number
  maxBodyBytes: number
  /** body cap of POST /feed/publish, whose attachment is raw before scrubbing shrinks it */
  maxUploadBytes: number
  disableSwagger: boolean
  /** SVC_DISABLE_EXPLORER: no block explorer at `/` (docs/explorer.md) */
  disableExplorer: boolean
  /** SVC_UPDATE_SOURCE_URL: the release feed GET /api/update-check reads (docs/operating.md) */
  updateSourceUrl: string | undefined
  /** SVC_UPDATE_TIMEOUT_MS: how long the release source may take to answer */
  updateTimeoutMs: number
  /** SVC_HEADERS_TIMEOUT_MS: how long a client may take to send a request's head (slowloris) */
  headersTimeoutMs: number
  /** SVC_REQUEST_TIMEOUT_MS: how long a client may take to send a whole request, body included */
  requestTimeoutMs: number
  /** SVC_KEEP_ALIVE_TIMEOUT_MS: how long an idle keep-alive connection is kept between requests */
  keepAliveTimeoutMs: number
}


export function readEnv (env: NodeJS.ProcessEnv = process.env): EnvSettings {
  const num = (name: string, fallback: number): number => {
    const raw = env[name]
    if (raw === undefined || raw === '') return fallback
    const value = Number(raw)
    if (!Number.isFinite(value) || value < 0) throw new KithError('CONFIG_INVALID', `${name} must be a non-negative number, got "${raw}"`)
    return value
  }
  const token = env.SVC_API_TOKEN
  const updateSource = env.SVC_UPDATE_SOURCE_URL
  const updateTimeoutMs = num('SVC_UPDATE_TIMEOUT_MS', DEFAULT_SOURCE_TIMEOUT_MS)
  if (updateTimeoutMs === 0) throw new KithError('CONFIG_INVALID', 'SVC_UPDATE_TIMEOUT_MS must be a positive number of milliseconds')
  const positive = (name: string, fallback: number): number => {
    const value = num(name, fallback)
    if (value === 0) throw new KithError('CONFIG_INVALID', `${name} must be a positive number of milliseconds`)
    return value
  }
  const headersTimeoutMs = positive('SVC_HEADERS_TIMEOUT_MS', 20_000)
  // a 16 MiB upload over a slow uplink (1 Mbit/s) takes about 130 s
  const requestTimeoutMs = positive('SVC_REQUEST_TIMEOUT_MS', 300_000)
  // node's http server refuses a head timeout longer than the whole request's
  if (headersTimeoutMs > requestTimeoutMs) throw new KithError('CONFIG_INVALID', 'SVC_HEADERS_TIMEOUT_MS must not exceed SVC_REQUEST_TIMEOUT_MS')
  return {
    apiToken: token === undefined || token === '' ? undefined : token,
    apiPrivate: env.SVC_API_PRIVATE === 'true',
    rateLimitRps: num('SVC_RATE_LIMIT_RPS', 50),
    maxBodyBytes: num('SVC_MAX_BODY_BYTES', 1024 * 1024 + MAX_POST_SIZE * 2),
    // a 12-megapixel phone photo is 3-8 MB, base64 a third more
    maxUploadBytes: num('SVC_MAX_UPLOAD_BYTES', 16 * 1024 * 1024),
    disableSwagger: env.SVC_DISABLE_SWAGGER === 'true',
    disableExplorer: env.SVC_DISABLE_EXPLORER === 'true',
    updateSourceUrl: updateSource === undefined || updateSource === '' ? undefined : parseSourceUrl(updateSource),
    updateTimeoutMs,
    headersTimeoutMs,
    requestTimeoutMs,
    // longer than the 60 s idle timeout of common load balancers, so the node never closes first
    keepAliveTimeoutMs: positive('SVC_KEEP_ALIVE_TIMEOUT_MS', 65_000)
  }
}

/** Old names still accepted, in a config file or as a flag, for the setting that replaced them. */
export const DEPRECATED_NAMES: Record<string, { key: keyof NodeConfig, flag: string }> = {
  // the listener serves the whole API, not statistics
  stats_addr: { key: 'http_addr', flag: '--stats-addr' }
}

/** A layer with its deprecated names replaced by the current ones (a current name set in the same layer wins). */
function renameDeprecated (layer: Record<string, unknown>, used: Set<string>): Record<string, unknown> {
  const out = { ...layer }
  for (const [old, { key }] of Object.entries(DEPRECATED_NAMES)) {
    if (out[old] === undefined) continue
    used.add(old)
    if (out[key] === undefined) out[key] = out[old]
    delete out[old]
  }
  return out
}

/**
 * Defaults, then the home's config.json, then flags. `deprecated` lists old setting names found
 * (the caller warns).
 */
export function resolveConfigLayers (fileConfig: unknown, flags: Record<string, unknown>): { config: NodeConfig, deprecated: string[] } {
  const used = new Set<string>()
  const file = typeof fileConfig === 'object' && fileConfig !== null ? renameDeprecated(fileConfig as Record<string, unknown>, used) : fileConfig
  const given = renameDeprecated(Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined)), used)
  const merged = { ...(file as object), ...given }
  return { config: parseOrThrow(NodeConfigSchema, merged, 'CONFIG_INVALID', 'config'), deprecated: [...used] }
}

export function resolveConfig (fileConfig: unknown, flags: Partial<NodeConfig>): NodeConfig {
  return resolveConfigLayers(fileConfig, flags).config
}

/** ":8080" -> {host: undefined, port: 8080}; "127.0.0.1:9000" -> {host, port}. */
export function parseListenAddr (addr: string): { host: string | undefined, port: number } {
  const idx = addr.lastIndexOf(':')
  if (idx < 0) throw new KithError('CONFIG_INVALID', `listen address "${addr}" must be HOST:PORT or :PORT`)
  const host = addr.slice(0, idx).replace(/^\[|\]$/g, '')
  const port = Number(addr.slice(idx + 1))
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new KithError('CONFIG_INVALID', `listen address "${addr}" has an invalid port`)
  return { host: host === '' ? undefined : host, port }
}
