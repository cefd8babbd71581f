import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { FrameReader, encodeFrame, encodeVarint } from '../../../src/p2p/framing.js'
import { P2PError } from '../../../src/p2p/index.js'

describe('length-prefixed frames', () => {
  test('varints as libp2p writes them', () => {
    assert.deepEqual([...encodeVarint(0)], [0])
    assert.deepEqual([...encodeVarint(127)], [127])
    assert.deepEqual([...encodeVarint(128)], [0x80, 1])
    assert.deepEqual([...encodeVarint(300)], [0xac, 0x02])
    assert.deepEqual([...encodeVarint(16 * 1024 * 1024)], [0x80, 0x80, 0x80, 0x08])
  })

  test('a frame split at every byte boundary reassembles', () => {
    const body = randomBytes(300)
    const frame = encodeFrame(body.subarray(0, 100), body.subarray(100))
    for (let cut = 0; cut <= frame.byteLength; cut++) {
      const reader = new FrameReader(1000)
      const first = reader.push(frame.subarray(0, cut))
      const got = first ?? reader.push(frame.subarray(cut))
      assert.ok(got !== undefined && Buffer.from(got).equals(body), `cut at ${cut}`)
    }
    assert.equal(new FrameReader(10).push(Uint8Array.of(0))?.byteLength, 0)
  })

  test('a length over the cap fails before buffering', () => {
    const reader = new FrameReader(1000)
    assert.throws(() => reader.push(encodeVarint(1001)), (err: unknown) => err instanceof P2PError && err.code === 'P2P_TOO_LARGE')
    assert.throws(() => new FrameReader(1000).push(Uint8Array.of(0x80, 0x80, 0x80, 0x80, 0x80)), (err: unknown) => err instanceof P2PError && err.code === 'P2P_TOO_LARGE')
  })
})
