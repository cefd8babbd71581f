import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { Transaction } from '../../../src/chain/index.js'
import { BlockBody, CHUNK_BYTES, TXS_PER_CHUNK, encodeBlockBody } from '../../../src/storage/block-body.js'

function tx (id: string, memo?: string): Transaction {
  const base: Transaction = {
    id,
    type: 'TRANSFER',
    from: randomBytes(32).toString('hex'),
    to: randomBytes(32).toString('hex'),
    amount: 1 + Math.floor(Math.random() * 1e12),
    fee: 1000,
    payload: 'e30=',
    signature: randomBytes(64).toString('base64'),
    timestamp: '2026-11-27T08:00:00Z'
  }
  return memo === undefined ? base : { ...base, memo }
}

/** A body read the way the store reads it, through a buffer reused by each read. */
function stored (txs: Transaction[]): BlockBody {
  const records = encodeBlockBody(txs)
  const shared = Buffer.alloc(Math.max(...records.map((r) => r.length)) + 16)
  return new BlockBody((k) => {
    const record = records[k]
    if (record === undefined) return undefined
    shared.fill(0xee)
    record.copy(shared)
    return shared.subarray(0, record.length)
  })
}

describe('block bodies', () => {
  for (const size of [1, TXS_PER_CHUNK - 1, TXS_PER_CHUNK, TXS_PER_CHUNK + 1, 1000]) {
    test(`${size} transactions read back whole, by index and by id`, () => {
      const txs = Array.from({ length: size }, (_, i) => tx(i % 3 === 0 ? `id-${i}` : randomBytes(32).toString('hex')))
      const body = stored(txs)
      assert.deepEqual(body.txs(), txs)
      assert.deepEqual(body.ids(), txs.map((t) => t.id))
      txs.forEach((t, i) => assert.deepEqual(body.find(t.id), { index: i, tx: t }))
      assert.equal(body.find('absent'), undefined)
      assert.equal(body.find(`${txs[0].id}x`), undefined, 'an id that starts like one held')
    })
  }

  test('a memo comes back as it was: absent, empty, or any Unicode, members in the schema\'s order', () => {
    const txs = [tx('a'), tx('b', ''), tx('c', 'naïve 🚀 "quoted" \\ ["x",'), tx('d', 'نص')]
    const body = stored(txs)
    const read = body.txs() ?? []
    assert.deepEqual(read, txs)
    assert.equal('memo' in read[0], false)
    assert.deepEqual(Object.keys(read[2]), ['id', 'type', 'from', 'to', 'amount', 'fee', 'memo', 'payload', 'signature', 'timestamp'])
    assert.equal(body.find('c')?.index, 2)
  })

  test(`a chunk holds at most ${CHUNK_BYTES} bytes of transactions, or one larger transaction alone`, () => {
    const big = (id: string, kib: number): Transaction => ({ ...tx(id), payload: Buffer.alloc(kib * 1024 * 3 / 4, 7).toString('base64') })
    const txs = [tx('a'), big('b', 40), big('c', 40), big('d', 200), tx('e'), ...Array.from({ length: 70 }, (_, i) => tx(`f${i}`))]
    const records = encodeBlockBody(txs)
    for (const chunk of records.slice(1)) {
      assert.ok(chunk.readUInt32LE(0) === 1 || chunk.length <= CHUNK_BYTES + 4 * (TXS_PER_CHUNK + 2), `a chunk of ${chunk.length} bytes`)
    }
    assert.equal(records[1].readUInt32LE(0), 2, 'a and b; c would pass the bound')
    const body = stored(txs)
    assert.deepEqual(body.txs(), txs)
    txs.forEach((t, i) => assert.equal(body.find(t.id)?.index, i))
  })

  test('no body: every read says so', () => {
    const body = new BlockBody(() => undefined)
    assert.equal(body.txs(), undefined)
    assert.equal(body.ids(), undefined)
    assert.equal(body.find('a'), undefined)
  })

  test('a record of another format is refused, not misread', () => {
    const body = new BlockBody((k) => (k === 0 ? Buffer.from([9, 0, 0, 0, 0, 2, 0, 0, 0]) : undefined))
    assert.throws(() => body.ids(), /not a block body/)
  })
})
