/** Batches of Ed25519 signatures as VerifyPool moves them to its threads, and their verification with libsodium. */
import sodium from 'sodium-native'

/**
 * One batch in one transferred buffer, so posting it is a move, not a structured clone of three
 * small views per item (each of which would copy the whole pooled ArrayBuffer behind it):
 * u32 count, then per item u32 message length, message, 64-byte signature, 32-byte key.
 */
export interface VerifyBatch {
  id: number
  packed: ArrayBuffer
}

export const SIGNATURE_BYTES = 64
export const KEY_BYTES = 32

/** Packs [message, signature, key] items (signatures and keys of the right length) into one buffer. */
export function packBatch (items: ReadonlyArray<readonly [Uint8Array, Uint8Array, Uint8Array]>): ArrayBuffer {
  let size = 4
  for (const [message] of items) size += 4 + message.length + SIGNATURE_BYTES + KEY_BYTES
  const packed = new ArrayBuffer(size)
  const view = new DataView(packed)
  const bytes = new Uint8Array(packed)
  view.setUint32(0, items.length)
  let at = 4
  for (const [message, signature, key] of items) {
    view.setUint32(at, message.length)
    bytes.set(message, at + 4)
    at += 4 + message.length
    bytes.set(signature, at)
    bytes.set(key, at + SIGNATURE_BYTES)
    at += SIGNATURE_BYTES + KEY_BYTES
  }
  return packed
}

/** Verifies every item of a packed batch: 1 for a valid signature, 0 otherwise. */
export function verifyPacked (packed: ArrayBuffer): Uint8Array {
  const view = new DataView(packed)
  const buf = Buffer.from(packed)
  const count = view.getUint32(0)
  const results = new Uint8Array(count)
  let at = 4
  for (let i = 0; i < count; i++) {
    const length = view.getUint32(at)
    const message = buf.subarray(at + 4, at + 4 + length)
    at += 4 + length
    const signature = buf.subarray(at, at + SIGNATURE_BYTES)
    const key = buf.subarray(at + SIGNATURE_BYTES, at + SIGNATURE_BYTES + KEY_BYTES)
    at += SIGNATURE_BYTES + KEY_BYTES
    results[i] = sodium.crypto_sign_verify_detached(signature, message, key) ? 1 : 0
  }
  return results
}
