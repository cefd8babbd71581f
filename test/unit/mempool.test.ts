/**
 * Mempool: admission order, duplicates, the bound, admission against committed state plus every
 * pending transaction, take(max), and rebase after a block.
 */
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import {
  GenesisSchema, MAX_BLOCK_BYTES, MAX_BLOCK_TXS, StateKeys, checkStateless, txSize, encodePayload, formatTimestamp, genesisState, selectBlockTxs,
  signTx, type BlockContext, type MemoryState, type ChainParams, type CheckedTx, type Transaction
} from '../../src/chain/index.js'
import { toHex, type KeyPair } from '../../src/crypto/index.js'
import { KithError, type ErrorCode } from '../../src/errors/index.js'
import { DEFAULT_MEMPOOL_OPTIONS, Mempool } from '../../src/mempool/index.js'
import { aliceKey, bobKey, carolKey, ALICE, BOB, CAROL, VALIDATOR } from '../helpers/fixtures.js'


const PARAMS: ChainParams = { block_reward_ut: 0, max_block_txs: 100, gas_price: 1 }
const T = Date.parse('2026-01-02T03:04:05Z')
const HOUR = 60 * 60 * 1000
/** What the node passes at admission: next height, node clock, no proposer. */
const ADMIT: BlockContext = { height: 1, time: T, proposer: '', params: PARAMS }

const GENESIS = GenesisSchema.parse({
  chain_id: 'kith-test',
  genesis_time: '2026-01-01T00:00:00Z',
  params: PARAMS,
  validators: [{ pub_key: VALIDATOR, power: 1 }],
  alloc: [{ pub_key: ALICE, amount_ut: 10_000 }, { pub_key: BOB, amount_ut: 1_000_000 }]
})

let nextId = 0
function transfer (key: KeyPair, to: string, amount: number, over: Partial<Omit<Transaction, 'signature' | 'from'>> = {}): CheckedTx {
  nextId += 1
  return checkStateless(signTx({
    id: `tx-${nextId}`,
    type: 'TRANSFER',
    from: toHex(key.publicKey),
    to,
    amount,
    fee: 1000,
    payload: encodePayload({}),
    timestamp: formatTimestamp(T),
    ...over
  }, key.secretKey))
}

function committed (): MemoryState {
  return genesisState(GENESIS).state
}

function assertKithError (fn: () => unknown, code: ErrorCode): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof KithError, `expected a KithError, got ${String(err)}`)
    assert.equal(err.code, code, `code of "${err.message}"`)
    return true
  })
}

function ids (checked: CheckedTx[]): string[] {
  return checked.map((c) => c.tx.id)
}

describe('Mempool admission', () => {
  test('admits in order with increasing sequence numbers', () => {
    const pool = new Mempool(committed())
    const txs = [transfer(bobKey, CAROL, 1), transfer(bobKey, CAROL, 2), transfer(aliceKey, CAROL, 3)]
    assert.deepEqual(txs.map((t) => pool.add(t, ADMIT)), [1, 2, 3])
    assert.equal(pool.size, 3)
    assert.deepEqual(ids(pool.take(10)), ids(txs))
    assert.equal(pool.get(txs[1]?.tx.id ?? ''), txs[1]?.tx)
    assert.equal(pool.get('tx-unknown'), undefined)
  })

  test('an explicit sequence number (restore from disk) moves the counter past it', () => {
    const pool = new Mempool(committed())
    assert.equal(pool.add(transfer(bobKey, CAROL, 1), ADMIT, 41), 41)
    assert.equal(pool.add(transfer(bobKey, CAROL, 1), ADMIT), 42)
    assert.equal(pool.add(transfer(bobKey, CAROL, 1), ADMIT, 7), 7)
    assert.equal(pool.add(transfer(bobKey, CAROL, 1), ADMIT), 43)
  })

  test('a pending id -> TX_DUPLICATE, even with different content', () => {
    const pool = new Mempool(committed())
    const first = transfer(bobKey, CAROL, 1)
    pool.add(first, ADMIT)
    assertKithError(() => pool.add(first, ADMIT), 'TX_DUPLICATE')
    assertKithError(() => pool.add(transfer(aliceKey, BOB, 5, { id: first.tx.id }), ADMIT), 'TX_DUPLICATE')
    assert.equal(pool.size, 1)
    assert.equal(pool.get(first.tx.id), first.tx)
  })

  test('an id already committed -> TX_DUPLICATE', () => {
    const base = committed()
    base.data.set(StateKeys.txSeen('tx-old'), 1)
    assertKithError(() => new Mempool(base).add(transfer(bobKey, CAROL, 1, { id: 'tx-old' }), ADMIT), 'TX_DUPLICATE')
  })

  test('bounded: a full pool -> MEMPOOL_FULL (a duplicate still reads TX_DUPLICATE)', () => {
    const pool = new Mempool(committed(), { maxTxs: 2 })
    const first = transfer(bobKey, CAROL, 1)
    pool.add(first, ADMIT)
    pool.add(transfer(bobKey, CAROL, 2), ADMIT)
    assertKithError(() => pool.add(transfer(bobKey, CAROL, 3), ADMIT), 'MEMPOOL_FULL')
    assertKithError(() => pool.add(first, ADMIT), 'TX_DUPLICATE')
    assert.equal(pool.size, 2)
  })

  test('the default bounds are four full blocks, and a fifth of a block per sender', () => {
    assert.deepEqual(DEFAULT_MEMPOOL_OPTIONS, { maxTxs: 4 * MAX_BLOCK_TXS, maxBytes: 4 * MAX_BLOCK_BYTES, maxPerSender: MAX_BLOCK_TXS / 5 })
  })

  test('bounded in bytes: a transaction that would pass the byte bound -> MEMPOOL_FULL', () => {
    const first = transfer(bobKey, CAROL, 1)
    const pool = new Mempool(committed(), { maxBytes: txSize(first.tx) * 2 + 10 })
    pool.add(first, ADMIT)
    pool.add(transfer(bobKey, CAROL, 2), ADMIT)
    assert.equal(pool.sizeBytes, txSize(first.tx) * 2)
    assertKithError(() => pool.add(transfer(bobKey, CAROL, 3), ADMIT), 'MEMPOOL_FULL')
  })

  test('per-sender share: one sender cannot fill the pool; others still get in; confirmed ones free the share', () => {
    const base = committed()
    const pool = new Mempool(base, { maxPerSender: 2 })
    const mine = [transfer(bobKey, CAROL, 1), transfer(bobKey, CAROL, 2)]
    for (const t of mine) pool.add(t, ADMIT)
    const third = transfer(bobKey, CAROL, 3)
    assert.throws(() => pool.checkRoom(third.tx), (err: unknown) => err instanceof KithError && err.code === 'MEMPOOL_FULL' && err.message.includes('share'))
    assertKithError(() => pool.add(third, ADMIT), 'MEMPOOL_FULL')
    pool.add(transfer(aliceKey, CAROL, 1), ADMIT)
    base.apply(selectBlockTxs(base, [mine[0]], { ...ADMIT, proposer: VALIDATOR }, '').writes)
    pool.rebase(base, [mine[0].tx.id], { ...ADMIT, height: 2 })
    pool.add(third, ADMIT)
    assert.equal(pool.size, 3)
  })

  test('checkRoom is the same decision as add, without applying anything', () => {
    const pool = new Mempool(committed(), { maxTxs: 1 })
    const t = transfer(bobKey, CAROL, 1)
    pool.checkRoom(t.tx)
    pool.add(t, ADMIT)
    assertKithError(() => pool.checkRoom(transfer(bobKey, CAROL, 2).tx), 'MEMPOOL_FULL')
  })

  test('transactions restored from disk are kept even past the bounds (they were accepted)', () => {
    const pool = new Mempool(committed(), { maxTxs: 1, maxPerSender: 1 })
    pool.add(transfer(bobKey, CAROL, 1), ADMIT, 1)
    pool.add(transfer(bobKey, CAROL, 2), ADMIT, 2)
    assert.equal(pool.size, 2)
    assertKithError(() => pool.add(transfer(aliceKey, CAROL, 3), ADMIT), 'MEMPOOL_FULL')
  })

  test('a second spend that the first pending one makes unaffordable -> TX_INSUFFICIENT_FUNDS', () => {
    const pool = new Mempool(committed())
    // Alice has 10000: 8000 + fee 1000 leaves 1000, not enough for 1 + fee 1000.
    pool.add(transfer(aliceKey, CAROL, 8000), ADMIT)
    const second = transfer(aliceKey, CAROL, 1)
    assertKithError(() => pool.add(second, ADMIT), 'TX_INSUFFICIENT_FUNDS')
    assert.equal(pool.size, 1)
    assert.equal(pool.get(second.tx.id), undefined)
    // once Bob's pending payment to Alice is admitted, the same second spend fits
    pool.add(transfer(bobKey, ALICE, 1000), ADMIT)
    pool.add(second, ADMIT)
    assert.deepEqual(pool.take(10).map((c) => c.tx.amount), [8000, 1000, 1])
  })

  test('a rejected admission leaves no trace in the pending state', () => {
    const pool = new Mempool(committed())
    assertKithError(() => pool.add(transfer(aliceKey, CAROL, 9500), ADMIT), 'TX_INSUFFICIENT_FUNDS')
    pool.add(transfer(aliceKey, CAROL, 9000), ADMIT)
    assert.equal(pool.size, 1)
  })

  test('funds received from a pending transaction can be spent by a later one', () => {
    const pool = new Mempool(committed())
    assertKithError(() => pool.add(transfer(carolKey, BOB, 1), ADMIT), 'TX_INSUFFICIENT_FUNDS')
    pool.add(transfer(bobKey, CAROL, 5000), ADMIT)
    pool.add(transfer(carolKey, BOB, 4000), ADMIT)
    assert.equal(pool.size, 2)
  })

  test('admission applies the block-time window at the admission time', () => {
    const pool = new Mempool(committed())
    assertKithError(() => pool.add(transfer(bobKey, CAROL, 1, { timestamp: formatTimestamp(T + HOUR) }), ADMIT), 'TX_BAD_TIMESTAMP')
  })
})

describe('Mempool.take', () => {
  test('returns the first max in admission order without removing them', () => {
    const pool = new Mempool(committed())
    const txs = [1, 2, 3, 4, 5].map((n) => transfer(bobKey, CAROL, n))
    for (const t of txs) pool.add(t, ADMIT)
    assert.deepEqual(ids(pool.take(2)), ids(txs.slice(0, 2)))
    assert.deepEqual(ids(pool.take(0)), [])
    assert.deepEqual(ids(pool.take(99)), ids(txs))
    assert.equal(pool.size, 5)
  })
})

describe('Mempool.rebase', () => {
  test('drops the ids a block included and keeps the rest in order', () => {
    const base = committed()
    const pool = new Mempool(base)
    const txs = [1, 2, 3, 4].map((n) => transfer(bobKey, CAROL, n))
    for (const t of txs) pool.add(t, ADMIT)
    const blockCtx: BlockContext = { ...ADMIT, proposer: VALIDATOR }
    const selection = selectBlockTxs(base, pool.take(2), blockCtx, '')
    base.apply(selection.writes)
    const dropped = pool.rebase(base, selection.included.map((tx) => tx.id), { ...ADMIT, height: 2 })
    assert.deepEqual(dropped, [])
    assert.equal(pool.size, 2)
    assert.deepEqual(ids(pool.take(10)), ids(txs.slice(2)))
    assert.equal(pool.get(txs[0]?.tx.id ?? ''), undefined)
  })

  test('an included id that is not removed is found already committed and dropped as a duplicate', () => {
    const base = committed()
    const pool = new Mempool(base)
    const t = transfer(bobKey, CAROL, 1)
    pool.add(t, ADMIT)
    base.apply(selectBlockTxs(base, [t], { ...ADMIT, proposer: VALIDATOR }, '').writes)
    const dropped = pool.rebase(base, [], { ...ADMIT, height: 2 })
    assert.deepEqual(dropped.map(({ tx, error }) => [tx.id, error.code]), [[t.tx.id, 'TX_DUPLICATE']])
    assert.equal(pool.size, 0)
  })

  test('drops pending transactions that no longer apply on the new state and reports why', () => {
    const base = committed()
    const pool = new Mempool(base)
    const a = transfer(aliceKey, CAROL, 4000)
    const b = transfer(aliceKey, CAROL, 4000)
    const c = transfer(bobKey, CAROL, 1)
    for (const t of [a, b, c]) pool.add(t, ADMIT)
    // A block from elsewhere spends most of Alice's balance with another transaction.
    const other = transfer(aliceKey, BOB, 4000)
    base.apply(selectBlockTxs(base, [other], { ...ADMIT, proposer: VALIDATOR }, '').writes)
    const dropped = pool.rebase(base, [other.tx.id], { ...ADMIT, height: 2 })
    // 10000 - 5000 = 5000 left: a (5000) still fits, b does not.
    assert.deepEqual(dropped.map(({ tx, error }) => [tx.id, error.code]), [[b.tx.id, 'TX_INSUFFICIENT_FUNDS']])
    assert.deepEqual(ids(pool.take(10)), [a.tx.id, c.tx.id])
    // The pending state is rebuilt on the new base: Alice has 0 pending funds now.
    assertKithError(() => pool.add(transfer(aliceKey, CAROL, 1), ADMIT), 'TX_INSUFFICIENT_FUNDS')
  })

  test('drops transactions that have grown older than 24 hours', () => {
    const base = committed()
    const pool = new Mempool(base)
    const old = transfer(bobKey, CAROL, 1, { timestamp: formatTimestamp(T - 5 * 60 * 1000) })
    const recent = transfer(bobKey, CAROL, 2, { timestamp: formatTimestamp(T + 4 * 60 * 1000) })
    pool.add(old, ADMIT)
    pool.add(recent, ADMIT)
    const dropped = pool.rebase(base, [], { ...ADMIT, time: T + 24 * HOUR })
    assert.deepEqual(dropped.map(({ tx, error }) => [tx.id, error.code]), [[old.tx.id, 'TX_BAD_TIMESTAMP']])
    assert.deepEqual(ids(pool.take(10)), [recent.tx.id])
  })

  test('keeps sequence numbers counting after a rebase', () => {
    const base = committed()
    const pool = new Mempool(base)
    pool.add(transfer(bobKey, CAROL, 1), ADMIT)
    pool.rebase(base, [], ADMIT)
    assert.equal(pool.add(transfer(bobKey, CAROL, 1), ADMIT), 2)
  })
})
