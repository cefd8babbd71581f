/**
 * The state transition over MemoryState/StateOverlay: balances, fees, duplicates, the block-time
 * window, BLOCK_REWARD, whole-block execution, proposer-side selection, state roots and genesis.
 */
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import {
  ContractKeys, GenesisSchema, MemoryState, StateKeys, StateOverlay, applyTx, blockHash, canonicalJson, checkStateless, commitHash,
  MAX_BLOCK_BYTES, MAX_BLOCK_TXS, StateHash, encodePayload, executeBlock, formatTimestamp, genesisHash, genesisState, nextStateRoot, selectBlockTxs, signTx, tryApplyTx, txSize,
  txRoot, type Block, type BlockContext, type ChainParams, type CheckedTx, type Commit, type Genesis, type StateReader,
  type Transaction, type WriteSet
} from '../../../src/chain/index.js'
import { sign, toBase64, toHex, type KeyPair } from '../../../src/crypto/index.js'
import { KithError } from '../../../src/errors/index.js'
import { voteSignBytes } from '../../../src/consensus/index.js'
import { seeded, aliceKey, bobKey, carolKey, validatorKey, ALICE, BOB, CAROL, VALIDATOR, assertKithError } from '../../helpers/fixtures.js'


const CHAIN_ID = 'kith-test'
const PARAMS: ChainParams = { block_reward_ut: 5000, max_block_txs: 100, gas_price: 1 }
const T = Date.parse('2026-01-02T03:04:05Z')
const MINUTE = 60_000
const HOUR = 60 * MINUTE

const GENESIS: Genesis = GenesisSchema.parse({
  chain_id: CHAIN_ID,
  genesis_time: '2026-01-01T00:00:00Z',
  params: PARAMS,
  validators: [{ pub_key: VALIDATOR, power: 1, name: 'v0' }],
  alloc: [{ pub_key: ALICE, amount_ut: 10_000_000 }, { pub_key: BOB, amount_ut: 2_000 }]
})

const CTX: BlockContext = { height: 1, time: T, proposer: VALIDATOR, params: PARAMS }

let nextId = 0
function makeTx (key: KeyPair, over: Partial<Omit<Transaction, 'signature' | 'from'>> = {}): Transaction {
  nextId += 1
  return signTx({
    id: `tx-${nextId}`,
    type: 'TRANSFER',
    from: toHex(key.publicKey),
    to: BOB,
    amount: 1_000_000,
    fee: 1000,
    payload: encodePayload({}),
    timestamp: formatTimestamp(T),
    ...over
  }, key.secretKey)
}

function transfer (key: KeyPair, to: string, amount: number, over: Partial<Omit<Transaction, 'signature' | 'from'>> = {}): CheckedTx {
  return checkStateless(makeTx(key, { to, amount, ...over }))
}

function reward (over: Partial<Omit<Transaction, 'signature' | 'from'>> = {}, key: KeyPair = validatorKey, height = 1): CheckedTx {
  return checkStateless(makeTx(key, {
    id: `reward-${height}`, type: 'BLOCK_REWARD', to: '', amount: PARAMS.block_reward_ut, fee: 0, ...over
  }))
}

function fresh (): { base: MemoryState, root: string, overlay: StateOverlay } {
  const { state, stateRoot } = genesisState(GENESIS)
  return { base: state, root: stateRoot, overlay: new StateOverlay(state) }
}

function bal (state: StateReader, pubkey: string): number {
  const value = state.get(StateKeys.balance(pubkey))
  return typeof value === 'number' ? value : 0
}

function num (state: StateReader, key: string): number {
  const value = state.get(key)
  return typeof value === 'number' ? value : 0
}

/** Builds a block the way a proposer does: select, then fill the header from the selection. */
function proposeBlock (state: StateReader, candidates: CheckedTx[], opts: {
  ctx?: BlockContext
  prevHash?: string
  prevStateRoot: string
  lastCommit?: Commit | null
}): { block: Block, writes: WriteSet, stateRoot: string, rejected: Array<{ tx: Transaction, error: KithError }> } {
  const ctx = opts.ctx ?? CTX
  const selection = selectBlockTxs(state, candidates, ctx, opts.prevStateRoot)
  const lastCommit = opts.lastCommit ?? null
  const block: Block = {
    header: {
      chain_id: CHAIN_ID,
      height: ctx.height,
      time: ctx.time,
      prev_hash: opts.prevHash ?? genesisHash(GENESIS),
      tx_root: txRoot(selection.included),
      state_root: selection.stateRoot,
      proposer: ctx.proposer,
      last_commit_hash: commitHash(lastCommit)
    },
    txs: selection.included,
    last_commit: lastCommit
  }
  return { block, writes: selection.writes, stateRoot: selection.stateRoot, rejected: selection.rejected }
}

function execOpts (prevStateRoot: string, prevHash = genesisHash(GENESIS)): { params: ChainParams, chainId: string, prevHash: string, prevStateRoot: string } {
  return { params: PARAMS, chainId: CHAIN_ID, prevHash, prevStateRoot }
}

describe('applyTx', () => {
  test('moves the amount and routes the fee to the block proposer', () => {
    const { overlay } = fresh()
    applyTx(overlay, transfer(aliceKey, CAROL, 1_500_000, { fee: 2500 }), CTX)
    assert.equal(bal(overlay, ALICE), 10_000_000 - 1_500_000 - 2500)
    assert.equal(bal(overlay, CAROL), 1_500_000)
    assert.equal(bal(overlay, VALIDATOR), 2500)
    assert.equal(num(overlay, StateKeys.supply), 10_002_000, 'a transfer neither mints nor burns')
    assert.equal(num(overlay, StateKeys.totalTxs), 1)
  })

  test('records the id as seen at the block height', () => {
    const { overlay } = fresh()
    const checked = transfer(aliceKey, CAROL, 10)
    applyTx(overlay, checked, { ...CTX, height: 7 })
    assert.equal(overlay.get(StateKeys.txSeen(checked.tx.id)), 7)
  })

  test('writes only to the overlay, never to its base', () => {
    const { base, overlay } = fresh()
    const before = new Map(base.data)
    applyTx(overlay, transfer(aliceKey, CAROL, 10), CTX)
    assert.deepEqual(base.data, before)
    assert.ok(overlay.writes.size > 0)
  })

  test('a transfer to oneself only costs the fee', () => {
    const { overlay } = fresh()
    applyTx(overlay, transfer(aliceKey, ALICE, 5_000_000), CTX)
    assert.equal(bal(overlay, ALICE), 10_000_000 - 1000)
  })

  test('the proposer paying itself a fee gets it back', () => {
    const { base, overlay } = fresh()
    base.data.set(StateKeys.balance(VALIDATOR), 3000)
    applyTx(overlay, transfer(validatorKey, CAROL, 1000), CTX)
    assert.equal(bal(overlay, VALIDATOR), 2000)
    assert.equal(bal(overlay, CAROL), 1000)
  })

  test('with no proposer (mempool admission) the fee is debited and credited to nobody', () => {
    const { overlay } = fresh()
    applyTx(overlay, transfer(aliceKey, CAROL, 10), { ...CTX, proposer: '' })
    assert.equal(bal(overlay, ALICE), 10_000_000 - 10 - 1000)
    assert.equal(overlay.writes.has(StateKeys.balance('')), false)
  })

  test('the balance may reach exactly 0', () => {
    const { overlay } = fresh()
    applyTx(overlay, transfer(bobKey, CAROL, 1000), CTX)
    assert.equal(bal(overlay, BOB), 0)
    assert.equal(bal(overlay, CAROL), 1000)
  })

  const insufficient: Array<[string, KeyPair, number, number]> = [
    ['amount + fee exceeds the balance by 1', bobKey, 1001, 1000],
    ['the fee alone exceeds the balance', bobKey, 1, 2001],
    ['amount alone exceeds the balance', aliceKey, 10_000_001, 1000],
    ['an account with no balance', carolKey, 1, 1000]
  ]
  for (const [name, key, amount, fee] of insufficient) {
    test(`${name} -> TX_INSUFFICIENT_FUNDS, and tryApplyTx leaves no writes`, () => {
      const { overlay } = fresh()
      const checked = transfer(key, ALICE, amount, { fee })
      const error = tryApplyTx(overlay, checked, CTX)
      assert.ok(error instanceof KithError)
      assert.equal(error.code, 'TX_INSUFFICIENT_FUNDS')
      assert.equal(overlay.writes.size, 0)
      assertKithError(() => applyTx(new StateOverlay(overlay), checked, CTX), 'TX_INSUFFICIENT_FUNDS')
    })
  }

  test('tryApplyTx keeps the writes of a transaction that applies', () => {
    const { overlay } = fresh()
    assert.equal(tryApplyTx(overlay, transfer(aliceKey, CAROL, 10), CTX), undefined)
    assert.equal(bal(overlay, CAROL), 10)
  })

  test('a failure after earlier writes leaves no partial writes (fee debited before the amount fails)', () => {
    const { overlay } = fresh()
    // Bob can pay the fee (2000 >= 1000) but not fee + amount.
    const error = tryApplyTx(overlay, transfer(bobKey, CAROL, 1500), CTX)
    assert.equal(error?.code, 'TX_INSUFFICIENT_FUNDS')
    assert.equal(overlay.writes.size, 0)
    assert.equal(bal(overlay, BOB), 2000)
    assert.equal(bal(overlay, VALIDATOR), 0)
  })

  test('a duplicate id -> TX_DUPLICATE, even with different content', () => {
    const { overlay } = fresh()
    const first = transfer(aliceKey, CAROL, 10, { id: 'tx-dup' })
    applyTx(overlay, first, CTX)
    assertKithError(() => applyTx(overlay, first, CTX), 'TX_DUPLICATE')
    assertKithError(() => applyTx(overlay, transfer(bobKey, ALICE, 5, { id: 'tx-dup' }), { ...CTX, height: 99 }), 'TX_DUPLICATE')
    assert.equal(tryApplyTx(overlay, first, CTX)?.code, 'TX_DUPLICATE')
  })

  test('an id committed in the base state -> TX_DUPLICATE', () => {
    const { base, overlay } = fresh()
    base.data.set(StateKeys.txSeen('tx-old'), 3)
    assertKithError(() => applyTx(overlay, transfer(aliceKey, CAROL, 10, { id: 'tx-old' }), CTX), 'TX_DUPLICATE')
  })

  const window: Array<[string, number, boolean]> = [
    ['at block time', T, true],
    ['exactly 5 minutes ahead', T + 5 * MINUTE, true],
    ['5 minutes and 1 second ahead', T + 5 * MINUTE + 1000, false],
    ['1 hour ahead', T + HOUR, false],
    ['23 hours old', T - 23 * HOUR, true],
    ['exactly 24 hours old', T - 24 * HOUR, true],
    ['24 hours and 1 second old', T - 24 * HOUR - 1000, false],
    ['25 hours old', T - 25 * HOUR, false]
  ]
  for (const [name, time, ok] of window) {
    test(`timestamp ${name} at block time -> ${ok ? 'applies' : 'TX_BAD_TIMESTAMP'}`, () => {
      const { overlay } = fresh()
      const checked = transfer(aliceKey, CAROL, 10, { timestamp: formatTimestamp(time) })
      if (ok) applyTx(overlay, checked, CTX)
      else assertKithError(() => applyTx(overlay, checked, CTX), 'TX_BAD_TIMESTAMP', 'timestamp')
    })
  }

  test('block time, not a clock, decides: the same tx is valid in one block and not in another', () => {
    const checked = transfer(aliceKey, CAROL, 10, { timestamp: formatTimestamp(T) })
    applyTx(fresh().overlay, checked, { ...CTX, time: T + 24 * HOUR })
    assertKithError(() => applyTx(fresh().overlay, checked, { ...CTX, time: T + 25 * HOUR }), 'TX_BAD_TIMESTAMP')
    assertKithError(() => applyTx(fresh().overlay, checked, { ...CTX, time: T - 6 * MINUTE }), 'TX_BAD_TIMESTAMP')
  })
})

describe('BLOCK_REWARD', () => {
  test('from the proposer with the exact amount: mints to the proposer and raises supply', () => {
    const { overlay } = fresh()
    applyTx(overlay, reward(), CTX)
    assert.equal(bal(overlay, VALIDATOR), 5000)
    assert.equal(num(overlay, StateKeys.supply), 10_002_000 + 5000)
    assert.equal(num(overlay, StateKeys.totalTxs), 1)
  })

  test('with `to` set, mints to that account', () => {
    const { overlay } = fresh()
    applyTx(overlay, reward({ to: CAROL }), CTX)
    assert.equal(bal(overlay, CAROL), 5000)
    assert.equal(bal(overlay, VALIDATOR), 0)
    assert.equal(num(overlay, StateKeys.supply), 10_002_000 + 5000)
  })

  test('from anyone but the proposer -> BLOCK_INVALID, no writes', () => {
    const { overlay } = fresh()
    const error = tryApplyTx(overlay, reward({}, aliceKey), CTX)
    assert.equal(error?.code, 'BLOCK_INVALID')
    assert.match(error?.message ?? '', /proposer/)
    assert.equal(overlay.writes.size, 0)
  })

  for (const amount of [0, 4999, 5001, 1_000_000]) {
    test(`amount ${amount} instead of block_reward_ut 5000 -> BLOCK_INVALID`, () => {
      assertKithError(() => applyTx(fresh().overlay, reward({ amount }), CTX), 'BLOCK_INVALID', '5000')
    })
  }

  test('with a fee -> BLOCK_INVALID', () => {
    assertKithError(() => reward({ fee: 1000 }), 'BLOCK_INVALID')
  })
})

describe('executeBlock', () => {
  test('re-executes a proposed block to the same writes and state root', () => {
    const { base, root } = fresh()
    const proposed = proposeBlock(base, [reward(), transfer(aliceKey, CAROL, 100), transfer(aliceKey, BOB, 200)], { prevStateRoot: root })
    assert.equal(proposed.block.txs.length, 3)
    const result = executeBlock(base, proposed.block, execOpts(root))
    assert.equal(result.stateRoot, proposed.stateRoot)
    assert.equal(result.stateRoot, nextStateRoot(root, result.writes))
    assert.deepEqual(result.writes, proposed.writes)
    const after = new MemoryState()
    after.apply(new Map(base.data))
    after.apply(result.writes)
    assert.equal(bal(after, CAROL), 100)
    assert.equal(bal(after, BOB), 2200)
    assert.equal(bal(after, VALIDATOR), 5000 + 2000)
    assert.equal(num(after, StateKeys.supply), 10_002_000 + 5000)
    assert.equal(num(after, StateKeys.totalTxs), 3)
  })

  test('an empty block changes nothing and chains the state root over an empty write set', () => {
    const { base, root } = fresh()
    const proposed = proposeBlock(base, [], { prevStateRoot: root })
    const result = executeBlock(base, proposed.block, execOpts(root))
    assert.equal(result.writes.size, 0)
    assert.equal(result.stateRoot, nextStateRoot(root, new Map()))
    assert.notEqual(result.stateRoot, root)
    assert.equal(proposed.block.header.tx_root, createHash('sha256').digest('hex'))
  })

  test('a second block chains on the first: prev_hash, prev state root and last_commit', () => {
    const { base, root } = fresh()
    const first = proposeBlock(base, [transfer(aliceKey, CAROL, 100)], { prevStateRoot: root })
    const firstHash = blockHash(first.block.header)
    const one = executeBlock(base, first.block, execOpts(root))
    base.apply(one.writes)
    const commit: Commit = {
      height: 1,
      round: 0,
      block_hash: firstHash,
      signatures: [{ validator: VALIDATOR, signature: toBase64(sign(voteSignBytes(CHAIN_ID, { type: 'precommit', height: 1, round: 0, block_hash: firstHash }), validatorKey.secretKey)) }]
    }
    const ctx2 = { ...CTX, height: 2, time: T + 1000 }
    const second = proposeBlock(base, [transfer(carolKey, BOB, 50)], { ctx: ctx2, prevHash: firstHash, prevStateRoot: one.stateRoot, lastCommit: commit })
    const two = executeBlock(base, second.block, execOpts(one.stateRoot, firstHash))
    assert.equal(two.stateRoot, second.stateRoot)
    assert.equal(second.block.header.last_commit_hash, commitHash(commit))
    assertKithError(() => executeBlock(base, second.block, execOpts(one.stateRoot)), 'BLOCK_INVALID', 'does not extend')
    assertKithError(() => executeBlock(base, { ...second.block, last_commit: null }, execOpts(one.stateRoot, firstHash)), 'BLOCK_INVALID', 'last_commit_hash')
    assertKithError(() => executeBlock(base, second.block, execOpts(root, firstHash)), 'BLOCK_INVALID', 'state_root')
  })

  test('wrong prev_hash -> BLOCK_INVALID', () => {
    const { base, root } = fresh()
    const { block } = proposeBlock(base, [transfer(aliceKey, CAROL, 100)], { prevStateRoot: root, prevHash: 'ab'.repeat(32) })
    assertKithError(() => executeBlock(base, block, execOpts(root)), 'BLOCK_INVALID', 'does not extend')
  })

  test('wrong chain_id -> BLOCK_INVALID', () => {
    const { base, root } = fresh()
    const { block } = proposeBlock(base, [], { prevStateRoot: root })
    assertKithError(() => executeBlock(base, block, { ...execOpts(root), chainId: 'other-chain' }), 'BLOCK_INVALID', 'chain_id')
  })

  test('wrong tx_root -> BLOCK_INVALID', () => {
    const { base, root } = fresh()
    const { block } = proposeBlock(base, [transfer(aliceKey, CAROL, 100), transfer(aliceKey, BOB, 100)], { prevStateRoot: root })
    const swapped: Block = { ...block, txs: [...block.txs].reverse() }
    assertKithError(() => executeBlock(base, swapped, execOpts(root)), 'BLOCK_INVALID', 'tx_root')
    const memoChanged: Block = { ...block, txs: [{ ...(block.txs[0] as Transaction), memo: 'changed' }, block.txs[1] as Transaction] }
    assertKithError(() => executeBlock(base, memoChanged, execOpts(root)), 'BLOCK_INVALID', 'tx_root')
    const dropped: Block = { ...block, txs: block.txs.slice(1) }
    assertKithError(() => executeBlock(base, dropped, execOpts(root)), 'BLOCK_INVALID', 'tx_root')
  })

  test('wrong state_root -> BLOCK_INVALID', () => {
    const { base, root } = fresh()
    const { block } = proposeBlock(base, [transfer(aliceKey, CAROL, 100)], { prevStateRoot: root })
    const bad: Block = { ...block, header: { ...block.header, state_root: 'cd'.repeat(32) } }
    assertKithError(() => executeBlock(base, bad, execOpts(root)), 'BLOCK_INVALID', 'state_root')
    // the same block against another parent state root
    assertKithError(() => executeBlock(base, block, execOpts(nextStateRoot(root, new Map()))), 'BLOCK_INVALID', 'state_root')
  })

  test('wrong last_commit_hash -> BLOCK_INVALID', () => {
    const { base, root } = fresh()
    const { block } = proposeBlock(base, [], { prevStateRoot: root })
    const bad: Block = { ...block, header: { ...block.header, last_commit_hash: 'ef'.repeat(32) } }
    assertKithError(() => executeBlock(base, bad, execOpts(root)), 'BLOCK_INVALID', 'last_commit_hash')
  })

  test('more than max_block_txs -> BLOCK_INVALID', () => {
    const { base, root } = fresh()
    const { block } = proposeBlock(base, [transfer(aliceKey, CAROL, 1), transfer(aliceKey, CAROL, 2), transfer(aliceKey, CAROL, 3)], { prevStateRoot: root })
    assertKithError(() => executeBlock(base, block, { ...execOpts(root), params: { ...PARAMS, max_block_txs: 2, gas_price: 1 } }), 'BLOCK_INVALID', 'more than the 2')
  })

  test('an oversized proposal is refused by every validator: more than MAX_BLOCK_TXS, or more than MAX_BLOCK_BYTES', () => {
    const { base, root } = fresh()
    const header = (txs: Transaction[]): Block['header'] => ({
      chain_id: CHAIN_ID, height: 1, time: T, prev_hash: genesisHash(GENESIS), tx_root: txRoot(txs), state_root: '00'.repeat(32), proposer: VALIDATOR, last_commit_hash: ''
    })
    const many = Array.from({ length: MAX_BLOCK_TXS + 1 }, (_, i) => makeTx(aliceKey, { id: `bulk-${i}`, to: CAROL, amount: 1 }))
    // the genesis allows 20,000; the protocol bound is lower and wins
    const params = { ...PARAMS, max_block_txs: 20_000, gas_price: 1 }
    assertKithError(() => executeBlock(base, { header: header(many), txs: many, last_commit: null }, { ...execOpts(root), params }), 'BLOCK_INVALID', `more than the ${MAX_BLOCK_TXS}`)
    const payload = Buffer.alloc(192 * 1024, 7).toString('base64')
    const heavy = Array.from({ length: 9 }, (_, i) => makeTx(aliceKey, { id: `heavy-${i}`, to: CAROL, amount: 1, payload }))
    assert.ok(heavy.reduce((sum, tx) => sum + txSize(tx), 0) > MAX_BLOCK_BYTES)
    assertKithError(() => executeBlock(base, { header: header(heavy), txs: heavy, last_commit: null }, { ...execOpts(root), params }), 'BLOCK_INVALID', 'bytes')
  })

  test('the proposer ends its block early when the caller says it is full (its time budget), keeping admission order', () => {
    const { base } = fresh()
    const candidates = Array.from({ length: 300 }, (_, i) => transfer(aliceKey, CAROL, 1, { id: `budget-${i}` }))
    let asked = 0
    const selection = selectBlockTxs(base, candidates, { ...CTX, params: { ...PARAMS, max_block_txs: 20_000, gas_price: 1 } }, '', () => ++asked >= 2)
    assert.equal(selection.included.length, 127, 'asked every 64 transactions: full at the second question, before the 128th')
    assert.deepEqual(selection.included.map((tx) => tx.id), candidates.slice(0, 127).map((c) => c.tx.id))
  })

  test('the proposer stops at the byte bound and leaves the rest, in order, for the next block', () => {
    const { base } = fresh()
    const memo = 'm'.repeat(1024)
    const candidates = Array.from({ length: 1300 }, (_, i) => checkStateless(makeTx(aliceKey, { id: `fat-${i}`, to: CAROL, amount: 1, payload: encodePayload({ memo }), memo: 'n'.repeat(256) })))
    const selection = selectBlockTxs(base, candidates, { ...CTX, params: { ...PARAMS, max_block_txs: 20_000, gas_price: 1 } }, '')
    const bytes = selection.included.reduce((sum, tx) => sum + txSize(tx), 0)
    assert.ok(bytes <= MAX_BLOCK_BYTES, `${bytes} bytes`)
    assert.ok(bytes + txSize(candidates[selection.included.length].tx) > MAX_BLOCK_BYTES, 'the next one would not fit')
    assert.ok(selection.included.length < candidates.length)
    assert.deepEqual(selection.included.map((tx) => tx.id), candidates.slice(0, selection.included.length).map((c) => c.tx.id))
  })

  test('BLOCK_REWARD must be the first transaction', () => {
    const { base, root } = fresh()
    const txs = [transfer(aliceKey, CAROL, 100).tx, reward().tx]
    const block: Block = {
      header: {
        chain_id: CHAIN_ID, height: 1, time: T, prev_hash: genesisHash(GENESIS), tx_root: txRoot(txs), state_root: '00'.repeat(32),
        proposer: VALIDATOR, last_commit_hash: ''
      },
      txs,
      last_commit: null
    }
    assertKithError(() => executeBlock(base, block, execOpts(root)), 'BLOCK_INVALID', 'first')
  })

  test('a second BLOCK_REWARD in the same block -> rejected', () => {
    const { base, root } = fresh()
    const txs = [reward().tx, reward({ id: 'reward-1b' }).tx]
    const block: Block = {
      header: {
        chain_id: CHAIN_ID, height: 1, time: T, prev_hash: genesisHash(GENESIS), tx_root: txRoot(txs), state_root: '00'.repeat(32),
        proposer: VALIDATOR, last_commit_hash: ''
      },
      txs,
      last_commit: null
    }
    assertKithError(() => executeBlock(base, block, execOpts(root)), 'BLOCK_INVALID', 'first')
  })

  test('a BLOCK_REWARD claimed by a non-proposer header -> BLOCK_INVALID', () => {
    const { base, root } = fresh()
    const txs = [reward().tx, transfer(aliceKey, CAROL, 1).tx]
    const block: Block = {
      header: {
        chain_id: CHAIN_ID, height: 1, time: T, prev_hash: genesisHash(GENESIS), tx_root: txRoot(txs), state_root: '00'.repeat(32),
        proposer: ALICE, last_commit_hash: ''
      },
      txs,
      last_commit: null
    }
    assertKithError(() => executeBlock(base, block, execOpts(root)), 'BLOCK_INVALID', 'proposer')
  })

  test('one transaction that does not apply rejects the whole block with its code', () => {
    const { base, root } = fresh()
    const txs = [transfer(aliceKey, CAROL, 100).tx, transfer(bobKey, CAROL, 5000).tx]
    const block: Block = {
      header: {
        chain_id: CHAIN_ID, height: 1, time: T, prev_hash: genesisHash(GENESIS), tx_root: txRoot(txs), state_root: '00'.repeat(32),
        proposer: VALIDATOR, last_commit_hash: ''
      },
      txs,
      last_commit: null
    }
    assertKithError(() => executeBlock(base, block, execOpts(root)), 'TX_INSUFFICIENT_FUNDS')
  })

  test('a transaction with a bad signature rejects the block', () => {
    const { base, root } = fresh()
    const good = transfer(aliceKey, CAROL, 100).tx
    const txs = [{ ...good, amount: 200 }]
    const unchecked = selectBlockTxs(base, [checkStateless(txs[0] as Transaction, () => true)], CTX, root)
    const block: Block = {
      header: {
        chain_id: CHAIN_ID, height: 1, time: T, prev_hash: genesisHash(GENESIS), tx_root: txRoot(txs), state_root: unchecked.stateRoot,
        proposer: VALIDATOR, last_commit_hash: ''
      },
      txs,
      last_commit: null
    }
    assertKithError(() => executeBlock(base, block, execOpts(root)), 'TX_BAD_SIGNATURE')
    // a caller that has verified signatures already may skip the check
    executeBlock(base, block, { ...execOpts(root), checkSignature: () => true })
  })
})

describe('selectBlockTxs', () => {
  test('keeps candidate order, skips what fails and reports why', () => {
    const { base, root } = fresh()
    const a = transfer(aliceKey, CAROL, 100)
    const poor = transfer(bobKey, CAROL, 5000)
    const b = transfer(aliceKey, BOB, 300)
    const dup = transfer(aliceKey, CAROL, 1, { id: a.tx.id })
    const late = transfer(aliceKey, CAROL, 1, { timestamp: formatTimestamp(T + HOUR) })
    const c = transfer(aliceKey, CAROL, 500)
    const selection = selectBlockTxs(base, [a, poor, b, dup, late, c], CTX, root)
    assert.deepEqual(selection.included.map((tx) => tx.id), [a.tx.id, b.tx.id, c.tx.id])
    assert.deepEqual(selection.rejected.map(({ tx, error }) => [tx.id, error.code]), [
      [poor.tx.id, 'TX_INSUFFICIENT_FUNDS'], [dup.tx.id, 'TX_DUPLICATE'], [late.tx.id, 'TX_BAD_TIMESTAMP']
    ])
    assert.equal(selection.stateRoot, nextStateRoot(root, selection.writes))
    const after = new MemoryState()
    after.apply(new Map(base.data))
    after.apply(selection.writes)
    assert.equal(bal(after, CAROL), 600)
    assert.equal(bal(after, VALIDATOR), 3000, 'only included transactions pay fees')
    assert.equal(num(after, StateKeys.totalTxs), 3)
  })

  test('later transactions see earlier ones: receive then spend works, the reverse order does not', () => {
    const { base, root } = fresh()
    const fund = transfer(aliceKey, CAROL, 10_000)
    const spend = transfer(carolKey, BOB, 5000)
    const inOrder = selectBlockTxs(base, [fund, spend], CTX, root)
    assert.deepEqual(inOrder.included.map((tx) => tx.id), [fund.tx.id, spend.tx.id])
    const reversed = selectBlockTxs(base, [spend, fund], CTX, root)
    assert.deepEqual(reversed.included.map((tx) => tx.id), [fund.tx.id])
    assert.equal(reversed.rejected[0]?.error.code, 'TX_INSUFFICIENT_FUNDS')
  })

  test('stops at max_block_txs', () => {
    const { base, root } = fresh()
    const candidates = [1, 2, 3, 4].map((n) => transfer(aliceKey, CAROL, n))
    const selection = selectBlockTxs(base, candidates, { ...CTX, params: { ...PARAMS, max_block_txs: 2, gas_price: 1 } }, root)
    assert.deepEqual(selection.included.map((tx) => tx.id), candidates.slice(0, 2).map((c) => c.tx.id))
    assert.equal(selection.rejected.length, 0)
  })

  test('does not write to its base state', () => {
    const { base, root } = fresh()
    const before = new Map(base.data)
    selectBlockTxs(base, [transfer(aliceKey, CAROL, 1)], CTX, root)
    assert.deepEqual(base.data, before)
  })
})

describe('nextStateRoot', () => {
  const PREV = '11'.repeat(32)

  test('is sha256(prev root bytes || canonical JSON of the sorted [key, value] pairs)', () => {
    const writes: WriteSet = new Map<string, number | string | null>([['bal:b', 2], ['bal:a', 1], ['gone', null]])
    const text = '[["bal:a",1],["bal:b",2],["gone",null]]'
    const expected = createHash('sha256').update(Buffer.from(PREV, 'hex')).update(text, 'utf8').digest('hex')
    assert.equal(nextStateRoot(PREV, writes), expected)
  })

  test('fixed vector', () => {
    const writes: WriteSet = new Map([['supply', 10], ['total_txs', 1]])
    assert.equal(
      nextStateRoot(PREV, writes),
      createHash('sha256').update(Buffer.from(PREV, 'hex')).update('[["supply",10],["total_txs",1]]').digest('hex')
    )
    assert.equal(nextStateRoot('', new Map()), createHash('sha256').update('[]').digest('hex'))
  })

  test('is independent of insertion order and of object member order', () => {
    const a: WriteSet = new Map()
    a.set('x', { b: 1, a: [1, 2] })
    a.set('bal:1', 5)
    a.set('del', null)
    const b: WriteSet = new Map()
    b.set('del', null)
    b.set('bal:1', 5)
    b.set('x', { a: [1, 2], b: 1 })
    assert.equal(nextStateRoot(PREV, a), nextStateRoot(PREV, b))
    assert.equal(nextStateRoot(PREV, a), nextStateRoot(PREV, a), 'deterministic')
  })

  test('changes with the previous root, a value, a key, or a deletion', () => {
    const base = nextStateRoot(PREV, new Map([['k', 1]]))
    assert.notEqual(nextStateRoot('22'.repeat(32), new Map([['k', 1]])), base)
    assert.notEqual(nextStateRoot(PREV, new Map([['k', 2]])), base)
    assert.notEqual(nextStateRoot(PREV, new Map([['k2', 1]])), base)
    assert.notEqual(nextStateRoot(PREV, new Map([['k', null]])), base)
    assert.notEqual(nextStateRoot(PREV, new Map([['k', '1']])), base)
    assert.notEqual(nextStateRoot(PREV, new Map()), base)
  })
})

describe('genesis', () => {
  test('genesisState credits allocations, sums supply and starts total_txs at 0', () => {
    const { state } = genesisState(GENESIS)
    assert.equal(bal(state, ALICE), 10_000_000)
    assert.equal(bal(state, BOB), 2000)
    assert.equal(num(state, StateKeys.supply), 10_002_000)
    assert.equal(state.get(StateKeys.totalTxs), 0)
    assert.equal(state.get(ContractKeys.gasPrice), 1)
    assert.equal(state.data.size, 6)
  })

  test('repeated allocations to one key add up', () => {
    const genesis = GenesisSchema.parse({ ...GENESIS, alloc: [{ pub_key: ALICE, amount_ut: 5 }, { pub_key: ALICE, amount_ut: 7 }] })
    const { state } = genesisState(genesis)
    assert.equal(bal(state, ALICE), 12)
    assert.equal(num(state, StateKeys.supply), 12)
  })

  test('allocations beyond 2^53-1 in total are refused', () => {
    const genesis = GenesisSchema.parse({
      ...GENESIS, alloc: [{ pub_key: ALICE, amount_ut: Number.MAX_SAFE_INTEGER }, { pub_key: BOB, amount_ut: 1 }]
    })
    assert.throws(() => genesisState(genesis), RangeError)
  })

  test('the genesis state root chains from the genesis hash over the whole initial state', () => {
    const { state, stateRoot } = genesisState(GENESIS)
    assert.equal(stateRoot, nextStateRoot(genesisHash(GENESIS), new Map(state.data)))
    assert.equal(genesisState(GENESIS).stateRoot, stateRoot, 'deterministic')
  })

  test('genesisHash is sha256 of the canonical JSON (sorted members, no whitespace)', () => {
    const expected = createHash('sha256').update(canonicalJson(GENESIS), 'utf8').digest('hex')
    assert.equal(genesisHash(GENESIS), expected)
    assert.ok(canonicalJson(GENESIS).startsWith('{"alloc":[{"amount_ut":10000000,"pub_key":"'))
  })

  test('genesisHash is stable under member reordering of the genesis object', () => {
    const reordered = {
      validators: [{ name: 'v0', power: 1, pub_key: VALIDATOR }],
      params: { max_block_txs: 100, block_reward_ut: 5000 },
      genesis_time: '2026-01-01T00:00:00Z',
      chain_id: CHAIN_ID,
      alloc: [{ amount_ut: 10_000_000, pub_key: ALICE }, { amount_ut: 2_000, pub_key: BOB }]
    }
    assert.equal(genesisHash(GenesisSchema.parse(reordered)), genesisHash(GENESIS))
    assert.equal(genesisHash(GenesisSchema.parse(JSON.parse(JSON.stringify(GENESIS, null, 2)))), genesisHash(GENESIS))
  })

  test('genesisHash is taken over the parsed genesis: defaults filled in, unknown members dropped', () => {
    const minimal = { chain_id: 'c', genesis_time: '2026-01-01T00:00:00Z', validators: [{ pub_key: VALIDATOR, power: 1 }] }
    const explicit = { ...minimal, params: { block_reward_ut: 0, max_block_txs: 20_000, gas_price: 1 }, alloc: [], comment: 'ignored' }
    assert.equal(genesisHash(GenesisSchema.parse(minimal)), genesisHash(GenesisSchema.parse(explicit)))
  })

  test('genesisHash changes with any value, and with array order', () => {
    const h = genesisHash(GENESIS)
    assert.notEqual(genesisHash({ ...GENESIS, chain_id: 'kith-test2' }), h)
    assert.notEqual(genesisHash({ ...GENESIS, params: { ...PARAMS, block_reward_ut: 1 } }), h)
    assert.notEqual(genesisHash({ ...GENESIS, alloc: [...GENESIS.alloc].reverse() }), h)
  })
})

/** The worked example printed in docs/protocol.md: genesis, block 1 with the canonical.test.ts TRANSFER, its commit. */
describe('fixed chain vector (docs/protocol.md)', () => {
  const senderKey = seeded(0x01)
  const SENDER = toHex(senderKey.publicKey)
  const RECIPIENT = 'e7f162a10bec559afea195e4dce84b69568d5d2cb0963eb446c0685e2b17f2f0'
  const genesis = GenesisSchema.parse({
    chain_id: 'kith-dev',
    genesis_time: '2026-01-01T00:00:00Z',
    validators: [{ pub_key: VALIDATOR, power: 1, name: 'node0' }],
    alloc: [{ pub_key: SENDER, amount_ut: 1_000_000_000_000 }]
  })
  const CANONICAL_GENESIS = '{"alloc":[{"amount_ut":1000000000000,"pub_key":"79b5562e8fe654f94078b112e8a98ba7901f853ae695bed7e0e3910bad049664"}],' +
    '"chain_id":"kith-dev","genesis_time":"2026-01-01T00:00:00Z","params":{"block_reward_ut":0,"gas_price":1,"max_block_txs":20000},' +
    '"validators":[{"name":"node0","power":1,"pub_key":"adc14011f82d1c56d956aa4f9d73d8858361a606048525e0d08c638dc75dd8c7"}]}'
  const GENESIS_HASH = 'd60ffc72c2c820bf0ad944d9204ce1b3921f6745815e013930221c32dba2c533'
  const GENESIS_STATE_ROOT = '9c96b0d64afde7e66fe80165e8ea9e0b401713a7d7a5a1050c3b2533da7cd24f'
  const TX_ROOT = '1dcba947296dfde2d82c3f4aa8ae0dd10bf3f87f4a63f06beeb9116fa0c1fbf5'
  const STATE_ROOT_1 = '423e7c23f342fac6d4d61a9b467ea104fa4fb1887eaa6769dcb61df15caaafc1'
  const BLOCK_HASH_1 = '5f2c7c5a6c5a7c111e377fdb262e00ac688dd8f3b1a002a5c47d480c1df871b6'
  const STATE_HASH_1 = 'ee775d1e47d72d7d3bef667d44d9c20de0722386de6e6eafa23b1796318601f9'
  const BLOCK_HASH_1_WITH_STATE_HASH = '15a7bd43eb29721c7f5b3ff15e0136abfd3a077b81428459c446d6e69ed10e1a'
  const PRECOMMIT_1 = 'rDoATvtqa3gauPwu5hqmiwuHk6OnHQm1zznYUheyzDLoq6jT7GxwgPG8zCOBQTPy3DpdjZlTfvNK7erqZNvtDQ=='
  const COMMIT_HASH_1 = '5f573c742b8315fb13439257d4bc5db06acad212816cc4898ea8ebfabbd87f4c'
  const tx = signTx({
    id: 'tx-1', type: 'TRANSFER', from: SENDER, to: RECIPIENT, amount: 1500000, fee: 1000, payload: 'e30=', timestamp: '2026-01-02T03:04:05Z'
  }, senderKey.secretKey)
  const time = Date.parse('2026-01-02T03:04:06Z')

  test('genesis: canonical text, hash and state root', () => {
    assert.equal(VALIDATOR, 'adc14011f82d1c56d956aa4f9d73d8858361a606048525e0d08c638dc75dd8c7')
    assert.equal(canonicalJson(genesis), CANONICAL_GENESIS)
    assert.equal(genesisHash(genesis), GENESIS_HASH)
    assert.equal(createHash('sha256').update(CANONICAL_GENESIS, 'utf8').digest('hex'), GENESIS_HASH)
    const { state, stateRoot } = genesisState(genesis)
    assert.equal(stateRoot, GENESIS_STATE_ROOT)
    const stateText = '[["bal:79b5562e8fe654f94078b112e8a98ba7901f853ae695bed7e0e3910bad049664",1000000000000],' +
      '["gas_price",1],["supply",1000000000000],["total_txs",0],' +
      '["valset",{"active":[{"name":"node0","power":1,"pub_key":"adc14011f82d1c56d956aa4f9d73d8858361a606048525e0d08c638dc75dd8c7"}],"base":[{"name":"node0","power":1,"pub_key":"adc14011f82d1c56d956aa4f9d73d8858361a606048525e0d08c638dc75dd8c7"}],"pending":null}]]'
    assert.equal(createHash('sha256').update(Buffer.from(GENESIS_HASH, 'hex')).update(stateText).digest('hex'), GENESIS_STATE_ROOT)
    assert.equal(state.data.size, 5)
  })

  test('block 1: tx_root, write set, state_root, block hash; commit signature and hash', () => {
    const { state, stateRoot } = genesisState(genesis)
    const ctx: BlockContext = { height: 1, time, proposer: VALIDATOR, params: genesis.params }
    const selection = selectBlockTxs(state, [checkStateless(tx)], ctx, stateRoot)
    assert.equal(selection.included.length, 1)
    assert.equal(txRoot(selection.included), TX_ROOT)
    assert.equal(createHash('sha256').update(Buffer.from('c6d0c0e6c149f9a68ccff9669845a25f79184e9a3420523e3abe47516e256599', 'hex')).digest('hex'), TX_ROOT)
    const writesText = '[["bal:79b5562e8fe654f94078b112e8a98ba7901f853ae695bed7e0e3910bad049664",999998499000],' +
      '["bal:adc14011f82d1c56d956aa4f9d73d8858361a606048525e0d08c638dc75dd8c7",1000],' +
      '["bal:e7f162a10bec559afea195e4dce84b69568d5d2cb0963eb446c0685e2b17f2f0",1500000],["total_txs",1],["txid:tx-1",1]]'
    assert.equal(canonicalJson([...selection.writes.entries()].sort(([a], [b]) => (a < b ? -1 : 1))), writesText)
    assert.equal(selection.stateRoot, STATE_ROOT_1)
    assert.equal(createHash('sha256').update(Buffer.from(GENESIS_STATE_ROOT, 'hex')).update(writesText).digest('hex'), STATE_ROOT_1)
    const header = {
      chain_id: 'kith-dev', height: 1, time, prev_hash: GENESIS_HASH, tx_root: TX_ROOT, state_root: STATE_ROOT_1, proposer: VALIDATOR, last_commit_hash: ''
    }
    assert.equal(time, 1767323046000)
    assert.equal(blockHash(header), BLOCK_HASH_1)
    const hashInput = `["kith-dev",1,1767323046000,"${GENESIS_HASH}","${TX_ROOT}","${STATE_ROOT_1}","${VALIDATOR}",""]`
    assert.equal(createHash('sha256').update(hashInput, 'utf8').digest('hex'), BLOCK_HASH_1)
    const executed = executeBlock(state, { header, txs: [tx], last_commit: null }, { params: genesis.params, chainId: 'kith-dev', prevHash: GENESIS_HASH, prevStateRoot: stateRoot })
    assert.equal(executed.stateRoot, STATE_ROOT_1)
    // from a chain's state_hash_height on, the header also carries the state hash: a ninth element
    const stateHash = StateHash.ofEntries(state.data.entries()).afterWrites(state, executed.writes)
    const after = new Map(state.data)
    for (const [key, value] of executed.writes) { if (value === null) after.delete(key); else after.set(key, value) }
    assert.equal(stateHash.digest(), StateHash.ofEntries(after.entries()).digest())
    assert.equal(stateHash.digest(), STATE_HASH_1)
    assert.equal(blockHash({ ...header, state_hash: STATE_HASH_1 }), BLOCK_HASH_1_WITH_STATE_HASH)
    const withStateHash = `["kith-dev",1,1767323046000,"${GENESIS_HASH}","${TX_ROOT}","${STATE_ROOT_1}","${VALIDATOR}","","${STATE_HASH_1}"]`
    assert.equal(createHash('sha256').update(withStateHash, 'utf8').digest('hex'), BLOCK_HASH_1_WITH_STATE_HASH)

    const voteBytes = voteSignBytes('kith-dev', { type: 'precommit', height: 1, round: 0, block_hash: BLOCK_HASH_1 })
    assert.equal(voteBytes.toString('utf8'), `["kith-dev","precommit",1,0,"${BLOCK_HASH_1}"]`)
    const signature = toBase64(sign(voteBytes, validatorKey.secretKey))
    assert.equal(signature, PRECOMMIT_1)
    const commit: Commit = { height: 1, round: 0, block_hash: BLOCK_HASH_1, signatures: [{ validator: VALIDATOR, signature }] }
    assert.equal(commitHash(commit), COMMIT_HASH_1)
    const commitInput = `[1,0,"${BLOCK_HASH_1}",[["${VALIDATOR}","${PRECOMMIT_1}"]]]`
    assert.equal(createHash('sha256').update(commitInput, 'utf8').digest('hex'), COMMIT_HASH_1)
    assert.equal(commitHash(null), '')
  })
})

describe('block rules found by review', () => {
  test('an empty state_root is checked like any other', () => {
    const { base, root } = fresh()
    const { block } = proposeBlock(base, [transfer(aliceKey, CAROL, 100)], { prevStateRoot: root })
    const bad: Block = { ...block, header: { ...block.header, state_root: '' } }
    assertKithError(() => executeBlock(base, bad, execOpts(root)), 'BLOCK_INVALID', 'state_root')
  })

  test('a block holding only a reward is invalid', () => {
    const { base, root } = fresh()
    const { block } = proposeBlock(base, [reward()], { prevStateRoot: root })
    assertKithError(() => executeBlock(base, block, execOpts(root)), 'BLOCK_INVALID', 'other transactions')
  })

  test('a reward must carry the id reward-<height>, and no other transaction may', () => {
    const { overlay } = fresh()
    assertKithError(() => applyTx(overlay, reward({ id: 'anything-goes' }), CTX), 'BLOCK_INVALID', 'reward-1')
    assertKithError(() => applyTx(overlay, transfer(aliceKey, BOB, 1, { id: 'reward-7' }), CTX), 'BLOCK_INVALID', 'reserved')
  })
})
