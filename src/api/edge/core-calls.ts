/**
 * The core's side of an edge's calls: each checked against the per-IP bucket the core's own
 * middleware uses (so a client's requests draw on one bucket whichever edge or listener they
 * reach), then served as the route's handler would serve it on one thread.
 */
import { decodedFromTransfer, type FeedService } from '../../feed/index.js'
import { KithError } from '../../errors/index.js'
import type { ChainView } from '../../node/index.js'
import { clientAddressKey } from '../../relay/index.js'
import type { RateLimiter } from '../middleware.js'
import type { Broadcaster } from '../routes/relay.js'
import type { EdgeCall, EdgeCallKind } from './protocol.js'

export interface CoreCallDeps {
  node: Pick<ChainView, 'submitParsedTx'>
  broadcaster: Broadcaster | undefined
  feed: Pick<FeedService, 'publishDecoded'> | undefined
  addressLimiter: RateLimiter | undefined
}

export interface CoreCalls {
  /** the calls this core serves */
  kinds: EdgeCallKind[]
  serve (call: EdgeCall, ip: string): Promise<unknown>
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
  const dispatch = async (call: EdgeCall, ip: string): Promise<unknown> => {
    switch (call.kind) {
      case 'submit-tx': return await node.submitParsedTx(call.tx, call.signatureValid)
      case 'broadcast': if (broadcaster !== undefined) return await broadcaster(call.envelope, ip); break
      case 'publish': if (feed !== undefined) return await feed.publishDecoded(decodedFromTransfer(call.decoded), clientAddressKey(ip)); break
    }
    throw new KithError('NOT_FOUND', `this node does not serve ${call.kind}`)
  }
  return {
    kinds,
    debitRead (ip) {
      const rate = addressLimiter?.admit(ip)
      return rate !== undefined && !rate.allowed ? rate.retryAfterSeconds : undefined
    },
    async serve (call, ip) {
      const rate = addressLimiter?.admit(ip)
      if (rate !== undefined && !rate.allowed) throw new KithError('RATE_LIMITED', 'too many requests from this address; slow down', { retryAfterSeconds: rate.retryAfterSeconds })
      return await dispatch(call, ip)
    }
  }
}
