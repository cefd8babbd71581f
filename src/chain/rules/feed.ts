/**
 * The feed's transactions: CREATE_POST, DELETE_POST, LIKE_POST, UNLIKE_POST, FOLLOW, UNFOLLOW
 * (spec "Feed", rules 9-11, and the Post and Follow state tables). Post bodies are off-chain:
 * the chain records metadata only, and no rule here can see a body. The check that a post's
 * content_hash and size match the body its hosting relay holds is made by that relay when the
 * transaction is submitted to it (src/feed), because other nodes cannot make it.
 */
import { z } from 'zod'
import { KithError } from '../../errors/index.js'
import { BASE_POST_FEE, MAX_POST_SIZE, MIN_FEE, postFee } from '../limits.js'
import { POST_ID_RE, Posts, type PostRecord } from '../posts.js'
import { Registry, asState } from '../registry.js'
import { StateKeys, type StateOverlay } from '../state.js'
import { PubkeySchema, type Transaction } from '../tx.js'
import { noTransfer } from './identity.js'
import { defineRule } from './types.js'

const PostId = z.string().regex(POST_ID_RE, 'must be a post id: 32 lowercase hex characters (16 bytes)')
const PostRef = z.union([z.literal(''), PostId], { error: 'must be empty or a post id (32 lowercase hex characters)' }).default('')

const ContentHash = z.string().superRefine((s, ctx) => {
  if (/^[A-Za-z0-9+/]{43}=$/.test(s) && Buffer.from(s, 'base64').toString('base64') === s) return
  ctx.addIssue({
    code: 'custom',
    message: /^[0-9a-fA-F]{64}$/.test(s)
      ? 'must be base64 of the 32-byte sha256; this looks like hex (the publish response gives hex: convert it to base64)'
      : 'must be base64 of the 32-byte sha256 of the stored post bytes'
  })
})

const CreatePostPayload = z.object({
  post_id: PostId,
  content_hash: ContentHash,
  size: z.number().int('must be an integer').min(1, 'must be greater than 0').max(MAX_POST_SIZE, `must be at most MaxPostSize (${MAX_POST_SIZE} bytes)`),
  hosting_relay: PubkeySchema,
  reply_to: PostRef,
  quote_of: PostRef
})
export type CreatePostPayload = z.output<typeof CreatePostPayload>

const PostIdPayload = z.object({ post_id: PostId })

function livePost (state: StateOverlay, postId: string, what: string): PostRecord {
  const post = Posts.get(state, postId)
  if (post === undefined) throw new KithError('TX_UNKNOWN_TARGET', `${what}: unknown post ${postId}`)
  if (post.deleted) throw new KithError('TX_UNKNOWN_TARGET', `${what}: post ${postId} is deleted`)
  return post
}

function setPost (state: StateOverlay, postId: string, post: PostRecord): void {
  state.set(StateKeys.post(postId), asState(post))
}

function needsTarget (tx: Transaction): void {
  if (tx.to === '') throw new KithError('TX_BAD_FIELD', `${tx.type} needs the followed author's pubkey in \`to\``)
  if (tx.to === tx.from) throw new KithError('TX_BAD_FIELD', `${tx.type} cannot name the sender as the followed author`)
  if (tx.amount !== 0) throw new KithError('TX_BAD_FIELD', `${tx.type} carries no amount (\`amount\` must be 0)`)
}

export const createPostRule = defineRule({
  payload: CreatePostPayload,
  // the size-dependent floor is checked below, with a message that gives the formula
  minFee: BASE_POST_FEE,
  clientSubmittable: true,
  check (tx, payload) {
    noTransfer(tx)
    const least = postFee(payload.size)
    if (tx.fee < least) throw new KithError('TX_FEE_TOO_LOW', `fee ${tx.fee} µT is below BasePostFee + size × PostByteFee = ${least} µT for a post of ${payload.size} bytes`)
    if (payload.reply_to !== '' && payload.quote_of !== '') throw new KithError('TX_INVALID', 'reply_to and quote_of are mutually exclusive: a post replies to one post or quotes one, not both')
    if (payload.reply_to === payload.post_id || payload.quote_of === payload.post_id) throw new KithError('TX_INVALID', 'a post cannot reply to or quote itself')
    // the fee pays for hosting: an author naming itself would post for free
    if (payload.hosting_relay === tx.from) throw new KithError('FEED_BAD_HOSTING_RELAY', 'hosting_relay must not be the author: the post fee pays the relay that hosts the body, so post from a key other than the hosting node\'s')
  },
  // the whole fee pays the relay that stores the body (spec rule 11)
  feeRecipient: ({ payload }) => payload.hosting_relay,
  apply ({ tx, payload, state, block }) {
    if (Registry.relay(state, payload.hosting_relay) === undefined) throw new KithError('FEED_BAD_HOSTING_RELAY', `hosting_relay ${payload.hosting_relay} is not a registered relay (REGISTER_RELAY): the post fee goes only to a relay in the registry`)
    if (Posts.get(state, payload.post_id) !== undefined) throw new KithError('TX_CONFLICT', `duplicate post_id ${payload.post_id}: a post with this id already exists`)
    if (payload.reply_to !== '') livePost(state, payload.reply_to, 'reply_to')
    if (payload.quote_of !== '') livePost(state, payload.quote_of, 'quote_of')
    setPost(state, payload.post_id, {
      author: tx.from,
      size: payload.size,
      content_hash: Buffer.from(payload.content_hash, 'base64').toString('hex'),
      hosting_relay: payload.hosting_relay,
      reply_to: payload.reply_to,
      quote_of: payload.quote_of,
      deleted: false,
      created_ms: block.time,
      likes: 0,
      tx_id: tx.id
    })
  }
})

export const deletePostRule = defineRule({
  payload: PostIdPayload,
  minFee: MIN_FEE,
  clientSubmittable: true,
  check: noTransfer,
  apply ({ tx, payload, state }) {
    const post = livePost(state, payload.post_id, 'DELETE_POST')
    if (post.author !== tx.from) throw new KithError('TX_NOT_ALLOWED', 'DELETE_POST is accepted only from the post author')
    // soft delete: the record stays on chain (spec, Post states)
    setPost(state, payload.post_id, { ...post, deleted: true })
  }
})

export const likePostRule = defineRule({
  payload: PostIdPayload,
  minFee: MIN_FEE,
  clientSubmittable: true,
  check: noTransfer,
  apply ({ tx, payload, state, block }) {
    const post = livePost(state, payload.post_id, 'LIKE_POST')
    if (Posts.liked(state, payload.post_id, tx.from)) throw new KithError('TX_CONFLICT', 'LIKE_POST: this post is already liked by the sender')
    state.set(StateKeys.like(payload.post_id, tx.from), block.height)
    setPost(state, payload.post_id, { ...post, likes: post.likes + 1 })
  }
})

export const unlikePostRule = defineRule({
  payload: PostIdPayload,
  minFee: MIN_FEE,
  clientSubmittable: true,
  check: noTransfer,
  apply ({ tx, payload, state }) {
    const post = livePost(state, payload.post_id, 'UNLIKE_POST')
    if (!Posts.liked(state, payload.post_id, tx.from)) throw new KithError('TX_CONFLICT', 'UNLIKE_POST: the sender has not liked this post')
    state.delete(StateKeys.like(payload.post_id, tx.from))
    setPost(state, payload.post_id, { ...post, likes: post.likes - 1 })
  }
})

export const followRule = defineRule({
  payload: z.object({}),
  minFee: MIN_FEE,
  clientSubmittable: true,
  check: needsTarget,
  apply ({ tx, state, block }) {
    if (Posts.follows(state, tx.from, tx.to)) throw new KithError('TX_CONFLICT', 'FOLLOW: the sender already follows this author')
    state.set(StateKeys.follow(tx.from, tx.to), block.height)
    state.set(StateKeys.follower(tx.to, tx.from), block.height)
  }
})

export const unfollowRule = defineRule({
  payload: z.object({}),
  minFee: MIN_FEE,
  clientSubmittable: true,
  check: needsTarget,
  apply ({ tx, state }) {
    if (!Posts.follows(state, tx.from, tx.to)) throw new KithError('TX_CONFLICT', 'UNFOLLOW: the sender does not follow this author')
    // both directions of the relation go (spec, Follow states)
    state.delete(StateKeys.follow(tx.from, tx.to))
    state.delete(StateKeys.follower(tx.to, tx.from))
  }
})
