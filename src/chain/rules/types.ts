import type { z } from 'zod'
import type { ContractExecutor } from '../contract-state.js'
import type { ChainParams } from '../genesis.js'
import type { StateOverlay } from '../state.js'
import type { Transaction } from '../tx.js'

export interface BlockContext {
  height: number
  /** unix ms */
  time: number
  /** pubkey of the block's proposer; '' when checking admission to the mempool */
  proposer: string
  params: ChainParams
  /** runs contract code; needed to apply DEPLOY_CONTRACT and CALL_CONTRACT */
  contracts?: ContractExecutor
  /**
   * Gas the block's calls and deploys have used so far, and the code hashes whose compile a call
   * already counted (absent at admission, where calls are not run).
   */
  gas?: BlockGas
}

export interface BlockGas {
  used: number
  compiled: Set<string>
}

/** A block's gas account before its first transaction. */
export const newBlockGas = (): BlockGas => ({ used: 0, compiled: new Set() })

export interface TxContext<P> {
  tx: Transaction
  payload: P
  state: StateOverlay
  block: BlockContext
}

/**
 * Everything the chain knows about one transaction type. Adding a type means adding one
 * entry to the table in rules/index.ts, not branches elsewhere.
 */
export interface TxRule<P> {
  /** schema of the decoded JSON payload; unknown members are ignored */
  payload: z.ZodType<P>
  minFee: number
  /** false for types only the node itself creates (BLOCK_REWARD) */
  clientSubmittable: boolean
  /** checks that depend on the transaction alone; throw KithError */
  check?: (tx: Transaction, payload: P) => void
  /** who receives the fee; the block proposer when absent */
  feeRecipient?: (ctx: TxContext<P>) => string
  /** state changes beyond the fee; throw KithError when the state forbids the transaction */
  apply: (ctx: TxContext<P>) => void
}

/** Erases a rule's payload type so rules of every type fit in one table. */
export function defineRule<P> (rule: TxRule<P>): TxRule<unknown> {
  return rule as unknown as TxRule<unknown>
}
