/** The relay mailbox under /relay (at the root, not /api): docs/relay.md. */
import { z } from 'zod'
import { KithError } from '../../errors.js'
import {
  EnvelopeUploadSchema, InboxItemSchema, MAX_CIPHERTEXT_BYTES, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE, OwnerProofSchema, RelaySendSchema,
  type Envelope, type RelayService
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

const OwnerQuery = {
  ed25519_pub: z.string().optional().meta({ description: 'signed reads only: Ed25519 pubkey linked to `pub`' }),
  ts: z.string().optional().meta({ description: 'signed reads only: unix s, within ±5 minutes' }),
  sig: z.string().optional().meta({ description: 'signed reads only: base64 Ed25519 signature over `inbox-read:<pub>:<ts>`' })
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
export const DeleteResponseSchema = z.object({ id: z.string(), status: z.literal('deleted') }).meta({ id: 'RelayDeleteResponse' })

function ownerFields (source: Record<string, unknown>): Record<string, unknown> | undefined {
  const { ed25519_pub: ed25519Pub, ts, sig } = source
  if (ed25519Pub === undefined && ts === undefined && sig === undefined) return undefined
  return { ed25519_pub: ed25519Pub, ts, sig }
}

const readErrors = {
  400: { description: 'malformed query; with signed reads, a ts more than 5 minutes off (mentions `timestamp`)', schema: ErrorSchema },
  401: { description: 'signed reads are required and the request carries none', schema: ErrorSchema },
  403: { description: 'signed reads: bad signature, or the key is not linked to the mailbox', schema: ErrorSchema },
  503: { description: 'signed reads are required and the node has no identity resolver', schema: ErrorSchema }
}

export function relayRoutes (service: RelayService, opts: RelayRouteOptions): AnyRoute[] {
  const perSender = new RateLimiter(opts.rateLimitPerSender, opts.now)
  const admit = (envelope: Envelope): void => {
    if (!perSender.take(envelope.sender_pub)) throw new KithError('RATE_LIMITED', `too many envelopes from sender ${envelope.sender_pub}; slow down`)
  }
  return [
    route({
      method: 'post',
      path: '/relay/broadcast',
      tag: 'relay',
      summary: 'Store an end-to-end encrypted envelope in the recipient\'s mailbox and gossip it',
      body: BroadcastRequestSchema,
      responses: {
        200: { description: 'stored durably (or already stored): the canonical id', schema: BroadcastResponseSchema },
        400: { description: 'malformed envelope; the message names the field', schema: ErrorSchema },
        413: { description: `ciphertext larger than ${MAX_CIPHERTEXT_BYTES} bytes, or body over the node's cap`, schema: ErrorSchema },
        429: { description: 'too many envelopes from this sender_pub (Retry-After), or the mailbox or this sender\'s share of it is full', schema: ErrorSchema }
      },
      handler: ({ body, ctx }) => {
        // parsed at the edge, so the service's check of an already canonical envelope is the quick one (plainUpload)
        // the busiest write route: its answer (a hex id and a status) is ASCII, written without Koa's JSON body handling
        return service.broadcast(body.envelope, { admit }).then((answer) => { sendAsciiJson(ctx, JSON.stringify(answer)) })
      }
    }),
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
        429: { description: 'the mailbox is full', schema: ErrorSchema }
      },
      handler: async ({ body }) => await service.send(body)
    }),
    route({
      method: 'get',
      path: '/relay/inbox',
      tag: 'relay',
      summary: 'Envelopes of a mailbox, oldest first, from `since`',
      query: InboxQuerySchema,
      responses: { 200: { description: 'a page of the inbox', schema: InboxResponseSchema }, ...readErrors },
      handler: ({ query, ctx }) => {
        // the stored items are already the served JSON: concatenated, not re-encoded
        sendAsciiJson(ctx, service.inboxBody(query.pub, { since: query.since, after: query.after, limit: query.limit }, ownerFields(query)))
      }
    }),
    route({
      method: 'get',
      path: '/relay/inbox/count',
      tag: 'relay',
      summary: 'Number of envelopes in a mailbox',
      query: CountQuerySchema,
      responses: { 200: { description: 'count', schema: InboxCountSchema }, ...readErrors },
      handler: ({ query }) => service.count(query.pub, ownerFields(query))
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
