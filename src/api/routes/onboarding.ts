/**
 * Onboarding (the spec's `onboarding_api` feature): a new app user asks for just enough µT to
 * pay its first fees (REGISTER_KEY, LINK_DEVICE). The node pays it from an operator-funded
 * account named in the config, at most once per client IP and per key within the configured
 * intervals, and answers 503 when the operator turned it off or the account cannot pay.
 */
import { z } from 'zod'
import { addressOf, resolveAccount } from '../../chain/index.js'
import { transfer, type Account } from '../../client/index.js'
import { KithError } from '../../errors/index.js'
import type { ChainView } from '../../node/index.js'
import { route, type AnyRoute } from '../route.js'
import { ErrorSchema } from '../schemas.js'

export interface OnboardingOptions {
  /** undefined when the operator turned onboarding off */
  faucet: Account | undefined
  amountUt: number
  perIpIntervalMs: number
  perKeyIntervalMs: number
  now: () => number
}

/** Remembers when each key last claimed; forgets entries older than the interval. */
class ClaimLog {
  private readonly last = new Map<string, number>()

  constructor (private readonly intervalMs: number) {}

  allowed (key: string, now: number): boolean {
    const at = this.last.get(key)
    return at === undefined || now - at >= this.intervalMs
  }

  record (key: string, now: number): void {
    this.last.set(key, now)
    if (this.last.size > 100_000) {
      for (const [k, at] of this.last) if (now - at >= this.intervalMs) this.last.delete(k)
    }
  }
}

export const OnboardingResponseSchema = z.object({
  pub_key: z.string(),
  address: z.string(),
  amount_ut: z.number().int(),
  tx_id: z.string(),
  status: z.literal('accepted')
}).meta({ id: 'OnboardingGrant' })

export function onboardingRoutes (node: ChainView, opts: OnboardingOptions): AnyRoute[] {
  const byIp = new ClaimLog(opts.perIpIntervalMs)
  const byKey = new ClaimLog(opts.perKeyIntervalMs)
  return [route({
    method: 'post',
    path: '/api/onboarding/claim',
    tag: 'identity',
    summary: 'Fund a new key with just enough µT to register (once per IP and per key per interval)',
    body: z.object({ pub_key: z.string().min(1).max(128).meta({ description: 'Ed25519 pubkey or address to fund' }) }),
    responses: {
      200: { description: 'the funding transfer was accepted', schema: OnboardingResponseSchema },
      400: { description: 'not a pubkey, or already funded', schema: ErrorSchema },
      429: { description: 'this IP or key claimed recently', schema: ErrorSchema },
      503: { description: 'onboarding is off, or its account cannot pay', schema: ErrorSchema }
    },
    handler: async ({ body, ctx }) => {
      if (opts.faucet === undefined) throw new KithError('UNAVAILABLE', 'onboarding is turned off on this node')
      const pub = resolveAccount(body.pub_key)
      if (pub === undefined) throw new KithError('BAD_REQUEST', `pub_key ${body.pub_key} is neither an Ed25519 pubkey nor a kith address`)
      if (node.balance(pub) >= opts.amountUt) throw new KithError('BAD_REQUEST', 'this key already holds enough to register; onboarding funds only new keys')
      const now = opts.now()
      if (!byKey.allowed(pub, now)) throw new KithError('RATE_LIMITED', 'this key was funded recently; try again later')
      if (!byIp.allowed(ctx.ip, now)) throw new KithError('RATE_LIMITED', 'onboarding allows one claim per client address per interval; try again later')
      if (node.balance(opts.faucet.pub) < opts.amountUt + 1000) throw new KithError('UNAVAILABLE', 'the onboarding account is empty; ask the node operator')
      const tx = transfer(opts.faucet, pub, opts.amountUt, { time: now })
      try {
        await node.submitTx(tx)
      } catch (err) {
        if (err instanceof KithError && err.code === 'TX_INSUFFICIENT_FUNDS') throw new KithError('UNAVAILABLE', 'the onboarding account is empty; ask the node operator')
        throw err
      }
      byIp.record(ctx.ip, now)
      byKey.record(pub, now)
      return { pub_key: pub, address: addressOf(pub), amount_ut: opts.amountUt, tx_id: tx.id, status: 'accepted' as const }
    }
  })]
}
