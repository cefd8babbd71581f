/** zod at the edges: parsing that never throws, and failures turned into a KithError whose message names the offending field. */
import { z } from 'zod'
import { BASE64_CHARS, isBase64 } from '../crypto/index.js'
import { KithError, type ErrorCode } from '../errors/index.js'

/**
 * `schema.safeParse` that never throws. Zod's checks can throw on hostile input: a member whose
 * `length` is an object without a callable `toString` reached the min-length check after the type
 * check had failed, and comparing it with a number threw a TypeError (a 500 at the edge).
 */
export function safeParse<T extends z.ZodType> (schema: T, value: unknown): z.ZodSafeParseResult<z.output<T>> {
  try {
    return schema.safeParse(value)
  } catch {
    return { success: false, error: new z.ZodError([{ code: 'custom', message: 'not a valid value', path: [], input: value }]) as z.ZodError<z.output<T>> }
  }
}

/** Parses a JSON message (gossip, request, answer) and checks its shape; undefined when it is not valid JSON of that shape. */
export function decodeJson<T extends z.ZodType> (schema: T, data: Uint8Array): z.output<T> | undefined {
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'))
  } catch {
    return undefined
  }
  const result = safeParse(schema, value)
  return result.success ? result.data : undefined
}

/** Standard padded base64 text; the pattern also goes into the OpenAPI document, the length check makes it exact. */
export function base64String (message: string): z.ZodString {
  return z.string().regex(BASE64_CHARS, message).refine(isBase64, message)
}

export function parseOrThrow<T extends z.ZodType> (schema: T, value: unknown, code: ErrorCode = 'BAD_REQUEST', what = ''): z.output<T> {
  const result = safeParse(schema, value)
  if (result.success) return result.data
  const issue = result.error.issues[0]
  const path = issue?.path.length ? issue.path.join('.') : ''
  const field = [what, path].filter(Boolean).join('.')
  throw new KithError(code, `${field ? `${field}: ` : ''}${issue?.message ?? 'invalid value'}`)
}
