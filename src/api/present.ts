/** Turns the node's records into the wire shapes of the spec (display amounts, addresses, ISO times). */
import { addressOf, contractIdFor, decodePayload, formatAmount, TX_RULES, type Transaction } from '../chain/index.js'
import type { TxLookup } from '../node/index.js'

export function isoTime (ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z')
}

export function presentTx ({ tx, block, call }: TxLookup): Record<string, unknown> {
  const detail: Record<string, unknown> = {
    id: tx.id,
    type: tx.type,
    status: block === undefined ? 'pending' : 'confirmed',
    ...(tx.memo !== undefined ? { memo: tx.memo } : {}),
    from: tx.from,
    from_addr: addressOf(tx.from),
    ...(tx.to !== '' ? { to: tx.to, to_addr: addressOf(tx.to) } : {}),
    amount_ut: tx.amount,
    amount: formatAmount(tx.amount),
    fee_ut: tx.fee,
    fee: formatAmount(tx.fee),
    time: tx.timestamp,
    ...(block !== undefined ? { block_index: block.height, block_hash: block.hash, block_time: isoTime(block.time) } : {}),
    ...(call !== undefined
      ? {
          gas_used: call.gas_used,
          call_result: { ok: call.ok, gas_used: call.gas_used, gas_cost_ut: call.gas_cost_ut, ...(call.error !== undefined ? { error: call.error } : {}), ...(call.return_b64 !== undefined ? { return_b64: call.return_b64 } : {}) }
        }
      : {}),
    ...(tx.type === 'DEPLOY_CONTRACT' ? { contract_id: contractIdFor(tx.id) } : {}),
    ...presentPayload(tx),
    signature_hex: Buffer.from(tx.signature, 'base64').toString('hex')
  }
  return detail
}

function presentPayload (tx: Transaction): { payload: unknown } | { payload_hex: string } {
  if (TX_RULES[tx.type] !== undefined) {
    try {
      return { payload: decodePayload(tx) }
    } catch {
      // not JSON: fall through to the raw bytes
    }
  }
  return { payload_hex: Buffer.from(tx.payload, 'base64').toString('hex') }
}

export function presentAddressTx ({ tx, block }: TxLookup): Record<string, unknown> {
  return {
    id: tx.id,
    type: tx.type,
    from: tx.from,
    ...(tx.to !== '' ? { to: tx.to } : {}),
    amount_ut: tx.amount,
    fee_ut: tx.fee,
    time: tx.timestamp,
    block_index: block?.height ?? 0
  }
}
