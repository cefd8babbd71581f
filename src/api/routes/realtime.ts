/**
 * GET /api/ws and GET /api/events as routes, so both appear in the OpenAPI document. The
 * WebSocket itself is taken on the server's 'upgrade' event by the gateway; a plain GET of
 * /api/ws is answered 426.
 */
import { z } from 'zod'
import { KithError } from '../../errors/index.js'
import { ERROR_CODE_HEADER } from '../errors.js'
import { CLOSE_CODES, type RealtimeGateway, type RealtimeLimits } from '../../realtime/index.js'
import { route, type AnyRoute } from '../route.js'
import { ErrorSchema } from '../schemas.js'

const EventsQuery = z.object({
  topics: z.string().max(4096).optional()
    .meta({ description: 'comma-separated: `blocks` (default), `txs`, `txs:<pubkey or address>`, `mailbox:<x25519 pubkey>`' }),
  last_event_id: z.string().max(20).optional()
    .meta({ description: 'for clients that cannot send the `Last-Event-ID` header: the last block height received' }),
  token: z.string().optional().meta({ description: 'fully private mode: the token, when the client cannot send `Authorization`' })
})

function wsDescription (limits: RealtimeLimits): string {
  return [
    'The real-time channel (WebSocket upgrade; docs/realtime.md). JSON text messages. The node first sends `hello` (WsHello) with a nonce.',
    'Client operations, each with an optional `req` echoed in its answer: `subscribe` / `unsubscribe` (WsSubscribe: topics `blocks`, `txs` with an optional `address`,',
    '`mailbox` with `pub` and optional `since`/`after` for replay-then-live ending in `caught_up`, `typing` with an optional `with`), `submit_tx` (WsSubmitTx, answered',
    '`submit_ack` with the transaction id and the outcome and error text of POST /api/tx), `typing` (WsTyping), `ping` (answered `pong`), `auth` (WsAuth: Ed25519',
    'signature over `kith-ws-auth:<nonce>:<ed25519_pub>`). Push events: `block`, `tx`, `inbox` (with `sender_ed25519_pub`, "" when none), `typing`, `submit_ack`;',
    'failures come back as `error` naming the `op` and `req`. All message schemas are under components.schemas (Ws*).',
    '',
    'Tokens: fully private mode needs `?token=` on the upgrade (else 401); token-writes mode needs it for `submit_tx` only. Mailbox subscriptions need a proven key that owns',
    'the mailbox when the node runs with SVC_RELAY_READ_AUTH; typing always needs a proven key.',
    '',
    `Caps: ${limits.maxConnectionsPerIp || 'unlimited'} connections per IP (429 on the upgrade), ${limits.maxConnections || 'unlimited'} in all (503), ${limits.maxSubscriptions} subscriptions per connection,`,
    `messages of at most ${limits.maxMessageBytes} bytes (close 1009), ${limits.messagesPerSecond} messages/s (bursts of twice that), a send queue of ${limits.maxQueuedBytes} bytes.`,
    'The upgrade and every client message also take a token from the per-IP bucket that limits HTTP (SVC_RATE_LIMIT_RPS): an empty bucket refuses the upgrade with 429 and',
    'Retry-After, and a message with code 429 (`submit_ack` rejected for submit_tx, `error` otherwise).',
    `Close codes: ${CLOSE_CODES.GOING_AWAY} node shutting down, ${CLOSE_CODES.MESSAGE_TOO_BIG} message too big, ${CLOSE_CODES.SLOW_CONSUMER} slow consumer (reconnect and refetch),`,
    `${CLOSE_CODES.IDLE} idle (no subscription, no message for ${limits.idleMs} ms), ${CLOSE_CODES.RATE_LIMITED} rate limit exceeded repeatedly. Pings every ${limits.heartbeatMs} ms; a socket that misses one is cut.`
  ].join('\n')
}

export function realtimeRoutes (gateway: RealtimeGateway, limits: RealtimeLimits): AnyRoute[] {
  return [
    route({
      method: 'get',
      path: '/api/ws',
      tag: 'realtime',
      summary: 'WebSocket: push events, subscriptions, submit_tx',
      description: wsDescription(limits),
      responses: {
        101: { description: 'Switching Protocols: the WebSocket is open' },
        401: { description: 'fully private mode without `?token=`', schema: ErrorSchema },
        426: { description: 'a plain GET without the upgrade', schema: ErrorSchema },
        429: { description: 'too many connections or requests from this address (Retry-After)', schema: ErrorSchema },
        503: { description: 'connection cap reached, or the node is shutting down', schema: ErrorSchema }
      },
      handler: ({ ctx }) => {
        ctx.set('Upgrade', 'websocket')
        ctx.status = 426
        ctx.body = { error: 'this is a WebSocket endpoint: send a GET with `Upgrade: websocket`' }
        ctx.set(ERROR_CODE_HEADER, 'BAD_REQUEST')
      }
    }),
    route({
      method: 'get',
      path: '/api/events',
      tag: 'realtime',
      summary: 'Server-sent events (legacy): the WebSocket\'s push events, one way',
      description: [
        'A `text/event-stream` of the events named as on the WebSocket: `block` (its `id:` is the height), `tx`, `inbox`; data is the same JSON (WsBlockEvent, WsTxEvent, WsInboxEvent).',
        'Reconnecting with `Last-Event-ID` (a height) first replays the blocks after it (at most the last ' + String(limits.sseBlockReplay) + '), then goes on live without repeats.',
        `A comment line keeps the stream alive every ${limits.sseKeepAliveMs} ms. Same token rules as every read (fully private mode: bearer header or \`?token=\`).`,
        'A mailbox topic is refused (401) when the node runs with SVC_RELAY_READ_AUTH: use the WebSocket with `auth`. A reader that falls behind by more than the send queue is cut; it resumes with Last-Event-ID.'
      ].join('\n'),
      query: EventsQuery,
      responses: {
        200: { description: 'the event stream', contentType: 'text/event-stream', schema: z.string() },
        400: { description: 'unknown topic or bad Last-Event-ID', schema: ErrorSchema },
        401: { description: 'token required, or a mailbox under SVC_RELAY_READ_AUTH', schema: ErrorSchema },
        429: { description: 'too many connections or requests from this address (Retry-After)', schema: ErrorSchema }
      },
      handler: ({ ctx, query }) => {
        if (ctx.get('upgrade').toLowerCase() === 'websocket') throw new KithError('BAD_REQUEST', 'the WebSocket is at /api/ws')
        gateway.openEventStream(ctx.req, ctx.res, query)
        ctx.respond = false
      }
    })
  ]
}
