/** Worker thread of VerifyPool: verifies batches of Ed25519 signatures with libsodium. */
import { parentPort } from 'node:worker_threads'
import sodium from 'sodium-native'

export interface VerifyBatch {
  id: number
  /** [message, signature, public key] */
  items: Array<[Uint8Array, Uint8Array, Uint8Array]>
}

const buf = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

parentPort?.on('message', ({ id, items }: VerifyBatch) => {
  const results = new Uint8Array(items.length)
  items.forEach(([message, signature, key], i) => {
    results[i] = signature.length === 64 && key.length === 32 && sodium.crypto_sign_verify_detached(buf(signature), buf(message), buf(key)) ? 1 : 0
  })
  parentPort?.postMessage({ id, results }, [results.buffer])
})
