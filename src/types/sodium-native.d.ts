// sodium-native ships no type declarations; these cover the functions kith calls.
declare module 'sodium-native' {
  const sodium: {
    crypto_sign_seed_keypair(publicKey: Buffer, secretKey: Buffer, seed: Buffer): void
    crypto_sign_detached(signature: Buffer, message: Buffer, secretKey: Buffer): void
    crypto_sign_verify_detached(signature: Buffer, message: Buffer, publicKey: Buffer): boolean
  }
  export default sodium
}
