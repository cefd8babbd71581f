/**
 * The core's side of the HTTP edge's calls (src/api/edge/core-calls.ts): the per-IP bucket first,
 * then the route's own path, with the edge's signature verdict handed on; a call of a part this
 * node does not run is refused, not served by accident.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { coreCalls } from '../../../src/api/edge/core-calls.js'
import { RateLimiter } from '../../../src/api/middleware.js'
import { newAccount, transfer } from '../../../src/client/index.js'
import { KithError } from '../../../src/errors/index.js'
import type { HeldPublish } from '../../../src/feed/index.js'
import type { HeldOnEdge, PublishWire } from '../../../src/api/edge/protocol.js'

const alice = newAccount()
const nothingHeld: HeldOnEdge = { scrub: async () => { throw new Error('this edge holds nothing') } }

describe('edge calls served by the core', () => {
  test('a transaction goes to submitParsedTx with the edge\'s verdict', async () => {
    const seen: Array<[string, boolean | undefined]> = []
    const calls = coreCalls({
      node: { submitParsedTx: async (tx, valid) => { seen.push([tx.id, valid]); return { id: tx.id, status: 'accepted' } } },
      broadcaster: undefined,
      feed: undefined,
      addressLimiter: undefined
    })
    const tx = transfer(alice, alice.pub, 1)
    assert.deepEqual(await calls.serve({ kind: 'submit-tx', tx, signatureValid: false }, '192.0.2.1', nothingHeld), { id: tx.id, status: 'accepted' })
    assert.deepEqual(seen, [[tx.id, false]])
    assert.deepEqual(calls.kinds, ['submit-tx'])
  })

  test('the per-IP bucket decides before anything is served, with Retry-After in the refusal', async () => {
    let now = 0
    let served = 0
    const calls = coreCalls({
      node: { submitParsedTx: async (tx) => { served++; return { id: tx.id, status: 'accepted' } } },
      broadcaster: undefined,
      feed: undefined,
      addressLimiter: new RateLimiter(1, () => now)
    })
    const call = { kind: 'submit-tx' as const, tx: transfer(alice, alice.pub, 1), signatureValid: true }
    // bursts of twice the rate
    await calls.serve(call, '192.0.2.1', nothingHeld)
    await calls.serve(call, '192.0.2.1', nothingHeld)
    await assert.rejects(calls.serve(call, '192.0.2.1', nothingHeld), (err: unknown) => err instanceof KithError && err.code === 'RATE_LIMITED' && err.details?.retryAfterSeconds === 1)
    assert.equal(served, 2)
    // another address has its own bucket; time refills this one
    await calls.serve(call, '192.0.2.2', nothingHeld)
    now += 1000
    await calls.serve(call, '192.0.2.1', nothingHeld)
    assert.equal(served, 4)
  })

  test('reads an edge answered draw on the same bucket: once it is empty, they and the calls are refused', async () => {
    let served = 0
    const calls = coreCalls({
      node: { submitParsedTx: async (tx) => { served++; return { id: tx.id, status: 'accepted' } } },
      broadcaster: undefined,
      feed: undefined,
      addressLimiter: new RateLimiter(1, () => 0)
    })
    assert.equal(calls.debitRead('192.0.2.1'), undefined)
    await calls.serve({ kind: 'submit-tx', tx: transfer(alice, alice.pub, 1), signatureValid: true }, '192.0.2.1', nothingHeld)
    assert.equal(calls.debitRead('192.0.2.1'), 1, 'the bucket (a burst of 2) is empty: refused for a second')
    await assert.rejects(calls.serve({ kind: 'submit-tx', tx: transfer(alice, alice.pub, 1), signatureValid: true }, '192.0.2.1', nothingHeld), (err: unknown) => err instanceof KithError && err.code === 'RATE_LIMITED')
    assert.equal(served, 1)
    assert.equal(calls.debitRead('192.0.2.2'), undefined, 'another address has its own bucket')
    const unlimited = coreCalls({ node: { submitParsedTx: async (tx) => ({ id: tx.id, status: 'accepted' }) }, broadcaster: undefined, feed: undefined, addressLimiter: undefined })
    assert.equal(unlimited.debitRead('192.0.2.1'), undefined)
  })

  test('a broadcast or publish on a node without a relay or a feed is refused', async () => {
    const calls = coreCalls({ node: { submitParsedTx: async (tx) => ({ id: tx.id, status: 'accepted' }) }, broadcaster: undefined, feed: undefined, addressLimiter: undefined })
    await assert.rejects(calls.serve({ kind: 'broadcast', envelope: {} as never }, '192.0.2.1', nothingHeld), (err: unknown) => err instanceof KithError && err.code === 'NOT_FOUND')
    await assert.rejects(calls.serve({ kind: 'publish', decoded: {} as never }, '192.0.2.1', nothingHeld), (err: unknown) => err instanceof KithError && err.code === 'NOT_FOUND')
  })

  test('a broadcast reaches the broadcaster with the client\'s address', async () => {
    const seen: string[] = []
    const calls = coreCalls({
      node: { submitParsedTx: async (tx) => ({ id: tx.id, status: 'accepted' }) },
      broadcaster: async (_envelope, ip) => { seen.push(ip); return { id: 'x', status: 'broadcast' } },
      feed: undefined,
      addressLimiter: undefined
    })
    assert.deepEqual(calls.kinds, ['submit-tx', 'broadcast'])
    assert.deepEqual(await calls.serve({ kind: 'broadcast', envelope: {} as never }, '2001:db8::1', nothingHeld), { id: 'x', status: 'broadcast' })
    assert.deepEqual(seen, ['2001:db8::1'])
  })

  test('a publish\'s attachment stays on the edge that took it: the feed gets its size and mime, and the scrub is asked of that edge', async () => {
    const asked: number[] = []
    const edge: HeldOnEdge = { scrub: async (hold) => { asked.push(hold); return { bytes: new Uint8Array([0xff, 0xd8, 0xff]), mime: 'image/jpeg' } } }
    let got: HeldPublish | undefined
    const calls = coreCalls({
      node: { submitParsedTx: async (tx) => ({ id: tx.id, status: 'accepted' }) },
      broadcaster: undefined,
      feed: { publishHeld: async (held) => { got = held; return { post_id: 'p' } as never } },
      addressLimiter: undefined
    })
    const wire: PublishWire = {
      req: {} as never, content: new TextEncoder().encode('hi'), rawHash: 'h', signatureValid: true, attachmentError: undefined,
      attachment: { mime: 'image/png', size: 4_000_000, hold: 7 }
    }
    await calls.serve({ kind: 'publish', decoded: wire }, '192.0.2.1', edge)
    assert.ok(got?.attachment !== undefined)
    assert.equal(got.content.toString(), 'hi')
    assert.deepEqual([got.attachment.mime, got.attachment.size], ['image/png', 4_000_000])
    assert.deepEqual(asked, [], 'nothing is scrubbed until the feed asks')
    const scrubbed = await got.attachment.scrub()
    assert.deepEqual(asked, [7])
    assert.ok(Buffer.isBuffer(scrubbed.bytes))
    assert.deepEqual([...scrubbed.bytes], [0xff, 0xd8, 0xff])
    assert.equal(scrubbed.mime, 'image/jpeg')
  })
})
