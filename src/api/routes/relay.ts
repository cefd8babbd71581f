/** The relay mailbox under /relay (at the root, not /api): docs/relay.md. */
import type { Context } from 'koa'
import { z } from 'zod'
import { KithError } from '../../errors/index.js'
import {
  EnvelopeUploadSchema, InboxItemSchema, MAX_CIPHERTEXT_BYTES, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE, OwnerProofSchema, RelaySendSchema, plainEnvelopeUpload,
  INBOX_AUTH_HEADER, MAX_READ_NONCES_PER_CLIENT, MAX_READ_NONCES_PER_MAILBOX, READ_NONCE_TTL_MS,
  type Envelope, type ReadAuth, type RelayService
} from '../../relay/index.js'
import { RateLimiter } from '../middleware.js'
import { route, sendAsciiJson, type AnyRoute } from '../route.js'
import { ErrorSchema } from '../schemas.js'

export interface RelayRouteOptions {
  /** envelopes per second per sender_pub on /relay/broadcast, bursts of twice that; 0 turns it off */
  rateLimitPerSender: number
  /** clock of the rate limiter (tests) */
  now?: () => number
}

const Hex64 = z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be a 64-character hex X25519 public key')

/** The query-parameter proof of earlier versions: declared only to answer it with a pointer to the header. */
const OwnerQuery = {
  ed25519_pub: z.string().optional().meta({ description: `refused: signed reads use the ${INBOX_AUTH_HEADER} header`, deprecated: true }),
  ts: z.string().optional().meta({ description: `refused: signed reads use the ${INBOX_AUTH_HEADER} header`, deprecated: true }),
  sig: z.string().optional().meta({ description: `refused: signed reads use the ${INBOX_AUTH_HEADER} header`, deprecated: true })
}

const InboxQuerySchema = z.object({
  pub: Hex64.meta({ description: 'the mailbox: recipient X25519 pubkey, hex' }),
  since: z.coerce.number().int().min(0).optional().meta({ description: 'unix s: envelopes with sent_at >= since (default 0)' }),
  after: z.string().regex(/^[0-9a-fA-F]{32}$/, 'must be an envelope id').optional()
    .meta({ description: 'with `since`: only envelopes after (since, after) in (sent_at, id) order; pass the last item\'s sent_at and id to page without repeats' }),
  limit: z.coerce.number().int().min(1).optional().meta({ description: `page size, default ${DEFAULT_PAGE_SIZE}; larger values are lowered to ${MAX_PAGE_SIZE}` }),
  ...OwnerQuery
})

const CountQuerySchema = z.object({ pub: Hex64.meta({ description: 'the mailbox: recipient X25519 pubkey, hex' }), ...OwnerQuery })

const DeleteQuerySchema = z.object({
  pub: Hex64.meta({ description: 'the mailbox the envelope is in' }),
  ed25519_pub: z.string().optional().meta({ description: 'only when the request has no body' }),
  ts: z.string().optional().meta({ description: 'only when the request has no body' }),
  sig: z.string().optional().meta({ description: 'only when the request has no body' })
})

export const BroadcastRequestSchema = z.object({ envelope: EnvelopeUploadSchema }).meta({ id: 'RelayBroadcastRequest' })
export const BroadcastResponseSchema = z.object({ id: z.string().meta({ description: 'canonical id' }), status: z.literal('broadcast') }).meta({ id: 'RelayBroadcastResponse' })
export const SendResponseSchema = z.object({ id: z.string(), recipient_pub: z.string(), status: z.literal('sent') }).meta({ id: 'RelaySendResponse' })
export const InboxResponseSchema = z.object({
  pub: z.string(),
  count: z.number().int().meta({ description: 'number of items in this page' }),
  has_more: z.boolean().meta({ description: 'more envelopes follow the last item' }),
  items: z.array(InboxItemSchema).meta({ description: 'oldest first by (sent_at, id)' })
}).meta({ id: 'Inbox' })
export const InboxCountSchema = z.object({ pub: z.string(), count: z.number().int().meta({ description: 'live envelopes in the mailbox' }) }).meta({ id: 'InboxCount' })
export const ReadNonceRequestSchema = z.object({ pub: Hex64.meta({ description: 'the mailbox to read: recipient X25519 pubkey, hex' }) }).meta({ id: 'RelayReadNonceRequest' })
export const ReadNonceResponseSchema = z.object({
  pub: z.string().meta({ description: 'the mailbox, lower case, as the signed text names it' }),
  nonce: z.string().meta({ description: '32 hex characters; proves one read, then is spent' }),
  node: z.string().meta({ description: 'this node\'s id in the signed text' }),
  expires_at: z.number().int().meta({ description: `unix s; a nonce not used within ${READ_NONCE_TTL_MS / 1000} s is forgotten` }),
  required: z.boolean().meta({ description: 'whether this node requires signed reads (SVC_RELAY_READ_AUTH); false: the nonce is not kept, and reads need no proof' })
}).meta({ id: 'RelayReadNonce' })
export const DeleteResponseSchema = z.object({ id: z.string(), status: z.literal('deleted') }).meta({ id: 'RelayDeleteResponse' })

function ownerFields (source: Record<string, unknown>): Record<string, unknown> | undefined {
  const { ed25519_pub: ed25519Pub, ts, sig } = source
  if (ed25519Pub === undefined && ts === undefined && sig === undefined) return undefined
  return { ed25519_pub: ed25519Pub, ts, sig }
}

const readErrors = {
  400: { description: `malformed query, or a malformed ${INBOX_AUTH_HEADER} header`, schema: ErrorSchema },
  401: { description: `signed reads are required and the request carries no ${INBOX_AUTH_HEADER} header (or the refused query proof), or its nonce is unknown, expired or already used`, schema: ErrorSchema },
  403: { description: 'signed reads: the nonce was issued for another mailbox, the signature does not verify over this node, endpoint, mailbox and nonce, or the key is not linked to the mailbox', schema: ErrorSchema },
  503: { description: 'signed reads are required and the node has no identity resolver', schema: ErrorSchema }
}

/** How a signed read is made: the read routes' OpenAPI description. */
function signedReadDescription (endpoint: string): string {
  return `On a node with SVC_RELAY_READ_AUTH=true the read must be signed: get a nonce with POST /relay/inbox/nonce, then send the header \`${INBOX_AUTH_HEADER}: ed25519_pub=<hex>, nonce=<nonce>, sig=<base64>\`, ` +
    `\`sig\` being the Ed25519 signature over \`inbox-read:<node>:${endpoint}:<pub>:<nonce>\` (\`node\` and \`pub\` as the nonce answer gives them) by a key that owns the mailbox. ` +
    'Each nonce proves one read. Other nodes ignore the header.'
}

function readAuth (ctx: Context, query: Record<string, unknown>): ReadAuth {
  return { header: ctx.get(INBOX_AUTH_HEADER) || undefined, legacyQuery: ownerFields(query) !== undefined }
}

export type BroadcastAnswer = z.output<typeof BroadcastResponseSchema>
/** an envelope as POST /relay/broadcast's schema leaves it */
export type EnvelopeUpload = z.output<typeof EnvelopeUploadSchema>
export type Broadcaster = (envelope: EnvelopeUpload, clientIp: string) => Promise<BroadcastAnswer>

/**
 * What POST /relay/broadcast does once the body is parsed: the per-sender bucket, then the
 * service (whose check of an envelope the schema already made canonical is the quick one).
 */
export function relayBroadcaster (service: RelayService, opts: RelayRouteOptions): Broadcaster {
  const perSender = new RateLimiter(opts.rateLimitPerSender, opts.now)
  const admit = (envelope: Envelope): void => {
    if (!perSender.take(envelope.sender_pub)) throw new KithError('RATE_LIMITED', `too many envelopes from sender ${envelope.sender_pub}; slow down`)
  }
  return async (envelope, clientIp) => await service.broadcast(envelope, { admit, clientIp })
}

/** A broadcast body by hand (plainEnvelopeUpload): what BroadcastRequestSchema gives for an envelope already in stored form. */
export function plainBroadcastRequest (raw: unknown): { envelope: EnvelopeUpload } | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined
  const envelope = plainEnvelopeUpload((raw as { envelope?: unknown }).envelope)
  return envelope === undefined ? undefined : { envelope }
}

/** POST /relay/broadcast, declared once: the node serves it, and so does every HTTP edge thread (src/api/edge), with its own `broadcast`. */
export function broadcastRoute (broadcast: (envelope: EnvelopeUpload, ctx: Context) => Promise<BroadcastAnswer>): AnyRoute {
  return route({
    method: 'post',
    path: '/relay/broadcast',
    tag: 'relay',
    summary: 'Store an end-to-end encrypted envelope in the recipient\'s mailbox and gossip it',
    body: BroadcastRequestSchema,
    plainBody: plainBroadcastRequest,
    responses: {
      200: { description: 'stored durably (or already stored): the canonical id', schema: BroadcastResponseSchema },
      400: { description: 'malformed envelope; the message names the field', schema: ErrorSchema },
      413: { description: `ciphertext larger than ${MAX_CIPHERTEXT_BYTES} bytes, or body over the node's cap`, schema: ErrorSchema },
      429: { description: 'with Retry-After: too many envelopes from this sender_pub; from this client address into this mailbox, or stored by it there (RELAY_CLIENT_QUOTA); into this mailbox from everyone (RELAY_RECIPIENT_BUSY); or the mailbox or this sender\'s share of it is full. The message names the limit', schema: ErrorSchema }
    },
    handler: ({ body, ctx }) => {
      // the busiest write route: its answer (a hex id and a status) is ASCII, written without Koa's JSON body handling
      return broadcast(body.envelope, ctx).then((answer) => { sendAsciiJson(ctx, JSON.stringify(answer)) })
    }
  })
}

export function relayRoutes (service: RelayService, opts: RelayRouteOptions, broadcaster: Broadcaster = relayBroadcaster(service, opts)): AnyRoute[] {
  return [
    broadcastRoute(async (envelope, ctx) => await broadcaster(envelope, ctx.ip)),
    route({
      method: 'post',
      path: '/relay/send',
      tag: 'relay',
      summary: 'Legacy, NOT end-to-end: the node seals the plaintext to the recipient with its own key',
      body: RelaySendSchema,
      responses: {
        200: { description: 'sealed by the node, stored and gossiped; sender_pub of the envelope is the node\'s X25519 key', schema: SendResponseSchema },
        400: { description: 'malformed request', schema: ErrorSchema },
        413: { description: 'message too large', schema: ErrorSchema },
        429: { description: 'the mailbox is full, or an admission limit of broadcast (Retry-After)', schema: ErrorSchema }
      },
      handler: async ({ body, ctx }) => await service.send(body, { clientIp: ctx.ip })
    }),
    route({
      method: 'post',
      path: '/relay/inbox/nonce',
      tag: 'relay',
      summary: 'A single-use nonce for one signed inbox read',
      description: `Needed only on nodes with SVC_RELAY_READ_AUTH=true (\`required\` says so). A nonce is good for ${READ_NONCE_TTL_MS / 1000} s and one read; ` +
        `a mailbox has at most ${MAX_READ_NONCES_PER_MAILBOX} unused ones (a new one retires the oldest), a client address at most ${MAX_READ_NONCES_PER_CLIENT}.`,
      body: ReadNonceRequestSchema,
      responses: {
        200: { description: 'a fresh nonce, and what the signed text names', schema: ReadNonceResponseSchema },
        400: { description: 'malformed pub', schema: ErrorSchema },
        429: { description: `this client address holds ${MAX_READ_NONCES_PER_CLIENT} unused nonces (Retry-After)`, schema: ErrorSchema },
        503: { description: 'the node holds as many unused nonces as it keeps (Retry-After)', schema: ErrorSchema }
      },
      handler: ({ body, ctx }) => {
        return service.readNonce(body.pub, ctx.ip)
      }
    }),
    route({
      method: 'get',
      path: '/relay/inbox',
      tag: 'relay',
      summary: 'Envelopes of a mailbox, oldest first, from `since`',
      description: signedReadDescription('GET /relay/inbox'),
      query: InboxQuerySchema,
      responses: { 200: { description: 'a page of the inbox', schema: InboxResponseSchema }, ...readErrors },
      handler: ({ query, ctx }) => {
        // the stored items are already the served JSON: concatenated, not re-encoded
        sendAsciiJson(ctx, service.inboxBody(query.pub, { since: query.since, after: query.after, limit: query.limit }, readAuth(ctx, query)))
      }
    }),
    route({
      method: 'get',
      path: '/relay/inbox/count',
      tag: 'relay',
      summary: 'Number of envelopes in a mailbox',
      description: signedReadDescription('GET /relay/inbox/count'),
      query: CountQuerySchema,
      responses: { 200: { description: 'count', schema: InboxCountSchema }, ...readErrors },
      handler: ({ query, ctx }) => service.count(query.pub, readAuth(ctx, query))
    }),
    route({
      method: 'delete',
      path: '/relay/inbox/{envID}',
      tag: 'relay',
      summary: 'Delete an envelope, signed by an Ed25519 key linked to the mailbox',
      params: z.object({ envID: z.string().min(1).max(128).meta({ description: 'canonical envelope id' }) }),
      query: DeleteQuerySchema,
      body: OwnerProofSchema.optional(),
      responses: {
        200: { description: 'deleted (also when it already was)', schema: DeleteResponseSchema },
        400: { description: 'malformed request, or ts more than 5 minutes from the node clock (mentions `timestamp`)', schema: ErrorSchema },
        403: { description: 'bad signature, or the Ed25519 key is not linked to the mailbox', schema: ErrorSchema },
        404: { description: 'no such envelope in this mailbox', schema: ErrorSchema },
        503: { description: 'the node has no identity resolver (SVC_DISABLE_INBOX_DELETE)', schema: ErrorSchema }
      },
      handler: async ({ params, query, body }) => {
        const proof = body ?? ownerFields(query) ?? {}
        return await service.delete(params.envID, query.pub, proof)
      }
    })
  ]
}
