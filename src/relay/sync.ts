/**
 * Mailbox anti-entropy over any request-response transport (docs/relay.md). A round pulls:
 * digests of the peer's hour buckets -> the buckets that differ -> their id listings -> the
 * envelopes and delete proofs this node lacks. Each node runs its own rounds, so two nodes
 * converge once each has pulled from the other.
 */
import { z } from 'zod'
import { KithError } from '../errors/index.js'
import { parseOrThrow, safeParse } from '../validation/index.js'
import { MAX_ENVELOPES_PER_REQUEST, type RelayService } from './service.js'

const Bucket = z.number().int().min(0)
const Id = z.string().max(64)

export const RelaySyncRequestSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('relay_digests'), from: Bucket, to: Bucket }),
  z.object({ type: z.literal('relay_ids'), bucket: Bucket, after: Id.optional() }),
  z.object({ type: z.literal('relay_fetch'), ids: z.array(Id).max(MAX_ENVELOPES_PER_REQUEST) })
])
export type RelaySyncRequest = z.output<typeof RelaySyncRequestSchema>

const DigestsResponse = z.object({
  digests: z.array(z.object({ bucket: Bucket, live: z.number().int(), live_xor: z.string(), deleted: z.number().int(), deleted_xor: z.string() })).max(10_000)
})
const IdsResponse = z.object({ bucket: Bucket, live: z.array(Id).max(5000), deleted: z.array(Id).max(5000), next: Id.optional() })
const FetchResponse = z.object({ envelopes: z.array(z.unknown()).max(MAX_ENVELOPES_PER_REQUEST), deletions: z.array(z.unknown()).max(MAX_ENVELOPES_PER_REQUEST) })

/** The responder: answers one request from a peer. Throws BAD_REQUEST for a malformed one. */
export function answerSyncRequest (service: RelayService, request: unknown): unknown {
  const req = parseOrThrow(RelaySyncRequestSchema, request, 'BAD_REQUEST', 'relay sync request')
  switch (req.type) {
    case 'relay_digests': return { digests: service.digests(req.from, req.to) }
    case 'relay_ids': return service.idsInBucket(req.bucket, { after: req.after })
    case 'relay_fetch': return service.envelopes(req.ids)
  }
}

export interface SyncRoundResult {
  /** buckets whose digests differed */
  buckets: number
  /** envelopes and delete proofs stored */
  stored: number
  /** envelopes or proofs the peer sent that failed their checks (a misbehaving peer) */
  rejected: number
}

/**
 * One pull round from a peer. `ask` sends a request and resolves with the peer's answer (parsed
 * JSON). Stops after `maxItems` fetched items (default 2,000) so one round stays bounded; the
 * next round continues. Throws when the peer answers something malformed.
 */
export async function pullFromPeer (service: RelayService, ask: (req: RelaySyncRequest) => Promise<unknown>, opts: { maxItems?: number } = {}): Promise<SyncRoundResult> {
  const maxItems = opts.maxItems ?? 2000
  const range = service.liveBuckets()
  const { digests } = parsePeer(DigestsResponse, await ask({ type: 'relay_digests', from: range.from, to: range.to }))
  const buckets = service.missingFrom(digests)
  const result: SyncRoundResult = { buckets: buckets.length, stored: 0, rejected: 0 }
  let fetched = 0
  for (const bucket of buckets) {
    let after: string | undefined
    do {
      const listing = parsePeer(IdsResponse, await ask({ type: 'relay_ids', bucket, ...(after !== undefined ? { after } : {}) }))
      const want = service.wanted(listing)
      for (let i = 0; i < want.length && fetched < maxItems; i += MAX_ENVELOPES_PER_REQUEST) {
        const ids = want.slice(i, Math.min(i + MAX_ENVELOPES_PER_REQUEST, i + maxItems - fetched))
        const answer = parsePeer(FetchResponse, await ask({ type: 'relay_fetch', ids }))
        fetched += ids.length
        for (const envelope of answer.envelopes) count(result, await service.accept(envelope))
        for (const proof of answer.deletions) count(result, await service.acceptDeletion(proof))
      }
      if (fetched >= maxItems) return result
      after = listing.next !== undefined && listing.next !== after ? listing.next : undefined
    } while (after !== undefined)
  }
  return result
}

function count (result: SyncRoundResult, outcome: { result: string }): void {
  if (outcome.result === 'accepted') result.stored++
  else if (outcome.result === 'rejected') result.rejected++
}

function parsePeer<T extends z.ZodType> (schema: T, value: unknown): z.output<T> {
  const parsed = safeParse(schema, value)
  if (!parsed.success) throw new KithError('BAD_REQUEST', `malformed relay sync answer from peer: ${parsed.error.issues[0]?.message ?? 'invalid'}`)
  return parsed.data
}
