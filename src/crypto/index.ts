/**
 * Hashing and Ed25519 signatures. Verification uses libsodium (sodium-native): about 20k
 * verifies/s per core here, twice node:crypto and 200x tweetnacl (see docs/architecture.md).
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto'
import sodium from 'sodium-native'

export const PUBLIC_KEY_BYTES = 32
export const SECRET_KEY_BYTES = 64
export const SEED_BYTES = 32
export const SIGNATURE_BYTES = 64

export interface KeyPair {
  /** 32-byte Ed25519 public key */
  publicKey: Uint8Array
  /** 64-byte libsodium secret key (seed followed by public key) */
  secretKey: Uint8Array
}

export function keyPairFromSeed (seed: Uint8Array): KeyPair {
  if (seed.length !== SEED_BYTES) throw new RangeError(`seed must be ${SEED_BYTES} bytes`)
  const publicKey = Buffer.alloc(PUBLIC_KEY_BYTES)
  const secretKey = Buffer.alloc(SECRET_KEY_BYTES)
  sodium.crypto_sign_seed_keypair(publicKey, secretKey, Buffer.from(seed))
  return { publicKey, secretKey }
}

export function generateKeyPair (): KeyPair {
  return keyPairFromSeed(randomBytes(SEED_BYTES))
}

/** The 32-byte seed that, with keyPairFromSeed, recreates the pair. */
export function seedOf (keyPair: KeyPair): Uint8Array {
  return keyPair.secretKey.subarray(0, SEED_BYTES)
}

export function sign (message: Uint8Array, secretKey: Uint8Array): Uint8Array {
  const signature = Buffer.alloc(SIGNATURE_BYTES)
  sodium.crypto_sign_detached(signature, toBuffer(message), toBuffer(secretKey))
  return signature
}

export function verify (message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.length !== SIGNATURE_BYTES || publicKey.length !== PUBLIC_KEY_BYTES) return false
  return sodium.crypto_sign_verify_detached(toBuffer(signature), toBuffer(message), toBuffer(publicKey))
}

export function sha256 (...parts: Uint8Array[]): Buffer {
  // one-shot: a Hash object per call costs more than the hashing of a short input
  return hash('sha256', parts.length === 1 ? parts[0] : Buffer.concat(parts), 'buffer')
}

export function sha256Hex (...parts: Uint8Array[]): string {
  return sha256(...parts).toString('hex')
}

const HEX_RE = /^(?:[0-9a-f]{2})*$/

/** Strict lowercase-or-uppercase hex decode; returns undefined for anything else. */
/**
 * Whether two secrets (bearer tokens) are equal, in time that depends on neither: both are hashed
 * to equal-length digests first, since timingSafeEqual needs equal lengths and a length check
 * would leak the secret's length.
 */
export function secretsEqual (given: string, expected: string): boolean {
  return timingSafeEqual(sha256(Buffer.from(given, 'utf8')), sha256(Buffer.from(expected, 'utf8')))
}

export function fromHex (hex: string): Buffer | undefined {
  const lower = hex.toLowerCase()
  if (!HEX_RE.test(lower)) return undefined
  return Buffer.from(lower, 'hex')
}

export function toHex (bytes: Uint8Array): string {
  return toBuffer(bytes).toString('hex')
}

/** With the length a multiple of 4, this is padded standard base64 (a linear scan, ~10x cheaper than a grouped pattern). */
export const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/

/** Standard base64 with padding. */
export function isBase64 (text: string): boolean {
  return text.length % 4 === 0 && BASE64_CHARS.test(text)
}

/**
 * The bytes of `text` when it is canonical standard base64 (padded, unused bits zero: the one
 * text `toBase64` gives for them); undefined otherwise. One decode and one encode, no regex.
 */
export function fromCanonicalBase64 (text: string): Buffer | undefined {
  const bytes = Buffer.from(text, 'base64')
  return bytes.toString('base64') === text ? bytes : undefined
}

/** Strict standard base64 decode (padding required); returns undefined for anything else. */
export function fromBase64 (text: string): Buffer | undefined {
  if (!isBase64(text)) return undefined
  return Buffer.from(text, 'base64')
}

export function toBase64 (bytes: Uint8Array): string {
  return toBuffer(bytes).toString('base64')
}

function toBuffer (bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

export { VerifyPool } from './verify-pool.js'
