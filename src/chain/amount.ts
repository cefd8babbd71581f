/** µT amounts: integers; 1 T = 1,000,000 µT. */
export const MICRO_PER_TOKEN = 1_000_000

/** Display form of a µT amount, e.g. 1500000 -> "1.5 T", 1000 -> "0.001 T". */
export function formatAmount (ut: number): string {
  const whole = Math.trunc(ut / MICRO_PER_TOKEN)
  const frac = ut % MICRO_PER_TOKEN
  if (frac === 0) return `${whole} T`
  return `${whole}.${String(frac).padStart(6, '0').replace(/0+$/, '')} T`
}
