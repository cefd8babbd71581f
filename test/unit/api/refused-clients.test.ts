/** What an edge keeps of the core's refusals (src/api/edge/refused-clients.ts): expiry, rounding, and its bound. */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { RefusedClients } from '../../../src/api/edge/refused-clients.js'

describe('RefusedClients', () => {
  test('a key is refused until the time the core named, in whole seconds rounded up, then let in and forgotten', () => {
    let now = 1_000_000
    const refused = new RefusedClients(10, () => now)
    refused.note([['10.0.0.1', now + 1_500]])
    assert.equal(refused.refusedFor('10.0.0.1'), 2)
    assert.equal(refused.refusedFor('10.0.0.2'), undefined)
    now += 1_499
    assert.equal(refused.refusedFor('10.0.0.1'), 1)
    now += 1
    assert.equal(refused.refusedFor('10.0.0.1'), undefined)
    assert.equal(refused.size, 0)
  })

  test('a flood of addresses cannot grow it past its bound: expired entries go first, then the oldest', () => {
    let now = 0
    const refused = new RefusedClients(100, () => now)
    refused.note([['expired', 10], ['kept', 1_000_000]])
    now = 20
    refused.note(Array.from({ length: 99 }, (_, i) => [`flood-${i}`, 1_000_000] as const))
    assert.equal(refused.size, 100)
    assert.equal(refused.refusedFor('expired'), undefined, 'the expired entry made room first')
    assert.ok(refused.refusedFor('kept') !== undefined)
    refused.note(Array.from({ length: 50_000 }, (_, i) => [`more-${i}`, 1_000_000] as const))
    assert.equal(refused.size, 100)
    assert.equal(refused.refusedFor('kept'), undefined, 'the oldest entries went next')
    assert.ok(refused.refusedFor('more-49999') !== undefined)
  })

  test('the core\'s latest word on a key counts, and renews its place', () => {
    const now = 0
    const refused = new RefusedClients(2, () => now)
    refused.note([['a', 5_000], ['b', 5_000]])
    refused.note([['a', 9_000]])
    refused.note([['c', 5_000]])
    assert.equal(refused.refusedFor('a'), 9, 'renewed, so b (now the oldest) went instead')
    assert.equal(refused.refusedFor('b'), undefined)
  })
})
