/**
 * What an edge thread serves: the public listener, shared with the other edges (SO_REUSEPORT, so
 * the kernel spreads connections over them). The busy write routes are answered here: POST
 * /api/tx, /relay/broadcast and /feed/publish have their bodies read, parsed, checked against
 * their schemas, and (a transaction's signature, a publish's base64, hash and signature) decoded
 * and verified; only the part that needs the node's order and state goes to the core, as one call.
 * A transaction's signature is verified on a thread of the edge's own, and so is a large publish
 * decoded; a publish's attachment stays here, and the edge's own image workers scrub it when the
 * core, having admitted the publish, asks. The committed
 * reads (GET /api/tx/{id}, /api/address/{pubkey}, /api/blocks/{height}) are answered here too,
 * from the edge's own read-only view of the chain store; a transaction no committed block holds
 * (pending, or unknown) goes on to the core, which knows the mempool. Every other request goes on
 * to the core's private listener as it streams in (proxy.ts).
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Router from '@koa/router'
import Koa, { type Context, type Middleware, type Next } from 'koa'
import type { Logger } from 'pino'
import { verifyTxSignatureBy } from '../../chain/index.js'
import { VerifyPool } from '../../crypto/index.js'
import { PublishDecoder, toTransfer, type DecodedPublish, type PublishResponse } from '../../feed/index.js'
import { MediaScrubber } from '../../media/index.js'
import { committedReads, type CommittedChain, type CommittedReads, type EnvSettings, type SubmitResult } from '../../node/index.js'
import { clientAddressKey } from '../../relay/index.js'
import { KithError } from '../../errors/index.js'
import { answerClientError, answerFailed, errorMiddleware } from '../errors.js'
import { privateMode, rateLimit, RateLimiter, type AccessOptions } from '../middleware.js'
import { REQUEST_ID_HEADER, requestId } from '../request-id.js'
import { koaPath, type AnyRoute } from '../route.js'
import { chainReadRoutes } from '../routes/chain.js'
import { publishRoute } from '../routes/feed.js'
import { broadcastRoute, type BroadcastAnswer } from '../routes/relay.js'
import { submitTxRoute } from '../routes/submit.js'
import { closeGracefully, httpMetrics, routeBodies, routeHandler, routeTemplates, slowClientTimeouts } from '../serving.js'
import { coreLink, type CoreLink } from './proxy.js'
import type { EdgeCall, EdgeCallKind, EdgeMedia, HttpObservation, PublishWire, ScrubbedWire } from './protocol.js'

export interface EdgeAppOptions {
  env: EnvSettings
  corePort: number
  secret: string
  /** the core's bound on what may wait for a slow WebSocket or event-stream client (RealtimeLimits) */
  maxQueuedBytes: number
  logger: Logger
  /** the calls the core takes; the routes of the others are forwarded like any other */
  calls: readonly EdgeCallKind[]
  /** hands a call to the core, which answers as the route would on one thread; `transfer`: buffers moved, not copied */
  call: (call: EdgeCall, ip: string, transfer?: ArrayBuffer[]) => Promise<unknown>
  /** counts a request answered here in the core's HTTP metrics */
  observe: (observation: HttpObservation) => void
  /**
   * The edge's read-only view of the chain store, when the committed reads are answered here;
   * `fresh` drops the thread's read snapshot, so each request sees the last block committed.
   */
  chain?: CommittedChain & { fresh: () => void }
  /** a committed read answered here for a client, to be drawn on the core's per-IP bucket (the next message carries it) */
  readAnswered: (ip: string) => void
  /** the seconds the core's per-IP bucket refuses this client for, when it said so lately; undefined: go on */
  readRefusedFor: (ip: string) => number | undefined
  /** the edge's share of the image workers, which scrub the attachments of the publishes it takes */
  media?: EdgeMedia
}

export interface EdgeApp {
  /** listens on host:port beside the other edges; resolves with the port (port 0 picks one) */
  listen (host: string | undefined, port: number): Promise<number>
  /** scrubs the attachment a publish in flight holds here (the core asks once it admitted the publish), its bytes ready to transfer */
  scrubHeld (hold: number): Promise<ScrubbedWire>
  stop (): Promise<void>
}

/**
 * The attachments of the publishes this edge has handed to the core and not yet had answered,
 * each kept here until the answer comes: the core asks for its scrub, never for its bytes.
 */
class HeldAttachments {
  private readonly held = new Map<number, { bytes: Buffer, mime: string }>()
  private next = 0

  constructor (private readonly scrubber: MediaScrubber | undefined) {}

  /** The publish as the core gets it, and what to transfer with it; its attachment held here under a new number. */
  hold (decoded: DecodedPublish): { wire: PublishWire, transfer: ArrayBuffer[], hold: number | undefined } {
    const { attachment, ...rest } = decoded
    const content = toTransfer(rest.content)
    if (attachment === undefined) return { wire: { ...rest, content, attachment: undefined }, transfer: [content.buffer], hold: undefined }
    const hold = this.next++
    this.held.set(hold, attachment)
    return { wire: { ...rest, content, attachment: { mime: attachment.mime, size: attachment.bytes.length, hold } }, transfer: [content.buffer], hold }
  }

  release (hold: number | undefined): void {
    if (hold !== undefined) this.held.delete(hold)
  }

  async scrub (hold: number): Promise<ScrubbedWire> {
    const attachment = this.held.get(hold)
    if (attachment === undefined || this.scrubber === undefined) throw new KithError('INTERNAL', 'the attachment to scrub is not held on this edge')
    const { bytes, mime } = await this.scrubber.scrub(attachment.bytes, attachment.mime)
    return { bytes: toTransfer(bytes), mime }
  }

  async stop (): Promise<void> {
    await this.scrubber?.stop()
  }
}

/**
 * The routes this edge answers, each with the call it makes of the core. A publish body over
 * 64 KiB is decoded on a thread of the edge's own (`decoder`), not on the edge's event loop: the
 * other requests of its connections, forwarded reads included, do not wait behind a photo's
 * JSON.parse and base64 check.
 */
function edgeRoutes (opts: EdgeAppOptions, decoder: PublishDecoder, held: HeldAttachments, verifyPool: () => VerifyPool): AnyRoute[] {
  const { call } = opts
  const all: Record<EdgeCallKind, () => AnyRoute> = {
    'submit-tx': () => {
      const { verify } = verifyPool()
      return submitTxRoute(async (tx, ctx) => {
        const signatureValid = await verifyTxSignatureBy(verify, tx)
        return await call({ kind: 'submit-tx', tx, signatureValid }, ctx.ip) as SubmitResult
      })
    },
    broadcast: () => broadcastRoute(async (envelope, ctx) => await call({ kind: 'broadcast', envelope }, ctx.ip) as BroadcastAnswer),
    publish: () => publishRoute(async (body, ctx) => {
      const { wire, transfer, hold } = held.hold(await decoder.decode(body))
      try {
        return await call({ kind: 'publish', decoded: wire }, ctx.ip, transfer) as PublishResponse
      } finally {
        held.release(hold)
      }
    })
  }
  return opts.calls.map((kind) => all[kind]())
}

/** Thrown by the edge's chain view when only the core can answer (a transaction in its mempool): the request goes on to it. */
class AskTheCore extends Error {}

/**
 * The committed-read routes over the edge's view of the store. It answers what a committed block
 * holds, exactly as the core would; for a transaction no committed block holds it asks the core.
 */
function committedReadRoutes (chain: CommittedChain): AnyRoute[] {
  const reads = committedReads(chain)
  const view: CommittedReads = {
    ...reads,
    lookupTx: (id) => {
      const found = reads.lookupTx(id)
      if (found === undefined) throw new AskTheCore()
      return found
    }
  }
  return chainReadRoutes(view)
}

export function createEdgeApp (opts: EdgeAppOptions): EdgeApp {
  const log = opts.logger
  const access: AccessOptions = { token: opts.env.apiToken, private: opts.env.apiPrivate }
  // one decode thread per edge, started only where the core takes publishes
  const decoder = new PublishDecoder({ workers: opts.calls.includes('publish') ? 1 : 0, logger: log })
  // and its own image workers, which scrub what it decoded when the core asks
  const held = new HeldAttachments(opts.media !== undefined && opts.calls.includes('publish') ? MediaScrubber.start({ env: opts.media.env, workers: opts.media.workers, maxQueue: opts.media.maxQueue, logger: log }) : undefined)
  // and one verify thread, made with the route that takes transactions: with the signatures
  // checked on the edge's loop, one edge was the serial bound of submissions (docs/benchmarks.md)
  let verifyPool: VerifyPool | undefined
  const routes = edgeRoutes(opts, decoder, held, () => (verifyPool ??= new VerifyPool(1)))
  const handlers = new Map(routes.map((r) => [`${r.method.toUpperCase()} ${r.path}`, routeHandler(r, access)]))
  // the committed reads, with parameters in their paths: a router of their own (GET, and HEAD with it)
  const reads = opts.chain !== undefined ? committedReadRoutes(opts.chain) : []
  const readRouter = new Router()
  for (const r of reads) readRouter.get(koaPath(r.path), routeHandler(r, access))
  const readTemplate = routeTemplates(readRouter, reads)
  const link = coreLink(opts.corePort, opts.secret, opts.maxQueuedBytes, log)

  const app = new Koa({ proxy: false })
  app.on('error', answerFailed(log))
  // counted in the core's HTTP metrics as the core counts its own answers, by route template; a
  // read handed on to the core is counted there
  app.use(httpMetrics({
    observeHttp: (method, route, status, seconds) => opts.observe({ method, route, status, seconds })
  }, (method, path) => readTemplate(method, path) ?? path, (ctx) => ctx.state.askedCore !== true))
  app.use(requestId())
  app.use(errorMiddleware(log))
  if (access.private && access.token !== undefined) app.use(privateMode(access))
  // A first bucket here bounds the parsing and verifying a flood costs this thread; the core's
  // bucket, shared by every edge and the forwarded requests, has the last word (edge-threads.ts).
  if (opts.env.rateLimitRps > 0) app.use(rateLimit(new RateLimiter(opts.env.rateLimitRps, Date.now, clientAddressKey)))
  app.use(routeBodies(opts.env, routes))
  app.use(async (ctx: Context, next: Next) => {
    const handle = handlers.get(`${ctx.method} ${ctx.path}`)
    if (handle !== undefined) { await handle(ctx); return }
    // A committed read. The core's bucket is not asked first (that would make every read wait
    // for the core's turn): it is drawn on after the fact, and refuses for every edge once empty.
    if (opts.env.rateLimitRps > 0) {
      const wait = opts.readRefusedFor(ctx.ip)
      if (wait !== undefined) throw new KithError('RATE_LIMITED', 'too many requests from this address; slow down', { retryAfterSeconds: wait })
    }
    opts.chain?.fresh()
    try {
      await next()
    } finally {
      // a read handed on to the core draws on its bucket there
      if (opts.env.rateLimitRps > 0 && ctx.state.askedCore !== true) opts.readAnswered(ctx.ip)
    }
  })
  app.use(askTheCoreOnMiss(link))
  app.use(readRouter.routes())

  const answerHere = app.callback()
  const server: Server = createServer(slowClientTimeouts(opts.env), (req, res) => {
    const url = req.url ?? '/'
    const query = url.indexOf('?')
    const method = req.method ?? ''
    const path = query === -1 ? url : url.slice(0, query)
    if (handlers.has(`${method} ${path}`) || (reads.length > 0 && (method === 'GET' || method === 'HEAD') && readTemplate(method, path) !== undefined)) void answerHere(req, res)
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
    scrubHeld: async (hold) => await held.scrub(hold),
    async stop () {
      link.close()
      await closeGracefully(server)
      await held.stop()
      await decoder.stop()
      await verifyPool?.stop()
    }
  }
}

/**
 * A read the edge cannot answer (AskTheCore) goes on to the core as it came: nothing of it was
 * answered or read yet (a GET's body is not read), and the core assigns its own request id.
 */
function askTheCoreOnMiss (link: CoreLink): Middleware {
  return async (ctx, next) => {
    try {
      await next()
    } catch (err) {
      if (!(err instanceof AskTheCore)) throw err
      ctx.state.askedCore = true
      ctx.respond = false
      ctx.res.removeHeader(REQUEST_ID_HEADER)
      link.forward(ctx.req, ctx.res)
    }
  }
}
