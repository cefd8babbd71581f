/** The bounds on uncommitted posts: their SVC_* settings and the per-author and per-address ledger. */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { postFee } from '../../../src/chain/index.js'
import { DEFAULT_PENDING_LIMITS, readPendingLimits } from '../../../src/feed/index.js'
import { PendingLedger } from '../../../src/feed/pending.js'

describe('readPendingLimits', () => {
  test('defaults: 16 posts and 2 MiB per author, 64 posts and 8 MiB per address', () => {
    assert.deepEqual(readPendingLimits({}), { maxPerAuthor: 16, maxBytesPerAuthor: 2 * 2 ** 20, maxPerClient: 64, maxBytesPerClient: 8 * 2 ** 20 })
    assert.deepEqual(readPendingLimits({}), DEFAULT_PENDING_LIMITS)
  })

  test('values, decimal MiB, and 0 for no bound', () => {
    assert.deepEqual(readPendingLimits({ SVC_FEED_PENDING_PER_AUTHOR: '3', SVC_FEED_PENDING_MB_PER_AUTHOR: '0.5', SVC_FEED_PENDING_PER_IP: '0', SVC_FEED_PENDING_MB_PER_IP: ' 0 ' }),
      { maxPerAuthor: 3, maxBytesPerAuthor: 524_288, maxPerClient: 0, maxBytesPerClient: 0 })
  })

  test('a bad value stops the start with a message naming the variable', () => {
    for (const raw of ['-1', 'many', 'Infinity']) {
      assert.throws(() => readPendingLimits({ SVC_FEED_PENDING_PER_IP: raw }), new RegExp(`SVC_FEED_PENDING_PER_IP must be a number ≥ 0 \\(0: no bound\\), got "${raw}"`))
    }
  })
})

describe('PendingLedger', () => {
  test('holds count, bytes and least fees per author and per address; a key holding nothing has no entry', () => {
    const ledger = new PendingLedger()
    const a = { author: 'alice', client: '10.0.0.1', size: 1000 }
    const b = { author: 'alice', client: undefined, size: 300 }
    ledger.add(a)
    ledger.add(b)
    assert.deepEqual(ledger.ofAuthor('alice'), { count: 2, bytes: 1300, fees: postFee(1000) + postFee(300) })
    assert.deepEqual(ledger.ofClient('10.0.0.1'), { count: 1, bytes: 1000, fees: postFee(1000) })
    ledger.remove(a)
    ledger.remove(b)
    assert.deepEqual(ledger.ofAuthor('alice'), { count: 0, bytes: 0, fees: 0 })
    assert.deepEqual(ledger.ofClient('10.0.0.1'), { count: 0, bytes: 0, fees: 0 })
    // an address spelled like a prototype name is a key like any other
    ledger.add({ author: '__proto__', client: 'constructor', size: 1 })
    assert.equal(ledger.ofAuthor('__proto__').count, 1)
    assert.equal(ledger.ofClient('constructor').count, 1)
    assert.equal(ledger.ofClient('toString').count, 0)
  })
})
