/** The worker pool's answers match a direct verification, one batch or many, whatever the bytes behind each view. */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { VerifyPool, generateKeyPair, sign, verify } from '../../../src/crypto/index.js'
import { packBatch, verifyPacked } from '../../../src/crypto/verify-batch.js'

describe('VerifyPool', () => {
  const pool = new VerifyPool(2)
  after(async () => { await pool.stop() })

  const alice = generateKeyPair()
  const bob = generateKeyPair()
  const message = (i: number): Buffer => Buffer.from(`transfer ${i} `.repeat(1 + (i % 7)))

  test('a batch of good and bad signatures gets the same answers as verify()', async () => {
    const cases: Array<[Uint8Array, Uint8Array, Uint8Array]> = []
    for (let i = 0; i < 200; i++) {
      const m = message(i)
      const sig = sign(m, alice.secretKey)
      switch (i % 5) {
        case 0: cases.push([m, sig, alice.publicKey]); break
        case 1: cases.push([Buffer.concat([m, Buffer.from('x')]), sig, alice.publicKey]); break // tampered message
        case 2: cases.push([m, sig, bob.publicKey]); break // another key
        case 3: cases.push([m, sig.subarray(0, 63), alice.publicKey]); break // short signature
        default: cases.push([m, sign(m, bob.secretKey), bob.publicKey])
      }
    }
    // all requested in one turn: several batches (a batch goes at 32 requests), over both workers
    const answers = await Promise.all(cases.map(async ([m, s, k]) => await pool.verify(m, s, k)))
    assert.deepEqual(answers, cases.map(([m, s, k]) => s.length === 64 && verify(m, s, k)))
    assert.equal(answers.filter(Boolean).length, 80)
  })

  test('views into a larger buffer are read at their offset, not from the start of the buffer', async () => {
    const m = message(3)
    const backing = Buffer.alloc(4096, 7)
    const sig = sign(m, alice.secretKey)
    backing.set(m, 100)
    backing.set(sig, 1000)
    backing.set(alice.publicKey, 2000)
    const ok = await pool.verify(backing.subarray(100, 100 + m.length), backing.subarray(1000, 1064), backing.subarray(2000, 2032))
    assert.equal(ok, true)
  })

  test('packBatch and verifyPacked agree item by item, empty messages included', () => {
    const empty = new Uint8Array(0)
    const items: Array<[Uint8Array, Uint8Array, Uint8Array]> = [
      [empty, sign(empty, alice.secretKey), alice.publicKey],
      [message(1), sign(message(1), alice.secretKey), alice.publicKey],
      [message(2), sign(message(1), alice.secretKey), alice.publicKey]
    ]
    assert.deepEqual([...verifyPacked(packBatch(items))], [1, 1, 0])
    assert.deepEqual([...verifyPacked(packBatch([]))], [])
  })
})
