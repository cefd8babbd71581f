/** The Koa edge: body cap and JSON parsing, access mode (bearer token), per-IP rate limit. */
import type { IncomingMessage } from 'node:http'
import type { Context, Next } from 'koa'
import { secretsEqual } from '../crypto/index.js'
import { KithError } from '../errors/index.js'

declare module 'koa' {
  interface Request {
    body?: unknown
    /** the body's bytes, unparsed, on the paths jsonBody was told to leave alone */
    rawBody?: Buffer
  }
}

/**
 * Reads a JSON body up to `maxBytes` (or the cap `capByPath` gives the request's path: uploads);
 * larger bodies get 413 before they are buffered whole. On `rawPaths` the bytes are kept unparsed
 * in `ctx.request.rawBody`, for the handler to decode.
 */
export function jsonBody (defaultMaxBytes: number, capByPath: Readonly<Record<string, number>> = {}, rawPaths: ReadonlySet<string> = new Set()) {
  // a Map: the request's path must not find Object's own members
  const caps = new Map(Object.entries(capByPath))
  return async function readJsonBody (ctx: Context, next: Next): Promise<void> {
    if (ctx.method === 'GET' || ctx.method === 'HEAD') return await next()
    const maxBytes = caps.get(ctx.path) ?? defaultMaxBytes
    const declared = Number(ctx.get('content-length') || 0)
    if (declared > maxBytes) throw new KithError('BODY_TOO_LARGE', `request body of ${declared} bytes exceeds the limit of ${maxBytes} bytes`)
    const body = await readBody(ctx.req, maxBytes)
    if (rawPaths.has(ctx.path)) {
      ctx.request.rawBody = body
      return await next()
    }
    if (body.length > 0) {
      try {
        ctx.request.body = JSON.parse(body.toString('utf8'))
      } catch {
        throw new KithError('BAD_REQUEST', 'request body is not valid JSON')
      }
    }
    await next()
  }
}

/**
 * The whole request body, or BODY_TOO_LARGE past `maxBytes`. Stream events rather than an async
 * iterator: the iterator's promises and listeners cost several µs per request on the hot routes.
 */
function readBody (req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer): void => {
      size += chunk.length
      if (size > maxBytes) {
        cleanup()
        req.resume()
        reject(new KithError('BODY_TOO_LARGE', `request body exceeds the limit of ${maxBytes} bytes`))
        return
      }
      chunks.push(chunk)
    }
    const onEnd = (): void => { cleanup(); resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)) }
    const onError = (err: Error): void => { cleanup(); reject(err) }
    const cleanup = (): void => {
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
    }
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
  })
}

export interface AccessOptions {
  token: string | undefined
  /** every route needs the token, not only writes */
  private: boolean
}

export function bearerToken (ctx: Context): string | undefined {
  const header = ctx.get('authorization')
  const match = /^Bearer\s+(.+)$/i.exec(header)
  return match?.[1]
}

/** True when the node needs no token, or `given` is it (compared in constant time). */
export function tokenMatches (given: string | undefined, opts: AccessOptions): boolean {
  return opts.token === undefined || (given !== undefined && secretsEqual(given, opts.token))
}

/** Fully private mode: every route needs the token. Token-writes mode is checked per route. */
export function privateMode (opts: AccessOptions) {
  return async function requireToken (ctx: Context, next: Next): Promise<void> {
    if (opts.private && opts.token !== undefined) requireBearer(ctx, opts)
    await next()
  }
}

export function requireBearer (ctx: Context, opts: AccessOptions): void {
  const given = bearerToken(ctx) ?? (typeof ctx.query.token === 'string' ? ctx.query.token : undefined)
  if (!tokenMatches(given, opts)) throw new KithError('UNAUTHORIZED', 'this node requires `Authorization: Bearer <token>`')
}

/**
 * Token bucket per key: `rps` tokens a second, bursts up to twice that. Idle buckets are swept
 * so the table stays bounded by the number of recently active clients.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number, at: number }>()
  private lastSweep = 0

  /** `keyOf` maps what callers pass to the bucket it draws on (client addresses: an IPv6 /64 is one client) */
  constructor (private readonly rps: number, private readonly now: () => number = Date.now, private readonly keyOf: (key: string) => string = (key) => key) {}

  take (key: string): boolean {
    return this.admit(key).allowed
  }

  /**
   * Takes a token for `key` when there is one, and says where the bucket stands: what the
   * RateLimit-* headers (IETF httpapi draft) and Retry-After report.
   */
  admit (key: string): RateLimitState {
    const burst = this.rps * 2
    if (this.rps <= 0) return { allowed: true, limit: 0, remaining: 0, resetSeconds: 0, retryAfterSeconds: 0 }
    const now = this.now()
    if (now - this.lastSweep > 10_000) this.sweep(now, burst)
    key = this.keyOf(key)
    const bucket = this.buckets.get(key) ?? { tokens: burst, at: now }
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * this.rps)
    bucket.at = now
    this.buckets.set(key, bucket)
    const allowed = bucket.tokens >= 1
    if (allowed) bucket.tokens -= 1
    return {
      allowed,
      limit: burst,
      remaining: Math.floor(bucket.tokens),
      resetSeconds: Math.ceil((burst - bucket.tokens) / this.rps),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - bucket.tokens) / this.rps))
    }
  }

  private sweep (now: number, burst: number): void {
    this.lastSweep = now
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.at) / 1000) * this.rps >= burst) this.buckets.delete(key)
    }
  }
}

export interface RateLimitState {
  allowed: boolean
  /** the bucket's size: the most requests a burst may make */
  limit: number
  /** requests left in the bucket now */
  remaining: number
  /** seconds until the bucket is full again */
  resetSeconds: number
  /** when refused, seconds until a request would pass */
  retryAfterSeconds: number
}

export function rateLimit (limiter: RateLimiter) {
  return async function limitByIp (ctx: Context, next: Next): Promise<void> {
    const state = limiter.admit(ctx.ip)
    ctx.set('RateLimit-Limit', String(state.limit))
    ctx.set('RateLimit-Remaining', String(state.remaining))
    ctx.set('RateLimit-Reset', String(state.resetSeconds))
    if (!state.allowed) {
      ctx.set('Retry-After', String(state.retryAfterSeconds))
      throw new KithError('RATE_LIMITED', 'too many requests from this address; slow down')
    }
    await next()
  }
}
