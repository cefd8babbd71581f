/** Turns a zod validation failure into a KithError whose message names the offending field. */
import type { z } from 'zod'
import { KithError, type ErrorCode } from './errors.js'

export function parseOrThrow<T extends z.ZodType> (schema: T, value: unknown, code: ErrorCode = 'BAD_REQUEST', what = ''): z.output<T> {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  const issue = result.error.issues[0]
  const path = issue?.path.length ? issue.path.join('.') : ''
  const field = [what, path].filter(Boolean).join('.')
  throw new KithError(code, `${field ? `${field}: ` : ''}${issue?.message ?? 'invalid value'}`)
}
