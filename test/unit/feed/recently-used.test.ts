/** The bounded map behind the feed's kept posts and likers (src/feed/recently-used.ts). */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { RecentlyUsed } from '../../../src/feed/recently-used.js'

describe('RecentlyUsed', () => {
  test('over its bound it drops the entry not read for longest; a read entry gets a second chance', () => {
    const map = new RecentlyUsed<string, number>(3)
    for (const [i, key] of ['a', 'b', 'c'].entries()) map.set(key, i)
    assert.equal(map.get('a'), 0)
    map.set('d', 3)
    assert.deepEqual(['a', 'b', 'c', 'd'].map((k) => map.get(k)), [0, undefined, 2, 3], 'b went, a was read')
    map.set('e', 4)
    // a, c and d were all read since they were last passed: each gets its second chance, then a goes
    assert.equal(map.size, 3)
    assert.equal(map.get('e'), 4)
    for (let i = 0; i < 10_000; i++) map.set(`x${i}`, i)
    assert.equal(map.size, 3, 'a flood of entries set once each')
  })

  test('the bound is on total weight; a value changed in place is weighed again', () => {
    const map = new RecentlyUsed<string, string[]>(5, (v) => v.length)
    map.set('a', ['1', '2'])
    map.set('b', ['1', '2'])
    assert.equal(map.weight, 4)
    const a = map.get('a') ?? []
    a.push('3', '4')
    map.reweigh('a')
    assert.equal(map.weight, 4, 'a (4) was read, so b (2) went')
    assert.equal(map.get('b'), undefined)
    map.set('a', ['x'])
    assert.equal(map.weight, 1, 'set again: the old weight is taken out')
    map.delete('a')
    map.delete('unknown')
    assert.deepEqual([map.size, map.weight], [0, 0])
    map.set('big', ['1', '2', '3', '4', '5', '6'])
    assert.deepEqual([map.size, map.weight], [0, 0], 'an entry heavier than the bound is not kept')
    map.set('c', ['1'])
    map.clear()
    assert.deepEqual([map.size, map.weight], [0, 0])
  })

  test('with a bound on entries too, both hold', () => {
    const map = new RecentlyUsed<string, string[]>(10, (v) => v.length, 2)
    map.set('a', ['1'])
    map.set('b', ['1'])
    map.set('c', ['1'])
    assert.deepEqual([map.size, map.weight, map.get('a')], [2, 2, undefined], 'three entries of weight 1: the count bound drops a')
    map.set('d', ['1', '2', '3', '4', '5', '6', '7', '8', '9'])
    assert.deepEqual([map.size, map.weight, map.get('b')?.length], [2, 10, undefined], 'the weight bound (10) drops b: c and d fit')
  })
})
