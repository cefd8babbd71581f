/** Fixed keys and assertion helpers shared by the unit tests. */
import assert from 'node:assert/strict'
import { keyPairFromSeed, toHex, type KeyPair } from '../../src/crypto/index.js'
import { KithError, type ErrorCode } from '../../src/errors/index.js'

/** A key from the seed first, first+1, …, first+31 (mod 256): the same key on every run. */
export function seeded (first: number): KeyPair {
  return keyPairFromSeed(Uint8Array.from({ length: 32 }, (_, i) => (first + i) & 0xff))
}

export const aliceKey = seeded(0x01)
export const bobKey = seeded(0x21)
export const carolKey = seeded(0x61)
export const validatorKey = seeded(0x41)
export const ALICE = toHex(aliceKey.publicKey)
export const BOB = toHex(bobKey.publicKey)
export const CAROL = toHex(carolKey.publicKey)
export const VALIDATOR = toHex(validatorKey.publicKey)

/** Asserts that `fn` throws a KithError with `code`, and optionally that its message mentions a word. */
export function assertKithError (fn: () => unknown, code: ErrorCode, messageIncludes?: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof KithError, `expected a KithError, got ${String(err)}`)
    assert.equal(err.code, code, `code of "${err.message}"`)
    if (messageIncludes !== undefined) assert.ok(err.message.includes(messageIncludes), `"${err.message}" should mention ${messageIncludes}`)
    return true
  })
}
