/**
 * What an edge thread serves: the public listener, shared with the other edges (SO_REUSEPORT, so
 * the kernel spreads connections over them). POST /api/tx is answered here: its body read,
 * parsed, checked against the schema and its signature verified on this thread, and only the
 * ordered part (the mempool's checks and the synced write) left to the core. Every other request
 * goes on to the core's private listener as it streams in (proxy.ts).
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Koa, { type Context, type Next } from 'koa'
import type { Logger } from 'pino'
import { verifyTxSignature, type Transaction } from '../../chain/index.js'
import type { EnvSettings, SubmitResult } from '../../node/index.js'
import { answerClientError, answerFailed, errorMiddleware } from '../errors.js'
import { jsonBody, privateMode, rateLimit, RateLimiter, type AccessOptions } from '../middleware.js'
import { requestId } from '../request-id.js'
import { submitTxRoute } from '../routes/submit.js'
import { closeGracefully, routeHandler, slowClientTimeouts } from '../serving.js'
import { clientAddressKey } from '../../relay/index.js'
import { coreLink } from './proxy.js'
import type { HttpObservation } from './protocol.js'

export interface EdgeAppOptions {
  env: EnvSettings
  corePort: number
  secret: string
  logger: Logger
  /** hands a parsed transaction and the signature's verdict to the core, which answers as POST /api/tx does */
  submit: (tx: Transaction, signatureValid: boolean, ip: string) => Promise<SubmitResult>
  /** counts a request answered here in the core's HTTP metrics */
  observe: (observation: HttpObservation) => void
}

export interface EdgeApp {
  /** listens on host:port beside the other edges; resolves with the port (port 0 picks one) */
  listen (host: string | undefined, port: number): Promise<number>
  stop (): Promise<void>
}

export function createEdgeApp (opts: EdgeAppOptions): EdgeApp {
  const log = opts.logger
  const access: AccessOptions = { token: opts.env.apiToken, private: opts.env.apiPrivate }
  const submitRoute = submitTxRoute(async (tx, ctx) => await opts.submit(tx, verifyTxSignature(tx), ctx.ip))
  // the answered-here routes, by "METHOD path"; everything else is the core's
  const local = new Set([`${submitRoute.method.toUpperCase()} ${submitRoute.path}`])

  const app = new Koa({ proxy: false })
  app.on('error', answerFailed(log))
  app.use(observeAnswers(opts.observe, submitRoute.path))
  app.use(requestId())
  app.use(errorMiddleware(log))
  if (access.private && access.token !== undefined) app.use(privateMode(access))
  // A first bucket here bounds the parsing and verifying a flood costs this thread; the core's
  // bucket, shared with every edge and the forwarded requests, has the last word (edge-threads.ts).
  if (opts.env.rateLimitRps > 0) app.use(rateLimit(new RateLimiter(opts.env.rateLimitRps, Date.now, clientAddressKey)))
  app.use(jsonBody(opts.env.maxBodyBytes))
  const handle = routeHandler(submitRoute, access)
  app.use(async (ctx: Context) => await handle(ctx))

  const link = coreLink(opts.corePort, opts.secret, log)
  const answerHere = app.callback()
  const server: Server = createServer(slowClientTimeouts(opts.env), (req, res) => {
    const url = req.url ?? '/'
    const query = url.indexOf('?')
    if (local.has(`${req.method ?? ''} ${query === -1 ? url : url.slice(0, query)}`)) void answerHere(req, res)
    else link.forward(req, res)
  })
  server.keepAliveTimeout = opts.env.keepAliveTimeoutMs
  server.on('clientError', answerClientError)
  server.on('upgrade', (req, socket, head) => link.forwardUpgrade(req, socket, head))

  return {
    async listen (host, port) {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen({ host, port, reusePort: true }, () => { server.off('error', reject); resolve() })
      })
      server.on('error', (err: NodeJS.ErrnoException) => log.warn({ code: err.code }, 'accepting a connection failed'))
      return (server.address() as AddressInfo).port
    },
    async stop () {
      link.close()
      await closeGracefully(server)
    }
  }
}

/** Reports every answer of the local routes to the core's HTTP metrics, as the core's own middleware would. */
function observeAnswers (observe: (o: HttpObservation) => void, route: string): Koa.Middleware {
  return async (ctx: Context, next: Next) => {
    const started = performance.now()
    try {
      await next()
    } finally {
      observe({ method: ctx.method, route, status: ctx.status, seconds: (performance.now() - started) / 1000 })
    }
  }
}
