import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { Assembler, KIND_PART, decodeGossip, encodeGossip, type AddResult, type PartHeader } from '../../../src/p2p/chunking.js'

const PART = 1000
const MAX = 10_000

function parts (payload: Uint8Array): Array<{ header: PartHeader, bytes: Uint8Array }> {
  return encodeGossip(payload, PART).map((m) => {
    const d = decodeGossip(m, MAX, PART)
    assert.equal(d.kind, 'part')
    if (d.kind !== 'part') throw new Error('unreachable')
    return { header: d.header, bytes: d.bytes }
  })
}

function assembler (): Assembler {
  return new Assembler({ maxBytes: 3 * MAX, maxPerPeer: 2, timeoutMs: 1000 })
}

function add (a: Assembler, p: { header: PartHeader, bytes: Uint8Array }, id: string, now = 0, via = 'alice'): AddResult {
  return a.add('/t', p.header, p.bytes, { msgId: id, via }, now)
}

describe('gossip chunking', () => {
  test('small payloads travel whole, large ones in parts that reassemble in any order', () => {
    const small = randomBytes(PART)
    const [whole, ...rest] = encodeGossip(small, PART)
    assert.equal(rest.length, 0)
    const d = decodeGossip(whole, MAX, PART)
    assert.ok(d.kind === 'whole' && Buffer.from(d.payload).equals(small))

    const payload = randomBytes(2 * PART + 1)
    const ps = parts(payload)
    assert.deepEqual(ps.map((p) => [p.header.index, p.header.total, p.bytes.byteLength]), [[0, 3, PART], [1, 3, PART], [2, 3, 1]])
    const a = assembler()
    assert.deepEqual(add(a, ps[2], 'm2'), { status: 'held' })
    assert.deepEqual(add(a, ps[0], 'm0'), { status: 'held' })
    const done = add(a, ps[1], 'm1')
    assert.equal(done.status, 'complete')
    if (done.status !== 'complete') return
    assert.ok(Buffer.from(done.payload).equals(payload))
    assert.deepEqual(done.parts.map((p) => p.msgId), ['m2', 'm0', 'm1'])
    assert.equal(a.size, 0)
    // a straggler for a finished payload does not start it again
    assert.equal(add(a, ps[0], 'm0-again').status, 'ignore')
  })

  test('inconsistent headers are malformed', () => {
    const [first] = encodeGossip(randomBytes(2 * PART + 1), PART)
    const bad = (mutate: (view: DataView) => void): string => {
      const copy = Uint8Array.from(first)
      mutate(new DataView(copy.buffer))
      return decodeGossip(copy, MAX, PART).kind
    }
    assert.equal(bad((v) => v.setUint16(35, 4)), 'malformed')       // total does not match length
    assert.equal(bad((v) => v.setUint16(33, 3)), 'malformed')       // index past total
    assert.equal(bad((v) => v.setUint32(37, MAX + 1)), 'malformed') // over the cap
    assert.equal(bad((v) => v.setUint32(37, PART)), 'malformed')    // small enough to go whole
    assert.equal(decodeGossip(first.subarray(0, first.byteLength - 1), MAX, PART).kind, 'malformed')
    assert.equal(decodeGossip(Uint8Array.of(7, 1, 2), MAX, PART).kind, 'malformed')
    assert.equal(decodeGossip(new Uint8Array(0), MAX, PART).kind, 'malformed')
    assert.equal(decodeGossip(Uint8Array.of(KIND_PART, 1), MAX, PART).kind, 'malformed')
  })

  test('a hash mismatch or two parts at one index reject every part held', () => {
    const ps = parts(randomBytes(2 * PART))
    const a = assembler()
    add(a, ps[0], 'm0')
    const forged = { header: ps[1].header, bytes: randomBytes(PART) }
    const r = add(a, forged, 'm1')
    assert.equal(r.status, 'invalid')
    if (r.status === 'invalid') assert.deepEqual(r.parts.map((p) => p.msgId), ['m0', 'm1'])

    const qs = parts(randomBytes(2 * PART))
    add(a, qs[0], 'q0')
    const twice = add(a, { header: qs[0].header, bytes: randomBytes(PART) }, 'q0b')
    assert.equal(twice.status, 'invalid')
  })

  test('parts are gathered per relaying peer: a forged part from one peer does not spoil another\'s, and peers\' parts never mix', () => {
    const payload = randomBytes(2 * PART)
    const ps = parts(payload)
    const a = assembler()
    assert.equal(add(a, ps[0], 'm0', 0, 'honest').status, 'held')
    // mallory sends a part under the same hash with other bytes: only mallory's assembly fails
    assert.equal(add(a, { header: ps[0].header, bytes: randomBytes(PART) }, 'x0', 0, 'mallory').status, 'held')
    const bad = add(a, ps[1], 'x1', 0, 'mallory')
    assert.equal(bad.status, 'invalid')
    if (bad.status === 'invalid') assert.deepEqual(bad.parts.map((p) => [p.msgId, p.via]), [['x0', 'mallory'], ['x1', 'mallory']])
    const done = add(a, ps[1], 'm1', 0, 'honest')
    assert.equal(done.status, 'complete')
    if (done.status === 'complete') {
      assert.ok(Buffer.from(done.payload).equals(payload))
      assert.deepEqual(done.parts.map((p) => p.via), ['honest', 'honest'])
    }

    // one part via each of two peers: neither completes; both expire and are ignored, nobody rejected
    const qs = parts(randomBytes(2 * PART))
    assert.equal(add(a, qs[0], 'q0', 0, 'b').status, 'held')
    assert.equal(add(a, qs[1], 'q1', 0, 'c').status, 'held')
    assert.equal(a.size, 2)
    assert.deepEqual(a.expire(1000).map((p) => [p.msgId, p.via]), [['q0', 'b'], ['q1', 'c']])
  })

  test('memory budget, per-peer cap and expiry', () => {
    const a = new Assembler({ maxBytes: 5 * PART, maxPerPeer: 2, timeoutMs: 1000 })
    const x = parts(randomBytes(2 * PART))
    const y = parts(randomBytes(2 * PART))
    const z = parts(randomBytes(2 * PART))
    assert.equal(add(a, x[0], 'x0', 0).status, 'held')
    assert.equal(add(a, y[0], 'y0', 0).status, 'held')
    assert.equal(add(a, z[0], 'z0', 0, 'bob').status, 'ignore') // 6 * PART claimed > budget
    assert.equal(a.size, 2)
    const small = parts(randomBytes(PART + 1))
    assert.equal(add(a, small[0], 's0', 0).status, 'ignore') // alice already has 2 in progress
    assert.deepEqual(a.expire(999), [])
    assert.deepEqual(a.expire(1000).map((p) => p.msgId), ['x0', 'y0'])
    assert.equal(a.size, 0)
    assert.equal(add(a, z[0], 'z0', 1000, 'bob').status, 'held')
  })
})
