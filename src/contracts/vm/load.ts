/** What both VMs do the same way before a call: load binaryen once, check the input's bounds. */
import { KithError } from '../../errors/index.js'
import { GAS, MAX_GAS_LIMIT } from './limits.js'
import type { BinaryenApi } from './prepare.js'
import type { CallInput } from './types.js'

/** binaryen.js is ~10 MB of JS: imported once per process, on first use, off the module graph. */
export async function loadBinaryen (): Promise<BinaryenApi> {
  return (await import('binaryen')).default
}

export function checkCallInput (input: CallInput): void {
  if (!Number.isSafeInteger(input.gasLimit) || input.gasLimit < 0 || input.gasLimit > MAX_GAS_LIMIT) {
    throw new KithError('TX_INVALID', `gas limit must be an integer from 0 to ${MAX_GAS_LIMIT}`)
  }
  if (!Number.isSafeInteger(input.callBaseGas) || input.callBaseGas < GAS.callBase) {
    throw new KithError('TX_INVALID', `callBaseGas must be an integer of at least ${GAS.callBase}`)
  }
  for (const [name, v] of [['amount', input.amount], ['balance', input.balance], ['blockHeight', input.blockHeight]] as const) {
    if (!Number.isSafeInteger(v) || v < 0) throw new KithError('TX_INVALID', `${name} must be a non-negative integer`)
  }
}
