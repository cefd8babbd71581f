/**
 * NaCl box (X25519 + XSalsa20-Poly1305) through libsodium's crypto_box_easy, byte-identical to
 * tweetnacl's `nacl.box` that clients use. The node seals only for the legacy POST /relay/send.
 */
import sodium from 'sodium-native'
import { NONCE_BYTES } from './envelope.js'

export interface SealKey {
  /** 32-byte X25519 public key */
  publicKey: Uint8Array
  /** 32-byte X25519 secret key */
  secretKey: Uint8Array
}

function buf (bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

export function generateSealKey (): SealKey {
  const publicKey = Buffer.alloc(sodium.crypto_box_PUBLICKEYBYTES)
  const secretKey = Buffer.alloc(sodium.crypto_box_SECRETKEYBYTES)
  sodium.crypto_box_keypair(publicKey, secretKey)
  return { publicKey, secretKey }
}

/**
 * The X25519 key of an Ed25519 key pair (libsodium's birational map), so the node's seal key
 * follows from its node key and needs no file of its own. `ed25519SecretKey` is the 64-byte
 * libsodium secret key (seed ‖ public key).
 */
export function sealKeyFromEd25519 (ed25519SecretKey: Uint8Array): SealKey {
  const secretKey = Buffer.alloc(sodium.crypto_box_SECRETKEYBYTES)
  sodium.crypto_sign_ed25519_sk_to_curve25519(secretKey, buf(ed25519SecretKey))
  const publicKey = Buffer.alloc(sodium.crypto_box_PUBLICKEYBYTES)
  sodium.crypto_scalarmult_base(publicKey, secretKey)
  return { publicKey, secretKey }
}

export function randomNonce (): Buffer {
  const nonce = Buffer.alloc(NONCE_BYTES)
  sodium.randombytes_buf(nonce)
  return nonce
}

/** nacl.box(message, nonce, recipientPublicKey, senderSecretKey) */
export function boxSeal (message: Uint8Array, nonce: Uint8Array, recipientPublicKey: Uint8Array, senderSecretKey: Uint8Array): Buffer {
  const out = Buffer.alloc(message.length + sodium.crypto_box_MACBYTES)
  sodium.crypto_box_easy(out, buf(message), buf(nonce), buf(recipientPublicKey), buf(senderSecretKey))
  return out
}

/** nacl.box.open(ciphertext, nonce, senderPublicKey, recipientSecretKey); undefined when it does not authenticate. */
export function boxOpen (ciphertext: Uint8Array, nonce: Uint8Array, senderPublicKey: Uint8Array, recipientSecretKey: Uint8Array): Buffer | undefined {
  if (ciphertext.length < sodium.crypto_box_MACBYTES) return undefined
  const out = Buffer.alloc(ciphertext.length - sodium.crypto_box_MACBYTES)
  return sodium.crypto_box_open_easy(out, buf(ciphertext), buf(nonce), buf(senderPublicKey), buf(recipientSecretKey)) ? out : undefined
}
