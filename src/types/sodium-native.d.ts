// sodium-native ships no type declarations; these cover the functions kith calls.
declare module 'sodium-native' {
  const sodium: {
    crypto_sign_seed_keypair(publicKey: Buffer, secretKey: Buffer, seed: Buffer): void
    crypto_sign_detached(signature: Buffer, message: Buffer, secretKey: Buffer): void
    crypto_sign_verify_detached(signature: Buffer, message: Buffer, publicKey: Buffer): boolean
    /** Ed25519 secret key (64 bytes) -> X25519 secret key (32 bytes) */
    crypto_sign_ed25519_sk_to_curve25519(curveSecretKey: Buffer, edSecretKey: Buffer): void
    /** Ed25519 public key -> X25519 public key; throws for a key that is not a valid point */
    crypto_sign_ed25519_pk_to_curve25519(curvePublicKey: Buffer, edPublicKey: Buffer): void
    crypto_scalarmult_base(publicKey: Buffer, secretKey: Buffer): void
    crypto_box_keypair(publicKey: Buffer, secretKey: Buffer): void
    crypto_box_seed_keypair(publicKey: Buffer, secretKey: Buffer, seed: Buffer): void
    /** NaCl box (X25519, XSalsa20-Poly1305), byte-identical to tweetnacl's nacl.box; ciphertext is message + 16 bytes */
    crypto_box_easy(ciphertext: Buffer, message: Buffer, nonce: Buffer, publicKey: Buffer, secretKey: Buffer): void
    /** false when the ciphertext does not authenticate */
    crypto_box_open_easy(message: Buffer, ciphertext: Buffer, nonce: Buffer, publicKey: Buffer, secretKey: Buffer): boolean
    randombytes_buf(buffer: Buffer): void
    readonly crypto_box_PUBLICKEYBYTES: number
    readonly crypto_box_SECRETKEYBYTES: number
    readonly crypto_box_NONCEBYTES: number
    readonly crypto_box_MACBYTES: number
  }
  export default sodium
}
