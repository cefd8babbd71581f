/**
 * What every HTTP listener of the node shares, the core's (server.ts) and the edge threads'
 * (edge/): how a declared route is run, the bounds on slow clients, and the graceful close.
 */
import type { Server, ServerOptions } from 'node:http'
import type { Context, Middleware } from 'koa'
import type { NodeMetrics } from '../metrics/index.js'
import type { EnvSettings } from '../node/index.js'
import { KithError } from '../errors/index.js'
import { parseOrThrow } from '../validation/index.js'
import { jsonBody, requireBearer, type AccessOptions } from './middleware.js'
import type Router from '@koa/router'
import { koaPath, type AnyRoute } from './route.js'

/** The body reader of a listener serving `routes`: the upload cap on /feed/publish, and bodyBytes routes left unparsed. */
export function routeBodies (env: EnvSettings, routes: readonly AnyRoute[]): ReturnType<typeof jsonBody> {
  const rawPaths = new Set(routes.filter((r) => r.bodyBytes === true && !r.path.includes('{')).map((r) => r.path))
  return jsonBody(env.maxBodyBytes, { '/feed/publish': Math.max(env.maxBodyBytes, env.maxUploadBytes) }, rawPaths)
}

/** How long in-flight requests get to finish when the node shuts down. */
const CLOSE_GRACE_MS = 3000

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
      body = r.plainBody?.(raw) ?? parseOrThrow(bodySchema, raw)
    }
    const result = r.handler({ params, query, body, ctx })
    if (result instanceof Promise) return result.then((value) => answer(ctx, value))
    answer(ctx, result)
  }
}

/**
 * Bounds on slow clients, so half-sent requests (slowloris) cannot hold connections for long:
 * the head and the whole request must arrive within their timeouts, else node answers 408 and
 * closes. Node checks them on an interval; a quarter of the head timeout keeps the overshoot small.
 * WebSockets leave the HTTP server's bookkeeping on upgrade, and an SSE request is complete once
 * its head is in, so neither long-lived stream is cut by these.
 */
export function slowClientTimeouts (env: EnvSettings): ServerOptions {
  return {
    headersTimeout: env.headersTimeoutMs,
    requestTimeout: env.requestTimeoutMs,
    connectionsCheckingInterval: Math.min(30_000, Math.max(250, Math.floor(env.headersTimeoutMs / 4)))
  }
}

/** Stops taking connections and lets in-flight requests finish, for up to CLOSE_GRACE_MS. */
export async function closeGracefully (server: Server): Promise<void> {
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

/**
 * Counts every answer by route template (`unmatched` for paths no route serves) and status. A
 * route's handler names its template; a request refused before it (a malformed body, a missing
 * token) is matched against the router afterwards.
 */
export function httpMetrics (
  metrics: Pick<NodeMetrics, 'observeHttp'>, templateOf: (method: string, path: string) => string | undefined, counted: (ctx: Context) => boolean = () => true
): Middleware {
  return async (ctx, next) => {
    const started = performance.now()
    try {
      await next()
    } finally {
      if (counted(ctx)) observe(ctx, started)
    }
  }
  function observe (ctx: Context, started: number): void {
    const route = typeof ctx.state.route === 'string' ? ctx.state.route : templateOf(ctx.method, ctx.path) ?? 'unmatched'
    metrics.observeHttp(ctx.method, route, ctx.status, (performance.now() - started) / 1000)
  }
}

/** The OpenAPI template of the route the router would pick for (method, path). */
export function routeTemplates (router: Router, routes: readonly AnyRoute[]): (method: string, path: string) => string | undefined {
  const byKoaPath = new Map(routes.map((r) => [koaPath(r.path), r.path]))
  return (method, path) => {
    const layer = router.match(path, method).pathAndMethod.at(-1)
    return layer !== undefined ? byKoaPath.get(String(layer.path)) : undefined
  }
}
