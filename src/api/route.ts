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
  tag: string
  params?: P
  query?: Q
  body?: B
  /** needs the bearer token when the node runs in token-writes mode */
  write?: boolean
  responses: Record<number, ResponseDef>
  handler: (input: { params: Infer<P>, query: Infer<Q>, body: Infer<B>, ctx: Context }) => unknown
}

export interface AnyRoute {
  method: Method
  path: string
  summary: string
  tag: string
  params?: z.ZodType
  query?: z.ZodType
  body?: z.ZodType
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
