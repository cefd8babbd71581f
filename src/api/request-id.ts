/**
 * A request id per HTTP request: a sane incoming `X-Request-Id` (a proxy's or a client's) is
 * kept, anything else is replaced by a fresh UUID. It goes back in the `X-Request-Id` answer
 * header and into every log line logged for the request, so an operator can match a client's
 * report with the node's log.
 */
import { randomUUID } from 'node:crypto'
import type { Context, Next } from 'koa'
import type { Logger } from 'pino'

export const REQUEST_ID_HEADER = 'X-Request-Id'
/** bounded and log-safe: no spaces, quotes or control characters to forge log fields with */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The incoming id when it is sane, else a new one. */
export function chooseRequestId (incoming: string | undefined): string {
  return incoming !== undefined && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID()
}

export function requestId () {
  return async function assignRequestId (ctx: Context, next: Next): Promise<void> {
    const id = chooseRequestId(ctx.get(REQUEST_ID_HEADER) || undefined)
    ctx.state.requestId = id
    ctx.set(REQUEST_ID_HEADER, id)
    await next()
  }
}

/**
 * The logger for this request: `base` with the request id. Made on first use and kept on the
 * context, so requests that log nothing (nearly all) pay for no child logger.
 */
export function requestLog (ctx: Context, base: Logger): Logger {
  const state = ctx.state as { requestId?: string, log?: Logger }
  if (state.log === undefined) state.log = state.requestId !== undefined ? base.child({ reqId: state.requestId }) : base
  return state.log
}
