/** The VM's kept memories (src/contracts/vm/memory-pool.ts): bounded, zeroed, and let go. */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { MemoryPool } from '../../../src/contracts/vm/memory-pool.js'

test('a contract cycling through memory limits cannot make the pool keep more than 64 pages', () => {
  const pool = new MemoryPool()
  const kept: WebAssembly.Memory[] = []
  for (let max = 1; max <= 16; max++) {
    for (let initial = 1; initial <= max; initial++) {
      const limits = { initial, maximum: max }
      const memory = pool.take(limits)
      kept.push(memory)
      pool.give(limits, memory)
    }
  }
  let pages = 0
  for (let max = 1; max <= 16; max++) {
    for (let initial = 1; initial <= max; initial++) {
      const memory = pool.take({ initial, maximum: max })
      if (kept.includes(memory)) pages += initial
    }
  }
  assert.ok(pages > 0 && pages <= 64, `${pages} pages came back from the pool`)
})

test('a kept memory comes back zeroed; a grown one and one that served 32 calls are let go', () => {
  const pool = new MemoryPool()
  const limits = { initial: 1, maximum: 2 }
  const first = pool.take(limits)
  new Uint8Array(first.buffer).fill(7)
  pool.give(limits, first)
  const again = pool.take(limits)
  assert.equal(again, first)
  assert.ok(new Uint8Array(again.buffer).every((b) => b === 0))
  again.grow(1)
  pool.give(limits, again)
  assert.notEqual(pool.take(limits), again, 'a grown memory is not handed out again')

  const worn = pool.take({ initial: 1, maximum: 3 })
  let served = 1
  for (; served < 40; served++) {
    pool.give({ initial: 1, maximum: 3 }, worn)
    if (pool.take({ initial: 1, maximum: 3 }) !== worn) break
  }
  assert.equal(served, 32)
})
