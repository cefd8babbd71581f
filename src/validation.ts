/** Turns a zod validation failure into a KithError whose message names the offending field. */
import type { z } from 'zod'
import { KithError, type ErrorCode } from './errors.js'

/** Parses a JSON message (gossip, request, answer) and checks its shape; undefined when it is not valid JSON of that shape. */
export function decodeJson<T extends z.ZodType> (schema: T, data: Uint8Array): z.output<T> | undefined {
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'))
  } catch {
    return undefined
  }
  const result = schema.safeParse(value)
  return result.success ? result.data : undefined
}

export function parseOrThrow<T extends z.ZodType> (schema: T, value: unknown, code: ErrorCode = 'BAD_REQUEST', what = ''): z.output<T> {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  const issue = result.error.issues[0]
  const path = issue?.path.length ? issue.path.join('.') : ''
  const field = [what, path].filter(Boolean).join('.')
  throw new KithError(code, `${field ? `${field}: ` : ''}${issue?.message ?? 'invalid value'}`)
}
