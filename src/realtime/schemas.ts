/**
 * One zod schema per real-time wire message: the client operations (validated with these) and
 * the push events (built to these types, and all of them shown in the OpenAPI document under
 * `components.schemas`). docs/realtime.md describes the same messages in prose.
 */
import { z } from 'zod'
import { TransactionSchema } from '../chain/index.js'

const HEX64 = /^[0-9a-fA-F]{64}$/
const ENVELOPE_ID = /^[0-9a-fA-F]{32}$/

export const RequestIdSchema = z.string().max(64).optional()
  .meta({ description: 'chosen by the client (at most 64 characters); echoed as `req` in the answer and in any error about this request' })

const Ed25519Pub = z.string().regex(HEX64, 'must be a 64-character hex Ed25519 public key').overwrite((s) => s.toLowerCase())
const X25519Pub = z.string().regex(HEX64, 'must be a 64-character hex X25519 public key').overwrite((s) => s.toLowerCase())

// ---- topics ----

export const BlocksTopicSchema = z.object({ topic: z.literal('blocks') })
  .meta({ id: 'WsTopicBlocks', description: 'every committed block: `block` events' })
export const TxsTopicSchema = z.object({
  topic: z.literal('txs'),
  address: z.string().min(1).max(128).optional()
    .meta({ description: 'Ed25519 pubkey or address; transactions from or to it. Absent: every transaction' })
}).meta({ id: 'WsTopicTxs', description: '`tx` events: transactions admitted to this node\'s mempool (status `accepted`) and committed in a block (status `confirmed`)' })
export const MailboxTopicSchema = z.object({
  topic: z.literal('mailbox'),
  pub: X25519Pub.meta({ description: 'the mailbox: an X25519 pubkey, hex' }),
  since: z.number().int().min(0).optional()
    .meta({ description: 'unix s, inclusive, as in GET /relay/inbox: first replay the stored envelopes from here, then `caught_up`, then live' }),
  after: z.string().regex(ENVELOPE_ID, 'must be a 32-character hex envelope id').overwrite((s) => s.toLowerCase()).optional()
    .meta({ description: 'with `since`: only envelopes after (since, after) in (sent_at, id) order, the id of the last envelope the app holds' })
}).meta({ id: 'WsTopicMailbox', description: '`inbox` events for envelopes stored on this node for `pub`, from clients or by gossip' })
export const TypingTopicSchema = z.object({
  topic: z.literal('typing'),
  with: Ed25519Pub.optional().meta({ description: 'only typing by this peer (Ed25519 pubkey); absent: typing by anyone, to the proven identity' })
}).meta({ id: 'WsTopicTyping', description: '`typing` events addressed to the identity this connection proved (needs `auth` first)' })

export const TopicSchema = z.discriminatedUnion('topic', [BlocksTopicSchema, TxsTopicSchema, MailboxTopicSchema, TypingTopicSchema])
export type Topic = z.output<typeof TopicSchema>
export const TOPIC_NAMES = ['blocks', 'txs', 'mailbox', 'typing'] as const

// ---- client operations ----

// loose: the topic's members sit beside op and req in the same object
export const SubscribeMessageSchema = z.looseObject({ op: z.literal('subscribe'), req: RequestIdSchema }).and(TopicSchema)
  .meta({ id: 'WsSubscribe', description: 'subscribe to a topic; answered `subscribed` or `error`. A mailbox with `since` (or `after`) then replays the stored envelopes (`inbox` with `replay: true`), sends `caught_up`, and goes live' })
export const UnsubscribeMessageSchema = z.looseObject({ op: z.literal('unsubscribe'), req: RequestIdSchema }).and(TopicSchema)
  .meta({ id: 'WsUnsubscribe', description: 'ends a subscription given with the same topic members (`since` and `after` are ignored); answered `unsubscribed`' })
export const SubmitTxMessageSchema = z.object({
  op: z.literal('submit_tx'),
  req: RequestIdSchema,
  tx: TransactionSchema.meta({ description: 'the transaction, submitted form; checked exactly as the body of POST /api/tx' })
}).meta({ id: 'WsSubmitTx', description: 'submits a transaction through the same path as POST /api/tx; answered `submit_ack`. In token-writes mode the upgrade needs `?token=`' })
/** What the gateway itself checks of a submit_tx: the transaction goes whole to the node, which checks it as POST /api/tx does. */
export const SubmitTxEnvelopeSchema = SubmitTxMessageSchema.extend({ tx: z.unknown() })
export const TypingMessageSchema = z.object({
  op: z.literal('typing'),
  req: RequestIdSchema,
  to: Ed25519Pub.meta({ description: 'the peer being written to (Ed25519 pubkey)' }),
  state: z.enum(['typing', 'stopped']).default('typing')
}).meta({ id: 'WsTyping', description: 'tells `to` that the proven identity of this connection is typing; needs `auth` first. Not answered unless it fails' })
export const PingMessageSchema = z.object({ op: z.literal('ping'), req: RequestIdSchema })
  .meta({ id: 'WsPing', description: 'answered `pong`; also counts as activity for the idle timeout' })
export const AuthMessageSchema = z.object({
  op: z.literal('auth'),
  req: RequestIdSchema,
  nonce: z.string().regex(HEX64, 'must be the 64-character hex nonce of the `hello` event'),
  ed25519_pub: Ed25519Pub,
  sig: z.string().min(1).max(128).meta({ description: 'base64 Ed25519 signature by ed25519_pub over `kith-ws-auth:<nonce>:<ed25519_pub>`' })
}).meta({ id: 'WsAuth', description: 'proves an Ed25519 identity for this connection with the nonce of `hello`; answered `authenticated` or `error`' })

export const CLIENT_OPS = ['subscribe', 'unsubscribe', 'submit_tx', 'typing', 'ping', 'auth'] as const
export type ClientOp = typeof CLIENT_OPS[number]

/** The op and request id of any message, read before its own schema. */
export const MessageHeadSchema = z.object({ op: z.string().max(32), req: z.unknown().optional() })

// ---- push events ----

export const HelloEventSchema = z.object({
  event: z.literal('hello'),
  nonce: z.string().meta({ description: '32 random bytes, hex: sign `kith-ws-auth:<nonce>:<ed25519_pub>` to prove a key (op `auth`); one use' }),
  protocol_version: z.number().int(),
  node_version: z.string(),
  limits: z.object({
    max_message_bytes: z.number().int(),
    max_subscriptions: z.number().int(),
    messages_per_second: z.number(),
    heartbeat_ms: z.number().int(),
    idle_ms: z.number().int()
  }),
  mailbox_needs_auth: z.boolean().meta({ description: 'true when the node runs with SVC_RELAY_READ_AUTH: a mailbox subscription needs a proven key that owns the mailbox' }),
  token_accepted: z.boolean().meta({ description: 'whether this connection may submit transactions in token-writes mode' })
}).meta({ id: 'WsHello', description: 'the first message on every connection' })
export const AuthenticatedEventSchema = z.object({ event: z.literal('authenticated'), req: z.string().optional(), ed25519_pub: z.string() })
  .meta({ id: 'WsAuthenticated' })
export const SubscribedEventSchema = z.object({ event: z.literal('subscribed'), req: z.string().optional(), topic: z.enum(TOPIC_NAMES), key: z.string().meta({ description: 'the subscription, e.g. `mailbox:<pub>`' }) })
  .meta({ id: 'WsSubscribed' })
export const UnsubscribedEventSchema = z.object({ event: z.literal('unsubscribed'), req: z.string().optional(), topic: z.enum(TOPIC_NAMES), key: z.string() })
  .meta({ id: 'WsUnsubscribed' })
export const CaughtUpEventSchema = z.object({
  event: z.literal('caught_up'),
  req: z.string().optional(),
  topic: z.literal('mailbox'),
  pub: z.string(),
  replayed: z.number().int().meta({ description: 'stored envelopes replayed before this marker' })
}).meta({ id: 'WsCaughtUp', description: 'end of a mailbox replay: every later `inbox` event is live, none repeats a replayed one' })
export const BlockEventSchema = z.object({
  event: z.literal('block'),
  height: z.number().int(),
  hash: z.string(),
  time: z.string().meta({ description: 'block time, ISO 8601 UTC' }),
  proposer: z.string(),
  tx_count: z.number().int(),
  committed_at: z.number().int().optional().meta({ description: 'unix ms at which this node committed it; absent in an SSE replay' })
}).meta({ id: 'WsBlockEvent' })
export const TxEventSchema = z.object({
  event: z.literal('tx'),
  id: z.string(),
  type: z.string(),
  from: z.string(),
  to: z.string(),
  amount_ut: z.number().int(),
  fee_ut: z.number().int(),
  status: z.enum(['accepted', 'confirmed']),
  block_index: z.number().int().optional().meta({ description: 'height of the block, when confirmed' })
}).meta({ id: 'WsTxEvent' })
export const InboxPushEventSchema = z.object({
  event: z.literal('inbox'),
  id: z.string().meta({ description: 'canonical envelope id' }),
  recipient_pub: z.string(),
  sender_pub: z.string(),
  sender_ed25519_pub: z.string().meta({ description: 'sender master Ed25519 pubkey; "" for senders that did not supply one' }),
  sent_at: z.number().int(),
  replay: z.boolean().optional().meta({ description: 'true for envelopes replayed after `since`, before `caught_up`' })
}).meta({ id: 'WsInboxEvent', description: 'an envelope for a subscribed mailbox; fetch its body with GET /relay/inbox?pub=&since=<sent_at>' })
export const TypingEventSchema = z.object({
  event: z.literal('typing'),
  from: z.string().meta({ description: 'the proven Ed25519 identity that is typing' }),
  to: z.string(),
  state: z.enum(['typing', 'stopped'])
}).meta({ id: 'WsTypingEvent' })
export const SubmitAckEventSchema = z.object({
  event: z.literal('submit_ack'),
  req: z.string().optional(),
  id: z.string().meta({ description: 'the transaction id ("" when the transaction had none)' }),
  status: z.enum(['accepted', 'rejected']),
  code: z.number().int().optional().meta({ description: 'when rejected: the HTTP status POST /api/tx would have answered' }),
  error: z.string().optional().meta({ description: 'when rejected: the same text as POST /api/tx\'s `error`' })
}).meta({ id: 'WsSubmitAck' })
export const PongEventSchema = z.object({ event: z.literal('pong'), req: z.string().optional(), time: z.number().int().meta({ description: 'node clock, unix ms' }) })
  .meta({ id: 'WsPong' })
export const ErrorEventSchema = z.object({
  event: z.literal('error'),
  op: z.string().nullable().meta({ description: 'the op of the request this answers; null when the message had none' }),
  req: z.string().optional(),
  code: z.number().int().meta({ description: 'the HTTP status that fits (400, 401, 403, 429, 503, …)' }),
  error: z.string()
}).meta({ id: 'WsError', description: 'a request that failed; the connection stays open' })

export type HelloEvent = z.input<typeof HelloEventSchema>
export type BlockEvent = z.input<typeof BlockEventSchema>
export type TxEvent = z.input<typeof TxEventSchema>
export type InboxPushEvent = z.input<typeof InboxPushEventSchema>
export type TypingEvent = z.input<typeof TypingEventSchema>
export type SubmitAckEvent = z.input<typeof SubmitAckEventSchema>
export type ErrorEvent = z.input<typeof ErrorEventSchema>

/** Every real-time schema, for the OpenAPI document's components. */
export const REALTIME_SCHEMAS: Record<string, z.ZodType> = {
  WsSubscribe: SubscribeMessageSchema,
  WsUnsubscribe: UnsubscribeMessageSchema,
  WsSubmitTx: SubmitTxMessageSchema,
  WsTyping: TypingMessageSchema,
  WsPing: PingMessageSchema,
  WsAuth: AuthMessageSchema,
  WsHello: HelloEventSchema,
  WsAuthenticated: AuthenticatedEventSchema,
  WsSubscribed: SubscribedEventSchema,
  WsUnsubscribed: UnsubscribedEventSchema,
  WsCaughtUp: CaughtUpEventSchema,
  WsBlockEvent: BlockEventSchema,
  WsTxEvent: TxEventSchema,
  WsInboxEvent: InboxPushEventSchema,
  WsTypingEvent: TypingEventSchema,
  WsSubmitAck: SubmitAckEventSchema,
  WsPong: PongEventSchema,
  WsError: ErrorEventSchema
}

/** WebSocket close codes the gateway uses (docs/realtime.md). */
export const CLOSE_CODES = {
  /** the node is shutting down (SIGTERM/SIGINT): reconnect later */
  GOING_AWAY: 1001,
  /** a message larger than the cap (sent by the ws library itself) */
  MESSAGE_TOO_BIG: 1009,
  /** the send queue passed its bound: the client did not read fast enough; reconnect and refetch (mailbox: `since`) */
  SLOW_CONSUMER: 4000,
  /** no subscription and no message for the idle timeout */
  IDLE: 4001,
  /** the per-connection message rate was exceeded again and again */
  RATE_LIMITED: 4029
} as const
