/**
 * Amounts on the command line. `1.5` or `1.5T` is tokens (up to six decimals); `1500ut`,
 * `1500uT` or `1500µT` is micro-tokens, a whole number. 1 T = 1,000,000 µT (docs/protocol.md §8).
 */
import { formatAmount } from '../../chain/index.js'
import { CliError } from './errors.js'

export const MICRO_PER_T = 1_000_000
const TOKENS_RE = /^(\d+)(?:\.(\d{1,6}))?\s*t?$/i
const MICRO_RE = /^(\d+)\s*(?:ut|µt)$/i

export function parseAmount (text: string): number {
  const value = text.trim()
  let ut: number
  const micro = MICRO_RE.exec(value)
  const tokens = TOKENS_RE.exec(value)
  if (micro !== null) {
    ut = Number(micro[1])
  } else if (tokens !== null) {
    ut = Number(tokens[1]) * MICRO_PER_T + Number((tokens[2] ?? '').padEnd(6, '0'))
  } else {
    throw new CliError('BAD_AMOUNT', `amount "${text}" is neither tokens (e.g. 1.5 or 1.5T, at most six decimals) nor micro-tokens (e.g. 1500ut)`)
  }
  if (!Number.isSafeInteger(ut)) throw new CliError('BAD_AMOUNT', `amount "${text}" is larger than 2^53-1 µT`)
  if (ut <= 0) throw new CliError('BAD_AMOUNT', `amount "${text}" must be more than zero`)
  return ut
}

/** `1.5 T (1500000 µT)` */
export function showAmount (ut: number): string {
  return `${formatAmount(ut)} (${ut} µT)`
}
