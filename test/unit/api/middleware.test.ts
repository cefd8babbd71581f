import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { RateLimiter } from '../../../src/api/middleware.js'
import { STATUS_BY_CODE } from '../../../src/api/errors.js'
import { koaPath } from '../../../src/api/route.js'
import { clientAddressKey } from '../../../src/relay/index.js'

describe('RateLimiter', () => {
  test('allows a burst of twice the rate, then refills at the rate', () => {
    let now = 1_000_000
    const limiter = new RateLimiter(5, () => now)
    const burst = Array.from({ length: 12 }, () => limiter.take('1.2.3.4'))
    assert.equal(burst.filter(Boolean).length, 10)
    assert.equal(limiter.take('1.2.3.4'), false)
    now += 200 // one token at 5/s
    assert.equal(limiter.take('1.2.3.4'), true)
    assert.equal(limiter.take('1.2.3.4'), false)
  })

  test('keys are independent', () => {
    const limiter = new RateLimiter(1, () => 0)
    assert.equal(limiter.take('a'), true)
    assert.equal(limiter.take('a'), true)
    assert.equal(limiter.take('a'), false)
    assert.equal(limiter.take('b'), true)
  })

  test('keyed by client address: an IPv6 /64 is one client, an IPv4-mapped address the IPv4 one', () => {
    const limiter = new RateLimiter(1, () => 0, clientAddressKey)
    assert.equal(limiter.take('2001:db8:1:2::1'), true)
    assert.equal(limiter.take('2001:db8:1:2:ffff::7'), true)
    assert.equal(limiter.take('2001:db8:1:2:abcd:1:2:3'), false, 'walking through one /64 buys nothing')
    assert.equal(limiter.take('2001:db8:1:3::1'), true, 'another /64 is another client')
    assert.equal(limiter.take('198.51.100.7'), true)
    assert.equal(limiter.take('::ffff:198.51.100.7'), true)
    assert.equal(limiter.take('198.51.100.7'), false)
  })

  test('a rate of 0 turns the limit off', () => {
    const limiter = new RateLimiter(0, () => 0)
    for (let i = 0; i < 1000; i++) assert.equal(limiter.take('a'), true)
  })
})

describe('error statuses', () => {
  test('spec statuses for the transaction and request faults', () => {
    assert.equal(STATUS_BY_CODE.TX_BAD_SIGNATURE, 400)
    assert.equal(STATUS_BY_CODE.TX_BAD_TIMESTAMP, 400)
    assert.equal(STATUS_BY_CODE.NOT_FOUND, 404)
    assert.equal(STATUS_BY_CODE.BODY_TOO_LARGE, 413)
    assert.equal(STATUS_BY_CODE.RATE_LIMITED, 429)
    assert.equal(STATUS_BY_CODE.INTERNAL, 500)
  })
})

test('koaPath turns OpenAPI path templates into router paths', () => {
  assert.equal(koaPath('/api/tx/{id}'), '/api/tx/:id')
  assert.equal(koaPath('/api/contracts/{id}/state/{key}'), '/api/contracts/:id/state/:key')
})

test('RateLimiter.admit reports what the RateLimit-* headers and Retry-After carry', () => {
  let now = 5_000_000
  const limiter = new RateLimiter(0.5, () => now)
  assert.deepEqual(limiter.admit('ip'), { allowed: true, limit: 1, remaining: 0, resetSeconds: 2, retryAfterSeconds: 0 })
  // at half a request a second, the next token comes 2 s after the bucket ran dry
  assert.deepEqual(limiter.admit('ip'), { allowed: false, limit: 1, remaining: 0, resetSeconds: 2, retryAfterSeconds: 2 })
  now += 1000
  assert.equal(limiter.admit('ip').retryAfterSeconds, 1)
  now += 1000
  assert.equal(limiter.admit('ip').allowed, true)
})
