/**
 * The core's side of an edge's calls: each checked against the per-IP bucket the core's own
 * middleware uses (so a client's requests draw on one bucket whichever edge or listener they
 * reach), then served as the route's handler would serve it on one thread.
 */
import { fromTransfer, type FeedService, type HeldPublish } from '../../feed/index.js'
import { KithError } from '../../errors/index.js'
import type { ChainView } from '../../node/index.js'
import { clientAddressKey } from '../../relay/index.js'
import type { RateLimiter } from '../middleware.js'
import type { Broadcaster } from '../routes/relay.js'
import type { EdgeCall, EdgeCallKind, HeldOnEdge, PublishWire } from './protocol.js'

export interface CoreCallDeps {
  node: Pick<ChainView, 'submitParsedTx'>
  broadcaster: Broadcaster | undefined
  feed: Pick<FeedService, 'publishHeld'> | undefined
  addressLimiter: RateLimiter | undefined
}

export interface CoreCalls {
  /** the calls this core serves */
  kinds: EdgeCallKind[]
  /** `edge`: the edge that made the call, which holds a publish's attachment */
  serve (call: EdgeCall, ip: string, edge: HeldOnEdge): Promise<unknown>
  /**
   * A committed read an edge answered for `ip`, drawn on the same bucket after the fact; the
   * seconds until the bucket takes it again when it is empty now (the edges then refuse it).
   */
  debitRead (ip: string): number | undefined
}

export function coreCalls ({ node, broadcaster, feed, addressLimiter }: CoreCallDeps): CoreCalls {
  const kinds: EdgeCallKind[] = ['submit-tx']
  if (broadcaster !== undefined) kinds.push('broadcast')
  if (feed !== undefined) kinds.push('publish')
  const dispatch = async (call: EdgeCall, ip: string, edge: HeldOnEdge): Promise<unknown> => {
    switch (call.kind) {
      case 'submit-tx': return await node.submitParsedTx(call.tx, call.signatureValid)
      case 'broadcast': if (broadcaster !== undefined) return await broadcaster(call.envelope, ip); break
      case 'publish': if (feed !== undefined) return await feed.publishHeld(heldOn(edge, call.decoded), clientAddressKey(ip)); break
    }
    throw new KithError('NOT_FOUND', `this node does not serve ${call.kind}`)
  }
  return {
    kinds,
    debitRead (ip) {
      const rate = addressLimiter?.admit(ip)
      return rate !== undefined && !rate.allowed ? rate.retryAfterSeconds : undefined
    },
    async serve (call, ip, edge) {
      const rate = addressLimiter?.admit(ip)
      if (rate !== undefined && !rate.allowed) throw new KithError('RATE_LIMITED', 'too many requests from this address; slow down', { retryAfterSeconds: rate.retryAfterSeconds })
      return await dispatch(call, ip, edge)
    }
  }
}

/** A publish from an edge, its attachment scrubbed by that edge when the feed asks. */
function heldOn (edge: HeldOnEdge, { content, attachment, ...rest }: PublishWire): HeldPublish {
  return {
    ...rest,
    content: fromTransfer(content),
    attachment: attachment === undefined
      ? undefined
      : {
          mime: attachment.mime,
          size: attachment.size,
          scrub: async () => {
            const scrubbed = await edge.scrub(attachment.hold)
            return { bytes: fromTransfer(scrubbed.bytes), mime: scrubbed.mime }
          }
        }
  }
}
