/**
 * The Koa adapter: exposes the node's local view over HTTP. Middleware order: HTTP metrics,
 * request id, error mapper, private-mode token, per-IP rate limit, body cap, routes. Handlers hold no business logic.
 *
 * Every layer costs every request a dispatch and a promise, so the stack holds only layers that
 * can act: optional middleware is mounted only when enabled, and routes with a fixed path are
 * found by one map lookup before the router, whose matching tests every route's pattern in turn.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import Koa, { type Context } from 'koa'
import Router from '@koa/router'
import type { Logger } from 'pino'
import type { EnvSettings, ChainView } from '../node/index.js'
import { answerClientError, answerFailed, errorAnswer, errorMiddleware } from './errors.js'
import { privateMode, rateLimit, RateLimiter, tokenMatches, type AccessOptions } from './middleware.js'
import { coreCalls, type CoreCalls } from './edge/core-calls.js'
import { EDGE_CLIENT_IP_HEADER, EDGE_SECRET_HEADER } from './edge/protocol.js'
import { secretsEqual } from '../crypto/index.js'
import { openApiDocument } from './openapi.js'
import { requestId } from './request-id.js'
import { closeGracefully, httpMetrics, routeBodies, routeHandler, routeTemplates, slowClientTimeouts } from './serving.js'
import { koaPath, route, type AnyRoute } from './route.js'
import { chainRoutes } from './routes/chain.js'
import { contractRoutes } from './routes/contracts.js'
import { identityRoutes } from './routes/identity.js'
import { onboardingRoutes, type OnboardingOptions } from './routes/onboarding.js'
import { operatorRoutes } from './routes/operator.js'
import { relayBroadcaster, relayRoutes } from './routes/relay.js'
import { clientAddressKey, type RelayService } from '../relay/index.js'
import type { FeedService } from '../feed/index.js'
import { feedRoutes } from './routes/feed.js'
import { swaggerRoutes } from './swagger.js'
import { explorerRoutes, type ExplorerSite } from './routes/explorer.js'
import type { NodeMetrics } from '../metrics/index.js'
import { realtimeRoutes } from './routes/realtime.js'
import { REALTIME_SCHEMAS, RealtimeGateway, type RealtimeLimits } from '../realtime/index.js'
import { NODE_VERSION, PROTOCOL_VERSION } from '../release/index.js'

export interface ApiOptions {
  node: ChainView
  nodeId: string
  env: EnvSettings
  logger: Logger
  onboarding?: OnboardingOptions
  relay?: { service: RelayService, rateLimitPerSender: number }
  feed?: FeedService
  metrics?: NodeMetrics
  /** the WebSocket gateway and SSE stream, with their caps (readRealtimeEnv); absent: neither is served */
  realtime?: RealtimeLimits
  /** the block explorer at `/` (src/explorer); absent, or with SVC_DISABLE_EXPLORER, it is not served */
  explorer?: ExplorerSite
  /**
   * Set when HTTP edge threads (src/api/edge) hold the public listener: this server then listens
   * privately for them, serves only requests that carry `secret`, and takes the client's address
   * from the header the edge sets.
   */
  edge?: { secret: string }
}

export interface ApiServer {
  server: Server
  /** present when `realtime` was given */
  gateway: RealtimeGateway | undefined
  listen (host: string | undefined, port: number): Promise<AddressInfo>
  /** closes the WebSockets (1001) and event streams; stop does it too. Before the edges stop, so the close frames pass through them */
  closeStreams (): Promise<void>
  /** what edge threads (src/api/edge) may call on this node, and the serving of one call */
  edgeCalls: CoreCalls
  stop (): Promise<void>
}

export function createApi (opts: ApiOptions): ApiServer {
  const log = opts.logger.child({ module: 'api' })
  const access: AccessOptions = { token: opts.env.apiToken, private: opts.env.apiPrivate }
  // one per node: the core's route and the edges' calls draw on the same per-sender buckets
  const broadcaster = opts.relay !== undefined ? relayBroadcaster(opts.relay.service, { rateLimitPerSender: opts.relay.rateLimitPerSender }) : undefined
  const routes: AnyRoute[] = [
    ...chainRoutes(opts.node, opts.nodeId),
    ...identityRoutes(opts.node.state),
    ...contractRoutes(opts.node.state),
    ...onboardingRoutes(opts.node, opts.onboarding ?? { faucet: undefined, amountUt: 0, perIpIntervalMs: 0, perKeyIntervalMs: 0, now: Date.now }),
    ...(opts.relay !== undefined && broadcaster !== undefined ? relayRoutes(opts.relay.service, { rateLimitPerSender: opts.relay.rateLimitPerSender }, broadcaster) : []),
    ...(opts.feed !== undefined ? feedRoutes(opts.feed) : []),
    ...operatorRoutes(opts)
  ]
  if (opts.metrics !== undefined) routes.push(metricsRoute(opts.metrics))
  // one bucket per client IP for HTTP requests, SSE opens, WebSocket upgrades and WebSocket messages
  const addressLimiter = opts.env.rateLimitRps > 0 ? new RateLimiter(opts.env.rateLimitRps, Date.now, clientAddressKey) : undefined
  const fromEdge = opts.edge !== undefined ? edgeCheck(opts.edge.secret) : undefined
  const gateway = opts.realtime !== undefined ? realtimeGateway(opts, opts.realtime, access, addressLimiter, fromEdge, log) : undefined
  if (gateway !== undefined && opts.realtime !== undefined) routes.push(...realtimeRoutes(gateway, opts.realtime))
  if (!opts.env.disableSwagger) {
    let doc: object | undefined
    routes.push(...swaggerRoutes(() => (doc ??= openApiDocument(routes, REALTIME_SCHEMAS))))
  }
  if (opts.explorer !== undefined && !opts.env.disableExplorer) routes.push(...explorerRoutes(opts.explorer))

  // behind the edge, Koa's ctx.ip is the address the edge forwarded (and only requests that carry the secret get here)
  const app = fromEdge !== undefined ? new Koa({ proxy: true, proxyIpHeader: EDGE_CLIENT_IP_HEADER, maxIpsCount: 1 }) : new Koa({ proxy: false })
  app.on('error', answerFailed(log))
  const router = new Router()
  // outermost, so it sees the status every other layer (the error mapper included) settled on
  if (opts.metrics !== undefined) app.use(httpMetrics(opts.metrics, routeTemplates(router, routes)))
  // before the error mapper, so its log lines carry the id
  app.use(requestId())
  app.use(errorMiddleware(log))
  if (access.private && access.token !== undefined) app.use(privateMode(access))
  if (addressLimiter !== undefined) app.use(rateLimit(addressLimiter))
  app.use(routeBodies(opts.env, routes))
  const fixed = new Map<string, (ctx: Context) => Promise<void> | undefined>()
  for (const r of routes) {
    const handle = routeHandler(r, access)
    router[r.method](koaPath(r.path), handle)
    if (!r.path.includes('{')) fixed.set(`${r.method.toUpperCase()} ${r.path}`, handle)
  }
  // HEAD, other methods on these paths (405) and paths with parameters go on to the router
  app.use((ctx, next) => (fixed.get(`${ctx.method} ${ctx.path}`) ?? next)(ctx))
  app.use(router.routes())
  app.use(router.allowedMethods())

  const callback = app.callback()
  const server = createServer(slowClientTimeouts(opts.env), fromEdge === undefined
    ? callback
    : (req, res) => { if (fromEdge(req) !== undefined) void callback(req, res); else refuseStranger(res) })
  // the edges hold their connections to this listener open for as long as they run
  server.keepAliveTimeout = fromEdge !== undefined ? EDGE_KEEP_ALIVE_MS : opts.env.keepAliveTimeoutMs
  server.on('clientError', answerClientError)
  gateway?.attach(server)
  let streamsClosed: Promise<void> | undefined
  const closeStreams = async (): Promise<void> => { await (streamsClosed ??= gateway?.stop() ?? Promise.resolve()) }
  return {
    server,
    gateway,
    async listen (host, port) {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(port, host, () => { server.off('error', reject); resolve() })
      })
      // once listening, an 'error' is a failed accept (EMFILE when a flood of connections has taken
      // every descriptor): that connection is lost, the server goes on; unheard, it would end the process
      server.on('error', (err: NodeJS.ErrnoException) => log.warn({ code: err.code }, 'accepting a connection failed'))
      return server.address() as AddressInfo
    },
    edgeCalls: coreCalls({ node: opts.node, broadcaster, feed: opts.feed, addressLimiter }),
    closeStreams,
    async stop () {
      // WebSockets and event streams first: they never end by themselves, and server.close() waits for them
      await closeStreams()
      await closeGracefully(server)
    }
  }
}

/** Longer than any pause between an edge's requests, so the core never closes a connection an edge is about to reuse. */
const EDGE_KEEP_ALIVE_MS = 600_000

/** The client address an edge forwarded with the right secret; undefined for any other request. */
function edgeCheck (secret: string): (req: IncomingMessage) => string | undefined {
  return (req) => {
    const given = req.headers[EDGE_SECRET_HEADER]
    if (typeof given !== 'string' || !secretsEqual(given, secret)) return undefined
    const ip = req.headers[EDGE_CLIENT_IP_HEADER]
    return typeof ip === 'string' ? ip : ''
  }
}

function refuseStranger (res: ServerResponse): void {
  res.writeHead(403, { 'Content-Type': 'application/json; charset=utf-8', Connection: 'close' })
  res.end(JSON.stringify({ error: 'this listener serves the node\'s HTTP edge threads only' }))
}

/** The gateway over this node and mailbox: submit_tx takes the POST /api/tx path, failures the same error map. */
function realtimeGateway (
  opts: ApiOptions, limits: RealtimeLimits, access: AccessOptions, addressLimiter: RateLimiter | undefined, fromEdge: ((req: IncomingMessage) => string | undefined) | undefined, log: Logger
): RealtimeGateway {
  const { node } = opts
  const relay = opts.relay?.service
  return new RealtimeGateway({
    chain: { events: node.events, height: () => node.head().height, blockSummary: (h) => node.blockSummary(h) },
    ...(relay !== undefined
      ? {
          mailbox: {
            events: relay,
            requireReadAuth: relay.requireReadAuth,
            ownsMailbox: (ed25519, x25519) => relay.ownsMailbox(ed25519, x25519),
            page: (pub, from) => relay.inboxEvents(pub, from)
          }
        }
      : {}),
    submit: async (tx) => await node.submitTx(tx),
    describeError: (err) => errorAnswer(err, log, { op: 'websocket' }),
    limiter: new RateLimiter(limits.messagesPerSecond),
    addressLimiter,
    access: { private: access.private && access.token !== undefined, writesNeedToken: access.token !== undefined, tokenMatches: (given) => tokenMatches(given, access) },
    limits,
    ...(fromEdge !== undefined ? { clientIp: fromEdge } : {}),
    protocolVersion: PROTOCOL_VERSION,
    nodeVersion: NODE_VERSION,
    logger: opts.logger
  })
}

function metricsRoute (metrics: NodeMetrics): AnyRoute {
  return route({
    method: 'get',
    path: '/metrics',
    tag: 'meta',
    summary: 'Prometheus metrics (text exposition format)',
    responses: { 200: { description: 'chain, consensus, mempool, peers, HTTP, mailbox, feed, libp2p and process figures', contentType: 'text/plain' } },
    handler: async ({ ctx }) => {
      const { contentType, text } = await metrics.exposition()
      ctx.type = contentType
      ctx.body = text
    }
  })
}

