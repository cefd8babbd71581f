import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import {
  GenesisSchema, POWER_UNIT_UT, StateKeys, StateOverlay, VALSET_DELAY, applyTx, checkStateless, encodePayload, formatTimestamp,
  genesisState, signTx, validatorSetAt, type BlockContext, type Transaction, type ValidatorSetState
} from '../../../src/chain/index.js'
import type { KeyPair } from '../../../src/crypto/index.js'
import { ALICE, BOB, CAROL, VALIDATOR, aliceKey, assertKithError, bobKey, carolKey } from '../../helpers/fixtures.js'

const T = Date.parse('2026-01-02T03:04:05Z')
const genesis = GenesisSchema.parse({
  chain_id: 'stake',
  genesis_time: '2026-01-01T00:00:00Z',
  validators: [{ pub_key: VALIDATOR, power: 1 }, { pub_key: ALICE, power: 1 }],
  candidates: [BOB],
  alloc: [{ pub_key: ALICE, amount_ut: 10 * POWER_UNIT_UT }, { pub_key: BOB, amount_ut: 10 * POWER_UNIT_UT }, { pub_key: CAROL, amount_ut: 10 * POWER_UNIT_UT }]
})

function ctx (height: number): BlockContext {
  return { height, time: T, proposer: VALIDATOR, params: genesis.params }
}

let n = 0
function stakeTx (key: KeyPair, type: 'STAKE' | 'UNSTAKE', amount: number): Transaction {
  n += 1
  return signTx({ id: `s-${n}`, type, from: Buffer.from(key.publicKey).toString('hex'), to: '', amount, fee: 1000, payload: encodePayload({}), timestamp: formatTimestamp(T) }, key.secretKey)
}

function setAt (state: StateOverlay, height: number): Record<string, number> {
  const valset = state.get(StateKeys.valset) as unknown as ValidatorSetState
  return Object.fromEntries(validatorSetAt(valset, height).map((v) => [v.pub_key, v.power]))
}

describe('STAKE and UNSTAKE', () => {
  test('a candidate that stakes joins the set VALSET_DELAY heights later; a genesis validator gains power', () => {
    const state = new StateOverlay(genesisState(genesis).state)
    applyTx(state, checkStateless(stakeTx(bobKey, 'STAKE', 2 * POWER_UNIT_UT)), ctx(5))
    applyTx(state, checkStateless(stakeTx(aliceKey, 'STAKE', 3 * POWER_UNIT_UT)), ctx(5))
    assert.deepEqual(setAt(state, 5 + VALSET_DELAY - 1), { [VALIDATOR]: 1, [ALICE]: 1 })
    assert.deepEqual(setAt(state, 5 + VALSET_DELAY), { [VALIDATOR]: 1, [ALICE]: 4, [BOB]: 2 })
    assert.equal(state.getNumber(StateKeys.stake(BOB)), 2 * POWER_UNIT_UT)
    assert.equal(state.getNumber(StateKeys.balance(BOB)), 8 * POWER_UNIT_UT - 1000)
  })

  test('UNSTAKE returns the µT and removes the power at the delay; more than staked is refused', () => {
    const state = new StateOverlay(genesisState(genesis).state)
    applyTx(state, checkStateless(stakeTx(bobKey, 'STAKE', 2 * POWER_UNIT_UT)), ctx(1))
    assertKithError(() => applyTx(state.child(), checkStateless(stakeTx(bobKey, 'UNSTAKE', 3 * POWER_UNIT_UT)), ctx(10)), 'TX_CONFLICT', 'exceeds')
    applyTx(state, checkStateless(stakeTx(bobKey, 'UNSTAKE', 2 * POWER_UNIT_UT)), ctx(10))
    assert.equal(setAt(state, 11)[BOB], 2)
    assert.equal(setAt(state, 12)[BOB], undefined)
    assert.equal(state.getNumber(StateKeys.balance(BOB)), 10 * POWER_UNIT_UT - 2000)
  })

  test('an identity the genesis does not list cannot stake', () => {
    const state = new StateOverlay(genesisState(genesis).state)
    assertKithError(() => applyTx(state, checkStateless(stakeTx(carolKey, 'STAKE', POWER_UNIT_UT)), ctx(1)), 'TX_NOT_ALLOWED', 'genesis')
  })

  test('stateless rules: positive amount, no recipient', () => {
    assertKithError(() => checkStateless(stakeTx(bobKey, 'STAKE', 0)), 'TX_BAD_FIELD', 'greater than 0')
    const withTo = signTx({ ...stakeTx(bobKey, 'STAKE', 5), to: ALICE }, bobKey.secretKey)
    assertKithError(() => checkStateless(withTo), 'TX_BAD_FIELD', 'recipient')
  })
})
