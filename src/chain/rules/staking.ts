/**
 * STAKE and UNSTAKE: voting power in a permissioned network. Only identities listed in the
 * genesis (its validators and its `candidates`) may stake. A validator's power is its genesis
 * power plus one unit per POWER_UNIT_UT staked. A change made in block h takes effect at height
 * h + VALSET_DELAY, so every node switches sets at the same height.
 */
import { z } from 'zod'
import { KithError } from '../../errors/index.js'
import { credit, debit } from '../ledger.js'
import { MIN_FEE, POWER_UNIT_UT, VALSET_DELAY } from '../limits.js'
import { StateKeys, type StateOverlay, type StateValue } from '../state.js'
import { validatorSetAt, type ValidatorEntry, type ValidatorSetState } from '../validators.js'
import { defineRule, type TxContext } from './types.js'

function stakeOf (state: StateOverlay, pubkey: string): number {
  return state.getNumber(StateKeys.stake(pubkey))
}

/** Recomputes the set from stakes and schedules it for height + VALSET_DELAY. */
function schedule (ctx: TxContext<unknown>, changed: string, stake: number): void {
  const current = ctx.state.get(StateKeys.valset) as unknown as ValidatorSetState
  const base = current.base.find((v) => v.pub_key === changed)
  if (base === undefined) throw new KithError('TX_NOT_ALLOWED', 'only identities listed in the genesis may stake')
  const active = validatorSetAt(current, ctx.block.height)
  const effective = ctx.block.height + VALSET_DELAY
  const from = current.pending !== null && current.pending.height === effective ? current.pending.validators : validatorSetAt(current, effective)
  const next: ValidatorEntry[] = current.base
    .map((b) => {
      if (b.pub_key !== changed) return from.find((v) => v.pub_key === b.pub_key) ?? { ...b, power: 0 }
      return { ...b, power: b.power + Math.floor(stake / POWER_UNIT_UT) }
    })
    .filter((v) => v.power > 0)
  if (next.length === 0) throw new KithError('TX_NOT_ALLOWED', 'the validator set would be empty')
  const updated: ValidatorSetState = { base: current.base, active, pending: { height: effective, validators: next } }
  ctx.state.set(StateKeys.valset, updated as unknown as StateValue)
}

export const stakeRule = defineRule({
  payload: z.object({}),
  minFee: MIN_FEE,
  clientSubmittable: true,
  check (tx) {
    if (tx.to !== '') throw new KithError('TX_BAD_FIELD', 'STAKE takes no recipient (`to` must be empty)')
    if (tx.amount <= 0) throw new KithError('TX_BAD_FIELD', 'STAKE amount must be greater than 0')
  },
  apply (ctx) {
    const { tx, state } = ctx
    debit(state, tx.from, tx.amount, `stake ${tx.amount} µT plus fee ${tx.fee} µT`)
    const stake = stakeOf(state, tx.from) + tx.amount
    state.set(StateKeys.stake(tx.from), stake)
    schedule(ctx, tx.from, stake)
  }
})

export const unstakeRule = defineRule({
  payload: z.object({}),
  minFee: MIN_FEE,
  clientSubmittable: true,
  check (tx) {
    if (tx.to !== '') throw new KithError('TX_BAD_FIELD', 'UNSTAKE takes no recipient (`to` must be empty)')
    if (tx.amount <= 0) throw new KithError('TX_BAD_FIELD', 'UNSTAKE amount must be greater than 0')
  },
  apply (ctx) {
    const { tx, state } = ctx
    const staked = stakeOf(state, tx.from)
    if (tx.amount > staked) throw new KithError('TX_CONFLICT', `UNSTAKE of ${tx.amount} µT exceeds the ${staked} µT staked`)
    const stake = staked - tx.amount
    if (stake === 0) state.delete(StateKeys.stake(tx.from))
    else state.set(StateKeys.stake(tx.from), stake)
    schedule(ctx, tx.from, stake)
    credit(state, tx.from, tx.amount)
  }
})
