/**
 * The Koa adapter: exposes the node's local view over HTTP. Middleware order: HTTP metrics,
 * request id, error mapper, private-mode token, per-IP rate limit, body cap, routes. Handlers hold no business logic.
 *
 * Every layer costs every request a dispatch and a promise, so the stack holds only layers that
 * can act: optional middleware is mounted only when enabled, and routes with a fixed path are
 * found by one map lookup before the router, whose matching tests every route's pattern in turn.
 */
import { createServer, type Server, type ServerOptions } from 'node:http'
import type { AddressInfo } from 'node:net'
import Koa, { type Context } from 'koa'
import Router from '@koa/router'
import type { Logger } from 'pino'
import type { EnvSettings, ChainView } from '../node/index.js'
import { KithError } from '../errors/index.js'
import { parseOrThrow } from '../validation/index.js'
import { answerClientError, answerFailed, errorAnswer, errorMiddleware } from './errors.js'
import { jsonBody, privateMode, rateLimit, RateLimiter, requireBearer, tokenMatches, type AccessOptions } from './middleware.js'
import { openApiDocument } from './openapi.js'
import { requestId } from './request-id.js'
import { koaPath, route, type AnyRoute } from './route.js'
import { chainRoutes } from './routes/chain.js'
import { contractRoutes } from './routes/contracts.js'
import { identityRoutes } from './routes/identity.js'
import { onboardingRoutes, type OnboardingOptions } from './routes/onboarding.js'
import { operatorRoutes } from './routes/operator.js'
import { relayRoutes } from './routes/relay.js'
import { clientAddressKey, type RelayService } from '../relay/index.js'
import type { FeedService } from '../feed/index.js'
import { feedRoutes } from './routes/feed.js'
import { swaggerRoutes } from './swagger.js'
import { explorerRoutes, type ExplorerSite } from './routes/explorer.js'
import type { NodeMetrics } from '../metrics/index.js'
import { realtimeRoutes } from './routes/realtime.js'
import { REALTIME_SCHEMAS, RealtimeGateway, type RealtimeLimits } from '../realtime/index.js'
import { NODE_VERSION, PROTOCOL_VERSION } from '../release/index.js'

/** How long in-flight requests get to finish when the node shuts down. */
const CLOSE_GRACE_MS = 3000

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
}

export interface ApiServer {
  server: Server
  /** present when `realtime` was given */
  gateway: RealtimeGateway | undefined
  listen (host: string | undefined, port: number): Promise<AddressInfo>
  stop (): Promise<void>
}

export function createApi (opts: ApiOptions): ApiServer {
  const log = opts.logger.child({ module: 'api' })
  const access: AccessOptions = { token: opts.env.apiToken, private: opts.env.apiPrivate }
  const routes: AnyRoute[] = [
    ...chainRoutes(opts.node, opts.nodeId),
    ...identityRoutes(opts.node.state),
    ...contractRoutes(opts.node.state),
    ...onboardingRoutes(opts.node, opts.onboarding ?? { faucet: undefined, amountUt: 0, perIpIntervalMs: 0, perKeyIntervalMs: 0, now: Date.now }),
    ...(opts.relay !== undefined ? relayRoutes(opts.relay.service, { rateLimitPerSender: opts.relay.rateLimitPerSender }) : []),
    ...(opts.feed !== undefined ? feedRoutes(opts.feed) : []),
    ...operatorRoutes(opts)
  ]
  if (opts.metrics !== undefined) routes.push(metricsRoute(opts.metrics))
  // one bucket per client IP for HTTP requests, SSE opens, WebSocket upgrades and WebSocket messages
  const addressLimiter = opts.env.rateLimitRps > 0 ? new RateLimiter(opts.env.rateLimitRps, Date.now, clientAddressKey) : undefined
  const gateway = opts.realtime !== undefined ? realtimeGateway(opts, opts.realtime, access, addressLimiter, log) : undefined
  if (gateway !== undefined && opts.realtime !== undefined) routes.push(...realtimeRoutes(gateway, opts.realtime))
  if (!opts.env.disableSwagger) {
    let doc: object | undefined
    routes.push(...swaggerRoutes(() => (doc ??= openApiDocument(routes, REALTIME_SCHEMAS))))
  }
  if (opts.explorer !== undefined && !opts.env.disableExplorer) routes.push(...explorerRoutes(opts.explorer))

  const app = new Koa({ proxy: false })
  app.on('error', answerFailed(log))
  const router = new Router()
  // outermost, so it sees the status every other layer (the error mapper included) settled on
  if (opts.metrics !== undefined) app.use(httpMetrics(opts.metrics, routeTemplates(router, routes)))
  // before the error mapper, so its log lines carry the id
  app.use(requestId())
  app.use(errorMiddleware(log))
  if (access.private && access.token !== undefined) app.use(privateMode(access))
  if (addressLimiter !== undefined) app.use(rateLimit(addressLimiter))
  const rawPaths = new Set(routes.filter((r) => r.bodyBytes === true && !r.path.includes('{')).map((r) => r.path))
  app.use(jsonBody(opts.env.maxBodyBytes, { '/feed/publish': Math.max(opts.env.maxBodyBytes, opts.env.maxUploadBytes) }, rawPaths))
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

  const server = createServer(slowClientTimeouts(opts.env), app.callback())
  server.keepAliveTimeout = opts.env.keepAliveTimeoutMs
  server.on('clientError', answerClientError)
  gateway?.attach(server)
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
    async stop () {
      // WebSockets and event streams first: they never end by themselves, and server.close() waits for them
      await gateway?.stop()
      // from now on every response closes its connection, so keep-alive clients let go
      server.prependListener('request', (_req, res) => { res.shouldKeepAlive = false })
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      // Connections busy with a request become idle after answering; sweep until all are gone,
      // and cut whatever is left after the grace period.
      const sweep = setInterval(() => server.closeIdleConnections(), 50)
      const cut = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS)
      server.closeIdleConnections()
      await closed
      clearInterval(sweep)
      clearTimeout(cut)
    }
  }
}

/**
 * Bounds on slow clients, so half-sent requests (slowloris) cannot hold connections for long:
 * the head and the whole request must arrive within their timeouts, else node answers 408 and
 * closes. Node checks them on an interval; a quarter of the head timeout keeps the overshoot small.
 * WebSockets leave the HTTP server's bookkeeping on upgrade, and an SSE request is complete once
 * its head is in, so neither long-lived stream is cut by these.
 */
function slowClientTimeouts (env: EnvSettings): ServerOptions {
  return {
    headersTimeout: env.headersTimeoutMs,
    requestTimeout: env.requestTimeoutMs,
    connectionsCheckingInterval: Math.min(30_000, Math.max(250, Math.floor(env.headersTimeoutMs / 4)))
  }
}

/** The gateway over this node and mailbox: submit_tx takes the POST /api/tx path, failures the same error map. */
function realtimeGateway (opts: ApiOptions, limits: RealtimeLimits, access: AccessOptions, addressLimiter: RateLimiter | undefined, log: Logger): RealtimeGateway {
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
    protocolVersion: PROTOCOL_VERSION,
    nodeVersion: NODE_VERSION,
    logger: opts.logger
  })
}

/**
 * The Koa handler of one declared route: access check, then the path parameters, the query and
 * the body each parsed with the schema the route declares (the same that the OpenAPI document
 * shows), so a handler only ever sees validated values; then the handler, its result as the body.
 * A route that declares no body schema gets no body: whatever JSON came is ignored, not refused
 * (a client's `{}` on POST /feed/post/{id}/view is harmless). Unknown members of a body object
 * are dropped, as unknown members of transaction payloads are (decisions.md): a newer client's
 * extra fields do not fail an older node.
 *
 * Not an async function: every request passes here, and a synchronous handler's result needs no
 * promise. A throw before the handler's promise becomes a rejection in koa-compose, which calls
 * every middleware inside try/catch.
 */
export function routeHandler (r: AnyRoute, access: AccessOptions): (ctx: Context) => Promise<void> | undefined {
  const answer = (ctx: Context, result: unknown): void => {
    if (ctx.respond !== false && (ctx.body === undefined || ctx.body === null)) ctx.body = result
  }
  // a bodyBytes route decodes ctx.request.rawBody itself
  const bodySchema = r.bodyBytes === true ? undefined : r.body
  const bodyOptional = bodySchema?.safeParse(undefined).success === true
  return (ctx) => {
    ctx.state.route = r.path
    if (r.write === true) requireBearer(ctx, access)
    const params = r.params !== undefined ? parseOrThrow(r.params, ctx.params) : undefined
    const query = r.query !== undefined ? parseOrThrow(r.query, Object.fromEntries(new URLSearchParams(ctx.querystring))) : undefined
    let body: unknown
    if (bodySchema !== undefined) {
      const raw = ctx.request.body
      if (raw === undefined && !bodyOptional) throw new KithError('BAD_REQUEST', 'request body: required: send a JSON object')
      body = parseOrThrow(bodySchema, raw)
    }
    const result = r.handler({ params, query, body, ctx })
    if (result instanceof Promise) return result.then((value) => answer(ctx, value))
    answer(ctx, result)
  }
}

/**
 * Counts every answer by route template (`unmatched` for paths no route serves) and status. A
 * route's handler names its template; a request refused before it (a malformed body, a missing
 * token) is matched against the router afterwards.
 */
function httpMetrics (metrics: NodeMetrics, templateOf: (method: string, path: string) => string | undefined): Koa.Middleware {
  return async (ctx, next) => {
    const started = performance.now()
    try {
      await next()
    } finally {
      const route = typeof ctx.state.route === 'string' ? ctx.state.route : templateOf(ctx.method, ctx.path) ?? 'unmatched'
      metrics.observeHttp(ctx.method, route, ctx.status, (performance.now() - started) / 1000)
    }
  }
}

/** The OpenAPI template of the route the router would pick for (method, path). */
function routeTemplates (router: Router, routes: readonly AnyRoute[]): (method: string, path: string) => string | undefined {
  const byKoaPath = new Map(routes.map((r) => [koaPath(r.path), r.path]))
  return (method, path) => {
    const layer = router.match(path, method).pathAndMethod.at(-1)
    return layer !== undefined ? byKoaPath.get(String(layer.path)) : undefined
  }
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

