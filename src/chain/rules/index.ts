/** The table of transaction types this node accepts, keyed by type. */
import type { TxType } from '../tx.js'
import type { TxRule } from './types.js'
import { stakeRule, unstakeRule } from './staking.js'
import { blockRewardRule, transferRule } from './transfer.js'

export const TX_RULES: Partial<Record<TxType, TxRule<unknown>>> = {
  TRANSFER: transferRule,
  BLOCK_REWARD: blockRewardRule,
  STAKE: stakeRule,
  UNSTAKE: unstakeRule
}

export type { BlockContext, TxContext, TxRule } from './types.js'
