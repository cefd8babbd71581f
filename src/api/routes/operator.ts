/** What an operator (and a client) learns about the node itself: its limits and whether a newer release exists. */
import type { FeedService } from '../../feed/index.js'
import type { EnvSettings, ChainView } from '../../node/index.js'
import type { RelayService } from '../../relay/index.js'
import { BUILD, NODE_VERSION, UPDATE_CHECK_CACHE_MS, UpdateCheckSchema, UpdateChecker } from '../../release/index.js'
import { LimitsSchema, nodeLimits } from '../limits.js'
import { route, type AnyRoute } from '../route.js'
import { ErrorSchema } from '../schemas.js'

export interface OperatorRouteOptions {
  node: ChainView
  env: EnvSettings
  relay?: { service: RelayService, rateLimitPerSender: number }
  feed?: FeedService
}

export function operatorRoutes (opts: OperatorRouteOptions): AnyRoute[] {
  const updates = new UpdateChecker({ sourceUrl: opts.env.updateSourceUrl, timeoutMs: opts.env.updateTimeoutMs, currentVersion: NODE_VERSION, build: BUILD })
  return [
    route({
      method: 'get',
      path: '/api/limits',
      tag: 'discovery',
      summary: 'Every limit this node enforces: body and page caps, rate limits, fees, post size, mailbox, block and mempool bounds',
      responses: { 200: { description: 'limits; sizes in bytes, times in seconds, amounts in µT', schema: LimitsSchema } },
      handler: () => nodeLimits({ env: opts.env, chainParams: opts.node.genesis.params, state: opts.node.state, mempool: opts.node.mempoolBounds, relay: opts.relay, feed: opts.feed })
    }),
    route({
      method: 'get',
      path: '/api/update-check',
      tag: 'discovery',
      summary: `Compares this node with the newest release of SVC_UPDATE_SOURCE_URL (cached ${UPDATE_CHECK_CACHE_MS / 1000} s); never updates the node`,
      responses: {
        200: { description: 'this build and the newest release', schema: UpdateCheckSchema },
        502: { description: 'the release source failed, timed out (SVC_UPDATE_TIMEOUT_MS) or answered something that is not a release feed', schema: ErrorSchema },
        503: { description: 'no release source is configured', schema: ErrorSchema }
      },
      handler: async () => await updates.check()
    })
  ]
}
