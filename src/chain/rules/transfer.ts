import { z } from 'zod'
import { KithError } from '../../errors/index.js'
import { credit, debit, mint } from '../ledger.js'
import { MIN_FEE } from '../limits.js'
import { defineRule } from './types.js'

export const transferRule = defineRule({
  payload: z.object({ memo: z.string().refine((m) => [...m].length <= 1024, 'must be at most 1024 characters').optional() }),
  minFee: MIN_FEE,
  clientSubmittable: true,
  check (tx) {
    if (tx.to === '') throw new KithError('TX_BAD_FIELD', 'TRANSFER needs a recipient in `to`')
    if (tx.amount <= 0) throw new KithError('TX_BAD_FIELD', 'TRANSFER amount must be greater than 0')
  },
  apply ({ tx, state }) {
    debit(state, tx.from, tx.amount, `amount ${tx.amount} µT plus fee ${tx.fee} µT`)
    credit(state, tx.to, tx.amount)
  }
})

/** Minted by the proposer as the first transaction of a block that carries others. */
export const blockRewardRule = defineRule({
  payload: z.object({}),
  minFee: 0,
  clientSubmittable: false,
  check (tx) {
    if (tx.fee !== 0) throw new KithError('BLOCK_INVALID', 'BLOCK_REWARD carries no fee')
  },
  apply ({ tx, state, block }) {
    if (tx.from !== block.proposer) throw new KithError('BLOCK_INVALID', 'BLOCK_REWARD must come from the block proposer')
    if (tx.amount !== block.params.block_reward_ut) {
      throw new KithError('BLOCK_INVALID', `BLOCK_REWARD amount must be ${block.params.block_reward_ut} µT`)
    }
    mint(state, tx.to === '' ? tx.from : tx.to, tx.amount)
  }
})
