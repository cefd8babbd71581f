/** Relay envelopes as an app uploads them to POST /relay/broadcast, sealed with tweetnacl. */
import nacl from 'tweetnacl'
import { toHex } from '../../src/crypto/index.js'

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64')

/** A sealed envelope for `recipient` (X25519 public key) from a fresh sender key. */
export function envelopeFor (recipient: Uint8Array, senderEd25519 = '', text = 'hi'): Record<string, unknown> {
  const sender = nacl.box.keyPair()
  const nonce = nacl.randomBytes(24)
  const ciphertext = nacl.box(Buffer.from(text), nonce, recipient, sender.secretKey)
  return { id: 'x', sender_pub: toHex(sender.publicKey), recipient_pub: toHex(recipient), sender_ed25519_pub: senderEd25519, fee_ut: 0, fee_sig: null, nonce: b64(nonce), ciphertext: b64(ciphertext), sent_at: 0 }
}
