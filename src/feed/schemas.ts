/**
 * The feed's wire objects, one schema each: the API validates requests with them and the
 * OpenAPI document is generated from them.
 */
import { z } from 'zod'
import { MAX_POST_SIZE, POST_ID_RE, PubkeySchema } from '../chain/index.js'
import { MAX_WINDOW_HOURS } from './feed-index.js'

export const DEFAULT_FEED_LIMIT = 20
export const MAX_FEED_LIMIT = 100
export const DEFAULT_TRENDING_HOURS = 24
/** list entries show at most this many code points of the text */
export const PREVIEW_CHARS = 280

export const PostIdSchema = z.string().regex(POST_ID_RE, 'must be a post id: 32 lowercase hex characters (16 bytes)')
const PostRefSchema = z.union([z.literal(''), PostIdSchema], { error: 'must be empty or a post id (32 lowercase hex characters)' })
const SignatureSchema = z.string().regex(/^[A-Za-z0-9+/]{86}==$/, 'must be the base64 of a 64-byte Ed25519 signature')

export const PublishRequestSchema = z.object({
  post_id: PostIdSchema.meta({ description: 'hex, 16 bytes; chosen by the client' }),
  author: PubkeySchema.meta({ description: 'Ed25519 pubkey (hex) of the author, who signs' }),
  content: z.string().meta({ description: 'text (clients cap input at 4000 characters)' }),
  content_type: z.string().min(1, 'must not be empty').max(127, 'must be at most 127 characters').meta({ description: 'e.g. text/plain' }),
  attachment_b64: z.string().optional().meta({ description: 'base64 of the image, video or audio bytes' }),
  attachment_mime: z.string().max(127).optional().meta({ description: 'declared type; must match the bytes\' magic' }),
  reply_to: PostRefSchema.optional().meta({ description: 'parent post id' }),
  quote_of: PostRefSchema.optional().meta({ description: 'quoted post id' }),
  sig: SignatureSchema.meta({ description: 'base64 Ed25519 signature by `author` over `publish:<post_id>:<raw_content_hash_hex>:<ts>`, where raw_content_hash is sha256 over the content bytes then the raw attachment bytes' }),
  ts: z.number().int('must be an integer').meta({ description: 'unix s, within ±5 minutes of the node clock' })
}).meta({ id: 'PublishRequest' })
export type PublishRequest = z.output<typeof PublishRequestSchema>

export const PublishResponseSchema = z.object({
  post_id: z.string(),
  hosting_relay: z.string().meta({ description: 'Ed25519 pubkey of this node: put it in CREATE_POST' }),
  content_hash: z.string().meta({ description: 'hex sha256 of the stored (post-scrub) bytes; CREATE_POST carries it in base64' }),
  size: z.number().int().meta({ description: 'content bytes + stored attachment bytes + 128' }),
  hashtags: z.array(z.string()),
  estimated_fee_ut: z.number().int().meta({ description: 'BasePostFee + size × PostByteFee: the least CREATE_POST fee' })
}).meta({ id: 'PublishResponse' })
export type PublishResponse = z.output<typeof PublishResponseSchema>

export const PostBodySchema = z.object({
  post_id: z.string(),
  author: z.string(),
  content: z.string(),
  content_type: z.string(),
  hashtags: z.array(z.string()).meta({ description: 'lowercase, without `#`' }),
  created_at: z.number().int().meta({ description: 'unix s of the block that committed the post' }),
  reply_to: z.string().meta({ description: 'empty when none' }),
  quote_of: z.string().meta({ description: 'empty when none' }),
  attachment: z.string().meta({ description: 'base64 of the attachment after scrubbing; empty when none' }),
  attachment_mime: z.string().meta({ description: 'empty when none' }),
  size: z.number().int(),
  content_hash: z.string().meta({ description: 'hex, as committed on chain' }),
  hosting_relay: z.string()
}).meta({ id: 'PostBody' })
export type PostBody = z.output<typeof PostBodySchema>

export const PostStatsSchema = z.object({
  post_id: z.string(),
  views: z.number().int(),
  likes: z.number().int(),
  liked_by_me: z.boolean().optional().meta({ description: 'present only when `me` is given' })
}).meta({ id: 'PostStats' })
export type PostStats = z.output<typeof PostStatsSchema>

export const ViewResponseSchema = z.object({ post_id: z.string(), views: z.number().int() }).meta({ id: 'PostView' })

export const FeedPostItemSchema = z.object({
  post_id: z.string(),
  author: z.string().meta({ description: 'Ed25519 pubkey' }),
  created_at: z.number().int().meta({ description: 'unix s of the block that committed the post' }),
  content_preview: z.string().meta({ description: `the first ${PREVIEW_CHARS} characters of the text; empty when the body is not on this node` }),
  content_truncated: z.boolean().meta({ description: 'the text is longer than the preview: GET /feed/post/{id} has all of it' }),
  content_type: z.string().meta({ description: 'empty when the body is not on this node' }),
  hashtags: z.array(z.string()).meta({ description: 'known for bodies on this node' }),
  has_attachment: z.boolean(),
  attachment_mime: z.string().meta({ description: 'empty when none or unknown' }),
  likes: z.number().int(),
  views: z.number().int().meta({ description: 'views counted by this node' }),
  reply_to: z.string(),
  quote_of: z.string(),
  hosting_relay: z.string().meta({ description: 'the node that holds the body' }),
  size: z.number().int(),
  body_available: z.boolean().meta({ description: 'whether this node holds the body (feed bodies are not replicated between nodes)' })
}).meta({ id: 'FeedPostItem', description: 'An entry of a feed listing; deleted posts are left out' })
export type FeedPostItem = z.output<typeof FeedPostItemSchema>

const posts = z.array(FeedPostItemSchema)
const nextCursor = z.string().nullable().meta({ description: 'pass as `cursor` for the next page (no gaps or repeats when posts share a second); null on the last page' })

export const AuthorFeedSchema = z.object({ author: z.string(), count: z.number().int(), posts, next_cursor: nextCursor }).meta({ id: 'AuthorFeed' })
export const TimelineSchema = z.object({ follower: z.string(), count: z.number().int(), posts, next_cursor: nextCursor }).meta({ id: 'Timeline' })
export type Timeline = z.output<typeof TimelineSchema>
export const HashtagFeedSchema = z.object({ tag: z.string(), count: z.number().int(), posts, next_cursor: nextCursor }).meta({ id: 'HashtagFeed' })
export const TrendingSchema = z.object({ window: z.number().int(), count: z.number().int(), posts }).meta({ id: 'Trending' })
export type Trending = z.output<typeof TrendingSchema>
export const ForYouSchema = z.object({ pub: z.string(), count: z.number().int(), posts }).meta({ id: 'ForYou' })

const limit = z.coerce.number().int('must be an integer').min(1, 'must be at least 1').default(DEFAULT_FEED_LIMIT)
  .transform((n) => Math.min(n, MAX_FEED_LIMIT))
  .meta({ description: `page size, default ${DEFAULT_FEED_LIMIT}; larger values are lowered to ${MAX_FEED_LIMIT}` })
const before = z.coerce.number().int('must be an integer (unix s)').min(0).optional()
  .meta({ description: 'unix s: only posts created strictly before it (pass the created_at of the oldest post loaded)' })
const cursor = z.string().max(128).optional().meta({ description: 'next_cursor of the previous page; not with `before`' })

export const PageQuerySchema = z.object({ limit, before, cursor })
export const TimelineQuerySchema = z.object({ follower: z.string().min(1).max(128).meta({ description: 'Ed25519 pubkey or address of the reader' }), limit, before, cursor })
export const TrendingQuerySchema = z.object({
  window: z.coerce.number().int('must be a whole number of hours').min(1, `must be 1 to ${MAX_WINDOW_HOURS} hours`).max(MAX_WINDOW_HOURS, `must be 1 to ${MAX_WINDOW_HOURS} hours`)
    .default(DEFAULT_TRENDING_HOURS).meta({ description: `hours, 1 to ${MAX_WINDOW_HOURS}, default ${DEFAULT_TRENDING_HOURS}` }),
  limit
})
export const ForYouQuerySchema = z.object({ pub: z.string().min(1).max(128).meta({ description: 'Ed25519 pubkey or address of the reader' }), limit })
export const StatsQuerySchema = z.object({ me: z.string().min(1).max(128).optional().meta({ description: 'Ed25519 pubkey or address: adds liked_by_me' }) })
export const PostParamsSchema = z.object({ id: PostIdSchema })
export const AuthorParamsSchema = z.object({ pub: z.string().min(1).max(128).meta({ description: 'Ed25519 pubkey or address' }) })
export const TagParamsSchema = z.object({ tag: z.string().min(1).max(200).meta({ description: 'hashtag without `#` (a leading # is allowed), any case' }) })

export { MAX_POST_SIZE }
