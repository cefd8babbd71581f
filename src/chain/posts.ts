/**
 * Feed records as they sit in chain state: posts (metadata only; bodies live off-chain on the
 * hosting relay), likes and follow relations, with typed reads. The feed rules write them; the
 * node's feed indexes and the API read them.
 */
import { StateKeys, type StateReader } from './state.js'

export interface PostRecord {
  author: string
  /** bytes: content + stored attachment + the metadata allowance */
  size: number
  /** hex sha256 of the stored (post-scrub) bytes: content then attachment */
  content_hash: string
  /** Ed25519 pubkey of the node holding the body; it received the CREATE_POST fee */
  hosting_relay: string
  /** '' when none */
  reply_to: string
  quote_of: string
  deleted: boolean
  /** unix ms: the time of the block that created it (its created_at is this in seconds) */
  created_ms: number
  /** committed LIKE_POSTs minus UNLIKE_POSTs */
  likes: number
  tx_id: string
}

export const Posts = {
  get: (state: StateReader, postId: string) => state.get(StateKeys.post(postId)) as PostRecord | undefined,
  liked: (state: StateReader, postId: string, pubkey: string) => state.get(StateKeys.like(postId, pubkey)) !== undefined,
  follows: (state: StateReader, follower: string, target: string) => state.get(StateKeys.follow(follower, target)) !== undefined
}

/** Post ids are 16 bytes, lowercase hex (spec "Post body"). */
export const POST_ID_RE = /^[0-9a-f]{32}$/
