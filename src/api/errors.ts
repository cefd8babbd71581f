/**
 * The one place that maps typed errors to HTTP statuses and the `{"error": "..."}` body.
 * 5xx answers never carry internal detail.
 */
import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import type { Context, Next } from 'koa'
import type { Logger } from 'pino'
import { KithError, type ErrorCode } from '../errors/index.js'
import { requestLog } from './request-id.js'

/** Every error answer names its code here: the body is `{"error": "..."}` alone (spec "Errors"). */
export const ERROR_CODE_HEADER = 'Kith-Error-Code'

export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  BODY_TOO_LARGE: 413,
  NOT_FOUND: 404,
  UNAUTHORIZED: 401,
  RATE_LIMITED: 429,
  HTTP_REQUEST_TIMEOUT: 408,
  HTTP_HEADERS_TOO_LARGE: 431,
  TX_MALFORMED: 400,
  TX_BAD_SIGNATURE: 400,
  TX_BAD_TIMESTAMP: 400,
  TX_DUPLICATE: 400,
  TX_INSUFFICIENT_FUNDS: 400,
  TX_FEE_TOO_LOW: 400,
  TX_INVALID: 400,
  TX_BAD_FIELD: 400,
  TX_CONFLICT: 400,
  TX_UNKNOWN_TARGET: 400,
  TX_NOT_ALLOWED: 400,
  // not the client's fault, but what the spec gives a rejected transaction; it may pass on another node
  TX_UNDECIDED: 400,
  CONTRACT_REFUSED: 400,
  TX_UNSUPPORTED_TYPE: 400,
  MEMPOOL_FULL: 503,
  NODE_BUSY: 503,
  TX_BLOCK_FULL: 503,
  IDENTITY_KEY_TAKEN: 400,
  CONTRACT_DEPLOY_BUSY: 429,
  CONTRACT_DEPLOY_REFUSALS: 429,
  RELAY_FORBIDDEN: 403,
  RELAY_STALE_TS: 400,
  RELAY_MAILBOX_FULL: 429,
  RELAY_CLIENT_QUOTA: 429,
  RELAY_RECIPIENT_BUSY: 429,
  RELAY_READ_NONCE_LIMIT: 429,
  RELAY_STORAGE_FULL: 507,
  RELAY_FEE_REFUSED: 400,
  RELAY_UNAVAILABLE: 503,
  POST_GONE: 410,
  POST_TOO_LARGE: 413,
  FEED_QUOTA_EXCEEDED: 507,
  FEED_STALE_TS: 400,
  FEED_BAD_SIGNATURE: 400,
  // well-formed and signed, but the author's balance cannot pay for the post: fund the account
  FEED_INSUFFICIENT_FUNDS: 402,
  FEED_PENDING_LIMIT: 429,
  FEED_BAD_HOSTING_RELAY: 400,
  MEDIA_UNSUPPORTED: 400,
  MEDIA_TYPE_MISMATCH: 400,
  MEDIA_INVALID: 400,
  MEDIA_BUSY: 503,
  MEDIA_NO_SIDECAR: 503,
  MEDIA_SIDECAR_FAILED: 502,
  MEDIA_SIDECAR_TIMEOUT: 504,
  UPDATE_NO_SOURCE: 503,
  UPDATE_SOURCE_FAILED: 502,
  // the two below come from `kith update`, never from an HTTP route; mapped as the source's fault and a refusal
  UPDATE_CHECKSUM_MISMATCH: 502,
  UPDATE_MAJOR_REFUSED: 409,
  // a block or a snapshot comes from a peer or a file, a configuration from the operator: none reaches a route, mapped for completeness
  BLOCK_INVALID: 400,
  SNAPSHOT_INVALID: 400,
  CONFIG_INVALID: 400,
  UNAVAILABLE: 503,
  INTERNAL: 500
}

export function errorMiddleware (log: Logger) {
  return async function mapErrors (ctx: Context, next: Next): Promise<void> {
    try {
      await next()
      // ctx.respond false: someone else writes this response (an edge handing a read on to the core)
      if (ctx.respond !== false && (ctx.body === undefined || ctx.body === null)) {
        if (ctx.status === 404) throw new KithError('NOT_FOUND', `no route for ${ctx.method} ${ctx.path}`)
        if (ctx.status === 405 || ctx.status === 501) {
          const status = ctx.status
          ctx.body = { error: `method ${ctx.method} is not ${status === 405 ? 'allowed' : 'implemented'} on ${ctx.path}` }
          ctx.status = status
        }
      }
    } catch (err) {
      if (clientWentAway(err)) {
        // the request stream failed because the client reset: nobody is left to read an answer
        requestLog(ctx, log).debug({ code: (err as NodeJS.ErrnoException).code, path: ctx.path }, 'client went away mid-request')
        ctx.status = 400
        ctx.body = { error: 'the connection was reset before the request was complete' }
        return
      }
      const answer = errorAnswer(err, requestLog(ctx, log), { method: ctx.method, path: ctx.path })
      ctx.status = answer.status
      ctx.body = { error: answer.error }
      ctx.set(ERROR_CODE_HEADER, answer.code)
      // a limiter that knows better (the per-IP bucket) has set it already, or says when in the error's details
      if (answer.retryAfter && !ctx.res.hasHeader('Retry-After')) ctx.set('Retry-After', String(retryAfterSeconds(err)))
    }
  }
}

function retryAfterSeconds (err: unknown): number {
  const seconds = err instanceof KithError ? err.details?.retryAfterSeconds : undefined
  return typeof seconds === 'number' && seconds >= 1 ? Math.ceil(seconds) : 1
}

/** Refusals that pass with time: their answers carry Retry-After (`details.retryAfterSeconds`, else 1 s). */
const RETRY_AFTER_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'RATE_LIMITED', 'MEMPOOL_FULL', 'NODE_BUSY', 'MEDIA_BUSY',
  'RELAY_CLIENT_QUOTA', 'RELAY_RECIPIENT_BUSY', 'RELAY_READ_NONCE_LIMIT',
  'CONTRACT_DEPLOY_BUSY', 'CONTRACT_DEPLOY_REFUSALS'
])

/**
 * The status and `error` text of a failure, for HTTP answers and for the WebSocket's
 * `submit_ack` and `error` messages alike. Anything but a KithError is a 500 whose detail is
 * logged, never sent.
 */
export function errorAnswer (err: unknown, log: Logger, context: Record<string, unknown> = {}): { status: number, error: string, code: ErrorCode, retryAfter: boolean } {
  if (err instanceof KithError) {
    const retryAfter = RETRY_AFTER_CODES.has(err.code)
    return { status: STATUS_BY_CODE[err.code], error: err.message, code: err.code, retryAfter }
  }
  log.error({ err, ...context }, 'request failed')
  return { status: 500, error: 'internal error', code: 'INTERNAL', retryAfter: false }
}

/** Codes of a socket or stream that failed because the peer went away (a reset, a close mid-write). */
const PEER_GONE_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_WRITE_AFTER_END'])

/** Whether `err` says the client went away: its fault (or its network's), not the node's. */
export function clientWentAway (err: unknown): boolean {
  return err instanceof Error && PEER_GONE_CODES.has((err as NodeJS.ErrnoException).code ?? '')
}

/**
 * Koa's 'error' event: what failed once an answer had begun, out of the error mapper's reach.
 * Koa's default prints it to stderr, which would hand any client that resets mid-answer a way to
 * fill the operator's console; a client's disconnect is logged at debug, anything else at error.
 */
export function answerFailed (log: Logger): (err: Error) => void {
  return (err) => {
    if (clientWentAway(err)) log.debug({ code: (err as NodeJS.ErrnoException).code }, 'client went away mid-answer')
    else log.error({ err }, 'answer failed')
  }
}

/** How long a refused client gets to read its answer before its socket is cut. */
const REFUSAL_LINGER_MS = 2000
/** Sockets answered by answerClientError and lingering. */
const refused = new WeakSet<Duplex>()

/**
 * After an answer, reads and drops what the client still sends until it closes (or the linger
 * ends). Closing a socket with unread bytes makes the kernel send a reset, and a reset can
 * overtake the answer on its way: the client would see the connection cut, not the refusal.
 */
function lingerThenClose (socket: Duplex): void {
  socket.resume()
  const cut = setTimeout(() => socket.destroy(), REFUSAL_LINGER_MS)
  cut.unref()
  socket.once('end', () => socket.destroy())
  socket.once('close', () => clearTimeout(cut))
}

/** The refusal of a request the HTTP server dropped before Koa saw it, by Node's error code. */
function clientErrorRefusal (code: string | undefined): KithError {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT': return new KithError('HTTP_REQUEST_TIMEOUT', 'the request did not arrive in time (SVC_HEADERS_TIMEOUT_MS, SVC_REQUEST_TIMEOUT_MS)')
    case 'HPE_HEADER_OVERFLOW': return new KithError('HTTP_HEADERS_TOO_LARGE', 'the request head is larger than the server accepts')
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW': return new KithError('BODY_TOO_LARGE', 'the chunk extensions are larger than the server accepts')
    default: return new KithError('BAD_REQUEST', 'the request is not valid HTTP/1.1')
  }
}

/**
 * The HTTP server's 'clientError': a request its parser refused, a head or request timeout, or a
 * connection that failed mid-request (a reset). Answered with the usual `{"error"}` body when the
 * socket can still take one and no answer has begun on it; the socket is dropped either way.
 * Node has put a no-op error listener on the socket before this runs, so a late reset is absorbed.
 */
export function answerClientError (err: NodeJS.ErrnoException, socket: Duplex & { _httpMessage?: { headersSent: boolean } | null }): void {
  // the parser complains again about bytes that arrive while the answer lingers: it is already on its way
  if (refused.has(socket)) return
  if (!clientWentAway(err) && socket.writable && socket._httpMessage?.headersSent !== true) {
    const refusal = clientErrorRefusal(err.code)
    const status = STATUS_BY_CODE[refusal.code]
    const body = JSON.stringify({ error: refusal.message })
    refused.add(socket)
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
    lingerThenClose(socket)
    return
  }
  socket.destroy()
}
