/** POST /api/tx on its own: the edge threads (src/api/edge) serve it without the rest of the chain routes. */
import type { Context } from 'koa'
import { plainTransaction, type Transaction } from '../../chain/index.js'
import type { SubmitResult } from '../../node/index.js'
import { route, type AnyRoute } from '../route.js'
import { ErrorSchema, SubmitResponseSchema, TransactionSchema } from '../schemas.js'

/** POST /api/tx, declared once: the node serves it, and so does every HTTP edge thread (src/api/edge), with its own `submit`. */
export function submitTxRoute (submit: (tx: Transaction, ctx: Context) => Promise<SubmitResult>): AnyRoute {
  return route({
    method: 'post',
    path: '/api/tx',
    tag: 'chain',
    summary: 'Submit a signed transaction',
    body: TransactionSchema,
    plainBody: plainTransaction,
    write: true,
    responses: {
      200: { description: 'accepted: persisted in the mempool and will be confirmed in a block', schema: SubmitResponseSchema },
      400: { description: 'rejected; the message mentions `signature` or `timestamp` for those faults', schema: ErrorSchema },
      401: { description: 'token required', schema: ErrorSchema },
      413: { description: 'body too large', schema: ErrorSchema },
      429: { description: 'rate limited', schema: ErrorSchema },
      503: { description: 'mempool full', schema: ErrorSchema }
    },
    handler: async ({ body, ctx }) => await submit(body, ctx)
  })
}
