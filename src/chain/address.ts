/**
 * Addresses: bech32m with the network prefix "kith" over the 32-byte Ed25519 public key.
 * Reversible (no index is needed to go from address to key) and checksummed against typos.
 */
import { bech32m } from '@scure/base'

export const ADDRESS_PREFIX = 'kith'
const PUBKEY_RE = /^[0-9a-f]{64}$/

export function isPubkeyHex (value: string): boolean {
  return PUBKEY_RE.test(value)
}

export function addressOf (pubkeyHex: string): string {
  return bech32m.encode(ADDRESS_PREFIX, bech32m.toWords(Buffer.from(pubkeyHex, 'hex')))
}

export function pubkeyOfAddress (address: string): string | undefined {
  if (!address.startsWith(`${ADDRESS_PREFIX}1`)) return undefined
  try {
    const { prefix, words } = bech32m.decode(address as `${string}1${string}`)
    if (prefix !== ADDRESS_PREFIX) return undefined
    const bytes = bech32m.fromWords(words)
    return bytes.length === 32 ? Buffer.from(bytes).toString('hex') : undefined
  } catch {
    return undefined
  }
}

/** Accepts a pubkey (any hex case) or an address; returns the lowercase pubkey hex. */
export function resolveAccount (pubkeyOrAddress: string): string | undefined {
  const lower = pubkeyOrAddress.toLowerCase()
  if (PUBKEY_RE.test(lower)) return lower
  return pubkeyOfAddress(pubkeyOrAddress)
}
