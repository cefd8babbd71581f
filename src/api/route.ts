/**
 * A route is declared once: its path, parameter and body schemas, responses and handler.
 * The router and the OpenAPI document are both built from these declarations.
 */
import type { Context } from 'koa'
import type { z } from 'zod'

export type Method = 'get' | 'post' | 'delete'

export interface ResponseDef {
  description: string
  schema?: z.ZodType
  contentType?: string
}

type Infer<S> = S extends z.ZodType ? z.output<S> : undefined

export interface RouteDef<P extends z.ZodType | undefined, Q extends z.ZodType | undefined, B extends z.ZodType | undefined> {
  method: Method
  /** OpenAPI form, e.g. /api/tx/{id} */
  path: string
  summary: string
  /** longer text for the OpenAPI document (markdown) */
  description?: string
  tag: string
  params?: P
  query?: Q
  body?: B
  /**
   * A hand check of the body that agrees with `body` on everything it accepts (a test shows it),
   * tried first on a hot route; undefined sends the body to the schema, which accepts it or
   * names the fault.
   */
  plainBody?: (raw: unknown) => Infer<B> | undefined
  /**
   * The handler decodes the body's bytes (`ctx.request.rawBody`) itself, off the main thread;
   * `body` then only documents it, and the handler's `body` is undefined.
   */
  bodyBytes?: boolean
  /** needs the bearer token when the node runs in token-writes mode */
  write?: boolean
  responses: Record<number, ResponseDef>
  handler: (input: { params: Infer<P>, query: Infer<Q>, body: Infer<B>, ctx: Context }) => unknown
}

export interface AnyRoute {
  method: Method
  path: string
  summary: string
  description?: string
  tag: string
  params?: z.ZodType
  query?: z.ZodType
  body?: z.ZodType
  plainBody?: (raw: unknown) => unknown
  bodyBytes?: boolean
  write?: boolean
  responses: Record<number, ResponseDef>
  handler: (input: { params: unknown, query: unknown, body: unknown, ctx: Context }) => unknown
}

export function route<P extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined, B extends z.ZodType | undefined = undefined> (def: RouteDef<P, Q, B>): AnyRoute {
  return def as unknown as AnyRoute
}

/** /api/tx/{id} -> /api/tx/:id */
export function koaPath (openApiPath: string): string {
  return openApiPath.replace(/\{([^}]+)\}/g, ':$1')
}

/**
 * Answers 200 with JSON text known to be ASCII, written as it is. For a string body Koa measures
 * the UTF-8 length by scanning it and node transcodes it on write: ~25 µs of a 32 KB inbox page.
 * Koa's own response handling is skipped for this answer (`ctx.respond = false`); errors thrown
 * before it are mapped as usual.
 */
export function sendAsciiJson (ctx: Context, text: string): void {
  ctx.respond = false
  ctx.res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': text.length })
  ctx.res.end(text, 'latin1')
}
