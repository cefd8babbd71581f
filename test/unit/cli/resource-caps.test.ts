/** What --max-cpu and --max-ram-mb bound, and when bin/kith must start the node again. */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { needsRelaunch, resourceCaps } from '../../../src/cli/resource-caps.js'

test('no caps: one verifier per core but one, Node and V8 defaults, no relaunch', () => {
  const caps = resourceCaps(undefined, undefined, 8)
  assert.deepEqual(caps, { httpWorkers: 0, verifyWorkers: 7, imageWorkers: undefined, uvThreads: undefined, heapMb: undefined, viewPairs: undefined })
  assert.equal(needsRelaunch(caps, {}), false)
})

test('--max-cpu bounds workers and the libuv pool, never above what the machine has', () => {
  assert.deepEqual(resourceCaps(1, undefined, 8), { httpWorkers: 0, verifyWorkers: 1, imageWorkers: 1, uvThreads: 2, heapMb: undefined, viewPairs: undefined })
  assert.deepEqual(resourceCaps(2.5, undefined, 8), { httpWorkers: 0, verifyWorkers: 2, imageWorkers: 2, uvThreads: 3, heapMb: undefined, viewPairs: undefined })
  assert.equal(resourceCaps(16, undefined, 2).verifyWorkers, 1)
  assert.equal(resourceCaps(0.5, undefined, 2).imageWorkers, 1)
})

test('--http-workers: none unless asked (docs/operating.md), as many as asked otherwise, whatever --max-cpu says', () => {
  assert.equal(resourceCaps(undefined, undefined, 8).httpWorkers, 0)
  assert.equal(resourceCaps(2, undefined, 8, 3).httpWorkers, 3)
  assert.equal(resourceCaps(undefined, undefined, 2, 0).httpWorkers, 0)
})

test('--max-ram-mb gives V8 60% of it (at least 64 MiB); a relaunch applies it once', () => {
  assert.equal(resourceCaps(undefined, 1000, 2).heapMb, 600)
  assert.equal(resourceCaps(undefined, 50, 2).heapMb, 64)
  // the feed's view limiter: 5% of the memory, between 10,000 and its default 1,000,000 pairs
  assert.equal(resourceCaps(undefined, 400, 2).viewPairs, 131_072)
  assert.equal(resourceCaps(undefined, 16, 2).viewPairs, 10_000)
  assert.equal(resourceCaps(undefined, 64_000, 2).viewPairs, 1_000_000)
  const caps = resourceCaps(undefined, 1000, 2)
  assert.equal(needsRelaunch(caps, {}), true)
  assert.equal(needsRelaunch(caps, { KITH_CAPS_APPLIED: '1' }), false)
})
