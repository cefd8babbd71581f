/**
 * GET /api/limits: every limit this node enforces, read from the constants and the settings the
 * enforcing code uses (never restated here), so the published numbers cannot drift from the
 * checks. Sizes in bytes, times in seconds, amounts in µT; `null` means unlimited. Beside the
 * mailbox and feed caps stands the usage they are held against (stored bytes and envelopes, body
 * bytes and live posts), so a reader sees how near a cap the node is.
 */
import { z } from 'zod'
import {
  BASE_POST_FEE, MAX_BLOCK_BYTES, MAX_DEVICE_NAME_CHARS, MAX_DEVICES, MAX_INTRO_CHARS, MAX_MEMO_CHARS, MAX_NICKNAME_CHARS, MAX_POST_SIZE,
  MAX_TX_AGE_IN_BLOCK_MS, MIN_CONTACT_FEE_UT, MIN_FEE, POST_BYTE_FEE, POST_METADATA_BYTES, TIMESTAMP_TOLERANCE_MS, maxBlockTxs, type ChainParams,
  Contracts, DEFAULT_GAS_LIMIT, DEPLOY_BYTE_FEE, MAX_ARGS_JSON_BYTES, MAX_CONTRACT_CODE_BYTES, MAX_GAS_LIMIT, type StateReader
} from '../chain/index.js'
import { USERNAME_FEE_UT, USERNAME_MAX_CHARS, USERNAME_MIN_CHARS, VM_LIMITS } from '../contracts/index.js'
import { CONTRACT_PAGE_DEFAULT, CONTRACT_PAGE_MAX } from './routes/contracts.js'
import {
  DEFAULT_FEED_LIMIT, DEFAULT_TRENDING_HOURS, FOR_YOU_HOURS, MAX_FEED_LIMIT, MAX_HASHTAG_CHARS, MAX_HASHTAGS, MAX_WINDOW_HOURS, PUBLISH_TS_TOLERANCE_S,
  type FeedService
} from '../feed/index.js'
import { JPEG_QUALITY, MAX_SIDE_PX } from '../media/index.js'
import type { MempoolOptions } from '../mempool/index.js'
import type { EnvSettings } from '../node/index.js'
import {
  DEFAULT_PAGE_SIZE, MAX_CIPHERTEXT_BYTES, MAX_ENVELOPES_PER_REQUEST, MAX_PAGE_BYTES, MAX_PAGE_SIZE, MAX_SEND_PLAINTEXT_BYTES, SIGNED_TS_TOLERANCE_MS,
  MAX_READ_NONCES, MAX_READ_NONCES_PER_CLIENT, MAX_READ_NONCES_PER_MAILBOX, READ_NONCE_TTL_MS,
  type RelayService
} from '../relay/index.js'
import { ADDRESS_HISTORY_DEFAULT, ADDRESS_HISTORY_MAX } from './schemas.js'

const int = z.number().int()
const page = z.object({ default: int, max: int })

export const LimitsSchema = z.object({
  http: z.object({
    max_body_bytes: int.meta({ description: 'request body cap (SVC_MAX_BODY_BYTES); larger bodies get 413' }),
    publish_max_body_bytes: int.meta({ description: 'body cap of POST /feed/publish (SVC_MAX_UPLOAD_BYTES, at least max_body_bytes)' }),
    rate_limit_rps: z.number().meta({ description: 'requests per second per client IP, bursts of twice that (SVC_RATE_LIMIT_RPS); 0: no limit. Over it: 429 with Retry-After; while it is set, every answer carries RateLimit-Limit (the burst), RateLimit-Remaining and RateLimit-Reset (seconds until the bucket is full)' }),
    headers_timeout_s: z.number().meta({ description: 'a request\'s head must arrive within this (SVC_HEADERS_TIMEOUT_MS), else 408 and the connection is closed' }),
    request_timeout_s: z.number().meta({ description: 'a whole request, body included, must arrive within this (SVC_REQUEST_TIMEOUT_MS), else 408 and the connection is closed' }),
    keep_alive_timeout_s: z.number().meta({ description: 'an idle keep-alive connection is closed after this (SVC_KEEP_ALIVE_TIMEOUT_MS)' })
  }),
  chain: z.object({
    min_fee_ut: int.meta({ description: 'least fee of every transaction' }),
    timestamp_tolerance_s: int.meta({ description: 'a submitted transaction\'s timestamp may differ this much from the node clock' }),
    max_tx_age_in_block_s: int.meta({ description: 'how far behind the block time a transaction in a block may be' }),
    max_memo_chars: int,
    max_block_txs: int,
    max_block_bytes: int,
    address_history: page.meta({ description: 'the `limit` of GET /api/address/{pubkey}' })
  }),
  mempool: z.object({
    max_txs: int,
    max_bytes: int,
    max_per_sender: int.meta({ description: 'pending transactions of one sender; over any bound: 503 with Retry-After' })
  }),
  identity: z.object({ max_nickname_chars: int, max_device_name_chars: int, max_devices: int }),
  contacts: z.object({ min_contact_fee_ut: int, max_intro_chars: int }),
  contracts: z.object({
    gas_price: int.meta({ description: 'the live gas price from chain state: µT per 1,000 gas, billed beside the fee' }),
    min_call_fee_ut: int,
    default_gas_limit: int.meta({ description: 'what clients put in gas_limit when told nothing' }),
    max_gas_limit: int,
    max_args_json_bytes: int,
    max_code_bytes: int,
    deploy_fee_formula: z.string(),
    deploy_byte_fee_ut: int,
    vm: z.record(z.string(), int).meta({ description: 'caps of one call inside the VM (docs/contracts.md)' }),
    page: page.meta({ description: 'the `limit` of contract and log listings' }),
    username: z.object({ fee_ut: int.meta({ description: 'exactly this is attached to the registry\'s register' }), min_chars: int, max_chars: int, characters: z.string() })
  }),
  relay: z.object({
    mailbox_ttl_s: z.number().meta({ description: 'how long envelopes are kept (SVC_MAILBOX_TTL_DAYS)' }),
    max_envelopes_per_mailbox: int,
    max_envelopes_per_sender: int.meta({ description: 'stored envelopes of one sender key' }),
    max_stored_bytes: int.nullable().meta({ description: 'stored envelope bytes of the whole mailbox (SVC_MAILBOX_MAX_MB); null: no cap. Past it a new envelope gets 507, no stored one is evicted' }),
    stored_bytes: int.meta({ description: 'usage now: the envelope bytes counted against max_stored_bytes' }),
    stored_envelopes: int.meta({ description: 'usage now: envelopes stored in the mailbox' }),
    sender_rate_limit_rps: z.number().meta({ description: 'broadcasts per second per sender key, bursts of twice that (SVC_RELAY_SENDER_RPS); 0: no limit' }),
    client_mailbox_per_min: z.number().meta({ description: 'envelopes a minute from one client address (IPv6: its /64) into one mailbox, a minute\'s worth at once (SVC_RELAY_CLIENT_MAILBOX_PER_MIN); 0: no limit. Over it: 429 RELAY_CLIENT_QUOTA with Retry-After' }),
    client_mailbox_max: int.meta({ description: 'envelopes one client address may store into one mailbox within mailbox_ttl_s (SVC_RELAY_CLIENT_MAILBOX_MAX); 0: no limit. Over it: 429 RELAY_CLIENT_QUOTA with Retry-After' }),
    mailbox_per_min: z.number().meta({ description: 'envelopes a minute into one mailbox from all client addresses together, and again from all peers together (SVC_RELAY_MAILBOX_PER_MIN); 0: no limit. Over it: 429 RELAY_RECIPIENT_BUSY with Retry-After; a peer\'s envelope is ignored and comes again by anti-entropy' }),
    read_auth_required: z.boolean().meta({ description: 'inbox reads need the owner\'s signature over a node-issued nonce (SVC_RELAY_READ_AUTH)' }),
    read_nonce: z.object({ ttl_s: z.number(), max_per_mailbox: int, max_per_client: int, max: int })
      .meta({ description: 'nonces of POST /relay/inbox/nonce: lifetime, and unused ones kept per mailbox (a new one retires the oldest), per client address (then 429) and in all (then 503)' }),
    max_ciphertext_bytes: int,
    max_send_plaintext_bytes: int.meta({ description: 'POST /relay/send' }),
    max_envelopes_per_request: int,
    inbox_page: page.extend({ max_bytes: int }),
    timestamp_tolerance_s: int.meta({ description: 'signed inbox deletes' })
  }).optional().meta({ description: 'absent when the node runs no relay mailbox' }),
  feed: z.object({
    max_post_size_bytes: int.meta({ description: 'MaxPostSize: content + stored attachment + post_metadata_bytes; larger: 413' }),
    post_metadata_bytes: int,
    base_post_fee_ut: int,
    post_byte_fee_ut: int,
    post_fee_formula: z.string(),
    max_hashtags: int,
    max_hashtag_chars: int,
    page: page.meta({ description: 'the `limit` of feed listings' }),
    trending_hours: page,
    for_you_hours: int,
    timestamp_tolerance_s: int.meta({ description: 'signed publish requests' }),
    disk_limit_bytes: int.nullable().meta({ description: '--feed-disk-limit-mb; a publish past it gets 507. null: unlimited' }),
    disk_used_bytes: int.meta({ description: 'usage now: stored post body bytes counted against disk_limit_bytes' }),
    pending: z.object({
      max_per_author: int.nullable().meta({ description: 'uncommitted bodies (published, no CREATE_POST committed yet) of one author (SVC_FEED_PENDING_PER_AUTHOR); past it 429 with Retry-After. null: no bound' }),
      max_bytes_per_author: int.nullable().meta({ description: 'their bytes (post size) for one author (SVC_FEED_PENDING_MB_PER_AUTHOR); null: no bound' }),
      max_per_ip: int.nullable().meta({ description: 'uncommitted bodies published from one client IP (SVC_FEED_PENDING_PER_IP); null: no bound' }),
      max_bytes_per_ip: int.nullable().meta({ description: 'their bytes for one client IP (SVC_FEED_PENDING_MB_PER_IP); null: no bound' }),
      ttl_s: int.meta({ description: 'an uncommitted body is collected this long after it was published' }),
      funds_rule: z.string().meta({ description: 'what a publish needs of the author\'s committed balance; short of it: 402' }),
      bodies: int.meta({ description: 'usage now: uncommitted bodies stored' })
    }),
    live_posts: int.meta({ description: 'usage now: live (committed, not deleted) posts in the feed indexes' }),
    image: z.object({ max_side_px: int, jpeg_quality: int }).meta({ description: 'attachments are re-encoded to this' })
  }).optional().meta({ description: 'absent when the node runs no feed' })
}).meta({ id: 'Limits' })
export type Limits = z.output<typeof LimitsSchema>

/** Where the enforced values live: the node's settings and the running subsystems. */
export interface LimitSources {
  env: EnvSettings
  chainParams: ChainParams
  /** committed chain state, for the values that live there (the gas price) */
  state: StateReader
  mempool: Readonly<MempoolOptions>
  relay?: { service: RelayService, rateLimitPerSender: number }
  feed?: FeedService
}

const seconds = (ms: number): number => ms / 1000
/** a bound of 0 means none */
const bound = (n: number): number | null => n > 0 ? n : null

export function nodeLimits (src: LimitSources): Limits {
  const relay = src.relay
  return {
    http: {
      max_body_bytes: src.env.maxBodyBytes,
      // the cap src/api/server.ts gives /feed/publish
      publish_max_body_bytes: Math.max(src.env.maxBodyBytes, src.env.maxUploadBytes),
      rate_limit_rps: src.env.rateLimitRps,
      headers_timeout_s: src.env.headersTimeoutMs / 1000,
      request_timeout_s: src.env.requestTimeoutMs / 1000,
      keep_alive_timeout_s: src.env.keepAliveTimeoutMs / 1000
    },
    chain: {
      min_fee_ut: MIN_FEE,
      timestamp_tolerance_s: seconds(TIMESTAMP_TOLERANCE_MS),
      max_tx_age_in_block_s: seconds(MAX_TX_AGE_IN_BLOCK_MS),
      max_memo_chars: MAX_MEMO_CHARS,
      max_block_txs: maxBlockTxs(src.chainParams),
      max_block_bytes: MAX_BLOCK_BYTES,
      address_history: { default: ADDRESS_HISTORY_DEFAULT, max: ADDRESS_HISTORY_MAX }
    },
    mempool: { max_txs: src.mempool.maxTxs, max_bytes: src.mempool.maxBytes, max_per_sender: src.mempool.maxPerSender },
    identity: { max_nickname_chars: MAX_NICKNAME_CHARS, max_device_name_chars: MAX_DEVICE_NAME_CHARS, max_devices: MAX_DEVICES },
    contacts: { min_contact_fee_ut: MIN_CONTACT_FEE_UT, max_intro_chars: MAX_INTRO_CHARS },
    contracts: {
      gas_price: Contracts.gasPrice(src.state),
      min_call_fee_ut: MIN_FEE,
      default_gas_limit: DEFAULT_GAS_LIMIT,
      max_gas_limit: MAX_GAS_LIMIT,
      max_args_json_bytes: MAX_ARGS_JSON_BYTES,
      max_code_bytes: MAX_CONTRACT_CODE_BYTES,
      deploy_fee_formula: 'min_fee_ut + code bytes × deploy_byte_fee_ut',
      deploy_byte_fee_ut: DEPLOY_BYTE_FEE,
      vm: { ...VM_LIMITS },
      page: { default: CONTRACT_PAGE_DEFAULT, max: CONTRACT_PAGE_MAX },
      username: { fee_ut: USERNAME_FEE_UT, min_chars: USERNAME_MIN_CHARS, max_chars: USERNAME_MAX_CHARS, characters: 'a-z 0-9 _ (ASCII uppercase is folded to lowercase)' }
    },
    ...(relay !== undefined
      ? {
          relay: {
            mailbox_ttl_s: seconds(relay.service.ttlMs),
            max_envelopes_per_mailbox: relay.service.limits.maxPerMailbox,
            max_envelopes_per_sender: relay.service.limits.maxPerSender,
            max_stored_bytes: Number.isFinite(relay.service.limits.maxStoredBytes) ? relay.service.limits.maxStoredBytes : null,
            stored_bytes: relay.service.storedBytes,
            stored_envelopes: relay.service.storedEnvelopes,
            sender_rate_limit_rps: relay.rateLimitPerSender,
            client_mailbox_per_min: relay.service.admission.limits.clientMailboxPerMin,
            client_mailbox_max: relay.service.admission.limits.clientMailboxMax,
            mailbox_per_min: relay.service.admission.limits.mailboxPerMin,
            read_auth_required: relay.service.requireReadAuth,
            read_nonce: { ttl_s: seconds(READ_NONCE_TTL_MS), max_per_mailbox: MAX_READ_NONCES_PER_MAILBOX, max_per_client: MAX_READ_NONCES_PER_CLIENT, max: MAX_READ_NONCES },
            max_ciphertext_bytes: MAX_CIPHERTEXT_BYTES,
            max_send_plaintext_bytes: MAX_SEND_PLAINTEXT_BYTES,
            max_envelopes_per_request: MAX_ENVELOPES_PER_REQUEST,
            inbox_page: { default: DEFAULT_PAGE_SIZE, max: MAX_PAGE_SIZE, max_bytes: MAX_PAGE_BYTES },
            timestamp_tolerance_s: seconds(SIGNED_TS_TOLERANCE_MS)
          }
        }
      : {}),
    ...(src.feed !== undefined
      ? {
          feed: {
            max_post_size_bytes: MAX_POST_SIZE,
            post_metadata_bytes: POST_METADATA_BYTES,
            base_post_fee_ut: BASE_POST_FEE,
            post_byte_fee_ut: POST_BYTE_FEE,
            post_fee_formula: 'base_post_fee_ut + size × post_byte_fee_ut',
            max_hashtags: MAX_HASHTAGS,
            max_hashtag_chars: MAX_HASHTAG_CHARS,
            page: { default: DEFAULT_FEED_LIMIT, max: MAX_FEED_LIMIT },
            trending_hours: { default: DEFAULT_TRENDING_HOURS, max: MAX_WINDOW_HOURS },
            for_you_hours: FOR_YOU_HOURS,
            timestamp_tolerance_s: PUBLISH_TS_TOLERANCE_S,
            disk_limit_bytes: src.feed.diskUsage().limitBytes ?? null,
            disk_used_bytes: src.feed.diskUsage().usedBytes,
            pending: {
              max_per_author: bound(src.feed.pendingLimits.maxPerAuthor),
              max_bytes_per_author: bound(src.feed.pendingLimits.maxBytesPerAuthor),
              max_per_ip: bound(src.feed.pendingLimits.maxPerClient),
              max_bytes_per_ip: bound(src.feed.pendingLimits.maxBytesPerClient),
              ttl_s: seconds(src.feed.pendingTtlMs),
              funds_rule: 'balance ≥ the estimated fee of this post + the estimated fees of the author\'s other uncommitted posts',
              bodies: src.feed.diskUsage().pendingBodies
            },
            live_posts: src.feed.livePostCount,
            image: { max_side_px: MAX_SIDE_PX, jpeg_quality: JPEG_QUALITY }
          }
        }
      : {})
  }
}
