/**
 * The state hash (src/chain/state-hash.ts): a commitment to the set of state entries that a
 * block's writes update in place, whatever the order, and whose parts add up to the whole.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { LanesCache, MemoryState, StateHash, STATE_HASH_BYTES, type StateValue, type WriteSet } from '../../../src/chain/index.js'
// seeded: the same cases on every run
import { rng } from '../../sim/simulator.js'

describe('StateHash', () => {
  test('test vectors: the empty state and two small ones (docs/protocol.md § 5.4)', () => {
    assert.equal(StateHash.empty().digest(), 'e5a00aa9991ac8a5ee3109844d84a55583bd20572ad3ffcd42792f3c36b183ad')
    assert.equal(StateHash.ofEntries([['bal:ab', 1000], ['total_txs', 1]]).digest(), 'b3f5f7b734d748825e430e2e69a913cfcc81e097db6dc741217c5b3c03c6f09b')
    // object members are hashed in canonical order, whatever order they were built in
    const valset = { pending: null, base: [], active: [{ power: 1, pub_key: 'aa' }] } as unknown as StateValue
    assert.equal(StateHash.ofEntries([['valset', valset]]).digest(), '2c2a664c20c70f876dd1412c247c6859d8994bfafdb4db0a22f2d68f70373a1a')
  })

  test('does not depend on the order entries came in; a value or a key changed changes it', () => {
    const entries: Array<[string, StateValue]> = [['a', 1], ['b', 'x'], ['c', { k: [1, 2] }]]
    const one = StateHash.ofEntries(entries)
    assert.ok(one.equals(StateHash.ofEntries([...entries].reverse())))
    assert.ok(!one.equals(StateHash.ofEntries([['a', 2], ['b', 'x'], ['c', { k: [1, 2] }]])))
    // the same values under swapped keys are a different state
    assert.ok(!StateHash.ofEntries([['a', 1], ['b', 2]]).equals(StateHash.ofEntries([['a', 2], ['b', 1]])))
    const added = StateHash.empty()
    added.add('a', 1)
    added.remove('a', 1)
    assert.ok(added.equals(StateHash.empty()), 'remove undoes add')
  })

  test('after any write sets, it equals the hash of the resulting state computed from scratch (500 seeded blocks)', () => {
    const random = rng(7)
    const state = new MemoryState()
    let hash = StateHash.empty()
    const keys = Array.from({ length: 40 }, (_, i) => `k:${i}`)
    for (let block = 0; block < 500; block++) {
      const writes: WriteSet = new Map()
      for (let w = 0; w < 1 + Math.floor(random() * 6); w++) {
        const key = keys[Math.floor(random() * keys.length)]
        const r = random()
        writes.set(key, r < 0.2 ? null : r < 0.6 ? Math.floor(random() * 1e6) : { n: Math.floor(random() * 10), s: `v${block}` })
      }
      hash = hash.afterWrites(state, writes)
      state.apply(writes)
    }
    assert.ok(state.data.size > 0)
    assert.equal(hash.digest(), StateHash.ofEntries(state.data).digest())
  })

  test('the cache of recent entries changes nothing but speed, even when small and evicting', () => {
    const random = rng(11)
    const state = new MemoryState()
    const cache = new LanesCache(8, (key) => key.startsWith('skip:'))
    let cached = StateHash.empty()
    let plain = StateHash.empty()
    for (let block = 0; block < 300; block++) {
      const writes: WriteSet = new Map()
      for (let w = 0; w < 4; w++) {
        const key = `${random() < 0.2 ? 'skip' : 'k'}:${Math.floor(random() * 12)}`
        writes.set(key, random() < 0.15 ? null : Math.floor(random() * 5))
      }
      cached = cached.afterWrites(state, writes, cache)
      plain = plain.afterWrites(state, writes)
      state.apply(writes)
    }
    assert.equal(cached.digest(), plain.digest())
    assert.equal(cached.digest(), StateHash.ofEntries(state.data).digest())
  })

  test('afterWrites leaves the hash it starts from unchanged', () => {
    const before = StateHash.ofEntries([['a', 1]])
    const digest = before.digest()
    before.afterWrites(new MemoryState(), new Map([['b', 2]]))
    assert.equal(before.digest(), digest)
  })

  test('the hashes of disjoint parts of a state add up to the whole (snapshot chunks)', () => {
    const entries: Array<[string, StateValue]> = Array.from({ length: 30 }, (_, i) => [`k:${i}`, i * 7])
    const whole = StateHash.ofEntries(entries)
    const parts = [entries.slice(0, 7), entries.slice(7, 19), entries.slice(19)].map((part) => StateHash.ofEntries(part))
    assert.ok(parts.reduce((sum, part) => sum.combine(part), StateHash.empty()).equals(whole))
    assert.ok(!parts[0].combine(parts[1]).equals(whole), 'a missing chunk shows')
  })

  test('round-trips through its bytes; bytes of another length are refused', () => {
    const hash = StateHash.ofEntries([['a', 1]])
    const copy = StateHash.fromBytes(Buffer.from(hash.bytes()))
    assert.ok(copy.equals(hash))
    assert.equal(hash.bytes().length, STATE_HASH_BYTES)
    assert.throws(() => StateHash.fromBytes(new Uint8Array(10)), /2048 bytes, not 10/)
  })
})
