/**
 * Version announcements on the 'version' topic: who a peer is, what it runs and how far its
 * chain is. JSON, checked with one schema before anything reads it.
 *
 * Gossip messages are unsigned (StrictNoSign), so nothing but the announcement itself can prove
 * who made it: it carries an Ed25519 signature by the announcing node's libp2p key. An Ed25519
 * peer id embeds its public key, so a receiver verifies against `peer_id` alone.
 */
import { peerIdFromString } from '@libp2p/peer-id'
import { z } from 'zod'
import { fromBase64, sign, toBase64, verify } from '../crypto/index.js'
import { decodeJson } from '../validation/index.js'

export const VersionAnnouncementSchema = z.object({
  peer_id: z.string().min(1).max(128),
  node_version: z.string().max(128),
  protocol_version: z.number().int().min(0),
  height: z.number().int().min(0),
  chain_id: z.string().max(128),
  /** ms since epoch, strictly increasing per sender: keeps announcements distinct for dedupe, and a replay older than the last one seen is ignored */
  at: z.number().int().min(0),
  /** base64 Ed25519 signature over versionSignBytes by the key `peer_id` embeds */
  signature: z.string().max(128)
})

export type VersionAnnouncement = z.output<typeof VersionAnnouncementSchema>
export type UnsignedVersion = Omit<VersionAnnouncement, 'signature'>

/**
 * Bytes the announcing node signs: UTF-8 JSON text of [chain_id, "version", peer_id,
 * node_version, protocol_version, height, at]. Nothing else the node key signs starts with `[`
 * (Noise's handshake and identify's peer records sign under their own domain prefixes).
 */
export function versionSignBytes (v: UnsignedVersion): Buffer {
  return Buffer.from(JSON.stringify([v.chain_id, 'version', v.peer_id, v.node_version, v.protocol_version, v.height, v.at]), 'utf8')
}

/** `secretKey`: the libsodium secret key of the node key (keyPairFromSeed of the node key seed) */
export function signVersion (v: UnsignedVersion, secretKey: Uint8Array): VersionAnnouncement {
  return { ...v, signature: toBase64(sign(versionSignBytes(v), secretKey)) }
}

/** true when `signature` is by the Ed25519 key embedded in `peer_id` (false for any other kind of peer id) */
export function verifyVersion (v: VersionAnnouncement): boolean {
  const signature = fromBase64(v.signature)
  if (signature === undefined) return false
  let publicKey: Uint8Array | undefined
  try {
    const id = peerIdFromString(v.peer_id)
    publicKey = id.type === 'Ed25519' ? id.publicKey.raw : undefined
  } catch {
    return false
  }
  return publicKey !== undefined && verify(versionSignBytes(v), signature, publicKey)
}

export function encodeVersion (v: VersionAnnouncement): Uint8Array {
  return Buffer.from(JSON.stringify(v), 'utf8')
}

export function decodeVersion (data: Uint8Array): VersionAnnouncement | undefined {
  if (data.byteLength > 4096) return undefined
  return decodeJson(VersionAnnouncementSchema, data)
}
