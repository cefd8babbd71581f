/** The social feed under /feed (at the root, not /api): docs/feed.md. */
import type { Context } from 'koa'
import { resolveAccount } from '../../chain/index.js'
import { KithError, isKithError } from '../../errors/index.js'
import {
  AuthorFeedSchema, AuthorParamsSchema, ForYouQuerySchema, ForYouSchema, HashtagFeedSchema, MAX_POST_SIZE, PENDING_RETRY_AFTER_S, PageQuerySchema, PostBodySchema,
  PostParamsSchema, PostStatsSchema, PublishRequestSchema, PublishResponseSchema, StatsQuerySchema, TagParamsSchema, TimelineQuerySchema,
  TimelineSchema, TrendingQuerySchema, TrendingSchema, ViewResponseSchema, normalizeTag, type FeedService, type PublishResponse
} from '../../feed/index.js'
import { clientAddressKey } from '../../relay/index.js'
import { route, sendAsciiJson, type AnyRoute } from '../route.js'
import { ErrorSchema } from '../schemas.js'

/** Attachments are served as they are: immutable once stored (spec). */
const ATTACHMENT_CACHE = 'public, max-age=3600, immutable'

function account (value: string, what: string): string {
  const pub = resolveAccount(value)
  if (pub === undefined) throw new KithError('BAD_REQUEST', `${what}: ${value} is neither an Ed25519 pubkey (64 hex characters) nor a kith address`)
  return pub
}

const postErrors = {
  400: { description: 'not a post id', schema: ErrorSchema },
  404: { description: 'unknown post, or its body is not on this node', schema: ErrorSchema },
  410: { description: 'the post was deleted on chain', schema: ErrorSchema }
}

const listErrors = { 400: { description: 'malformed query (limit, before, cursor, pubkey)', schema: ErrorSchema } }

/** POST /feed/publish, declared once: the node serves it, and so does every HTTP edge thread (src/api/edge), with its own `publish`. */
export function publishRoute (publish: (body: Buffer, ctx: Context) => Promise<PublishResponse>): AnyRoute {
  return route({
    method: 'post',
    path: '/feed/publish',
    tag: 'feed',
    summary: 'Store a signed post body (attachment scrubbed) on this node, to be committed by a CREATE_POST',
    body: PublishRequestSchema,
    bodyBytes: true,
    responses: {
      200: { description: 'stored durably (or already stored by this same request): the fields of the CREATE_POST to submit', schema: PublishResponseSchema },
      400: { description: 'malformed request, bad signature (mentions `signature`), ts more than 5 minutes off (mentions `timestamp`), attachment_mime that the bytes\' magic contradicts, unsupported or undecodable attachment', schema: ErrorSchema },
      402: { description: 'the author\'s committed balance does not cover the least CREATE_POST fee of this post plus those of its other uncommitted posts (checked before any scrubbing)', schema: ErrorSchema },
      413: { description: `post larger than MaxPostSize (${MAX_POST_SIZE} bytes) after scrubbing, or a request body over the upload cap`, schema: ErrorSchema },
      429: { description: 'too many uncommitted posts (published, no CREATE_POST committed yet) from this author or this client address (Retry-After)', schema: ErrorSchema },
      502: { description: 'the media sidecar failed', schema: ErrorSchema },
      503: { description: 'video or audio without a scrubbing sidecar, or the image scrubbers are busy (Retry-After)', schema: ErrorSchema },
      504: { description: 'the media sidecar timed out', schema: ErrorSchema },
      507: { description: 'the feed disk quota (--feed-disk-limit-mb) is exhausted', schema: ErrorSchema }
    },
    handler: async ({ ctx }) => {
      try {
        return await publish(ctx.request.rawBody ?? Buffer.alloc(0), ctx)
      } catch (err) {
        // a bound frees when one of the holder's posts is committed, not in a second
        if (isKithError(err) && err.code === 'FEED_PENDING_LIMIT') ctx.set('Retry-After', String(PENDING_RETRY_AFTER_S))
        throw err
      }
    }
  })
}

export function feedRoutes (feed: FeedService): AnyRoute[] {
  return [
    publishRoute(async (body, ctx) => await feed.publishBytes(body, clientAddressKey(ctx.ip))),
    route({
      method: 'get',
      path: '/feed/post/{id}',
      tag: 'feed',
      summary: 'A committed post\'s body',
      params: PostParamsSchema,
      responses: { 200: { description: 'post body', schema: PostBodySchema }, ...postErrors },
      handler: ({ params }) => feed.post(params.id)
    }),
    route({
      method: 'get',
      path: '/feed/post/{id}/attachment',
      tag: 'feed',
      summary: 'The scrubbed attachment, with its stored Content-Type',
      params: PostParamsSchema,
      responses: { 200: { description: 'raw attachment bytes; Cache-Control: public, max-age=3600, immutable', contentType: 'application/octet-stream' }, ...postErrors },
      handler: ({ params, ctx }) => {
        const { bytes, mime } = feed.attachment(params.id)
        ctx.set('Cache-Control', ATTACHMENT_CACHE)
        ctx.type = mime
        ctx.body = bytes
      }
    }),
    route({
      method: 'post',
      path: '/feed/post/{id}/view',
      tag: 'feed',
      summary: 'Count a view (no body, no signature; at most one per client address per post per hour)',
      params: PostParamsSchema,
      responses: { 200: { description: 'the view count', schema: ViewResponseSchema }, ...postErrors },
      handler: ({ params, ctx }) => feed.view(params.id, clientAddressKey(ctx.ip))
    }),
    route({
      method: 'get',
      path: '/feed/post/{id}/stats',
      tag: 'feed',
      summary: 'Views and likes; liked_by_me when `me` is given',
      params: PostParamsSchema,
      query: StatsQuerySchema,
      responses: { 200: { description: 'post stats', schema: PostStatsSchema }, ...postErrors },
      handler: ({ params, query }) => feed.stats(params.id, query.me === undefined ? undefined : account(query.me, 'me'))
    }),
    route({
      method: 'get',
      path: '/feed/author/{pub}',
      tag: 'feed',
      summary: 'Posts of one author, newest first',
      params: AuthorParamsSchema,
      query: PageQuerySchema,
      responses: { 200: { description: 'the author\'s posts', schema: AuthorFeedSchema }, ...listErrors },
      handler: ({ params, query, ctx }) => {
        const author = account(params.pub, 'pub')
        const page = feed.byAuthor(author, query)
        sendAsciiJson(ctx, page.answer({ author }))
      }
    }),
    route({
      method: 'get',
      path: '/feed/timeline',
      tag: 'feed',
      summary: 'Posts of everyone the follower follows (committed FOLLOWs), newest first',
      query: TimelineQuerySchema,
      responses: { 200: { description: 'timeline', schema: TimelineSchema }, ...listErrors },
      handler: ({ query, ctx }) => {
        const follower = account(query.follower, 'follower')
        const page = feed.timeline(follower, query)
        sendAsciiJson(ctx, page.answer({ follower }))
      }
    }),
    route({
      method: 'get',
      path: '/feed/trending',
      tag: 'feed',
      summary: 'Top posts of the last `window` hours by likes × 3 + views; no pagination',
      query: TrendingQuerySchema,
      responses: { 200: { description: 'trending posts', schema: TrendingSchema }, 400: { description: 'window outside 1 to 168, or a bad limit', schema: ErrorSchema } },
      handler: ({ query, ctx }) => {
        const page = feed.trending(query.window, query.limit)
        sendAsciiJson(ctx, page.answer({ window: query.window }))
      }
    }),
    route({
      method: 'get',
      path: '/feed/foryou',
      tag: 'feed',
      summary: 'Recommended posts of the last 48 hours by likes × 3 + views + 1, leaving out the reader\'s own, followed and liked',
      query: ForYouQuerySchema,
      responses: { 200: { description: 'recommended posts', schema: ForYouSchema }, ...listErrors },
      handler: ({ query, ctx }) => {
        const pub = account(query.pub, 'pub')
        const page = feed.forYou(pub, query.limit)
        sendAsciiJson(ctx, page.answer({ pub }))
      }
    }),
    route({
      method: 'get',
      path: '/feed/hashtag/{tag}',
      tag: 'feed',
      summary: 'Posts carrying a hashtag (case-insensitive), newest first',
      params: TagParamsSchema,
      query: PageQuerySchema,
      responses: { 200: { description: 'posts with the tag', schema: HashtagFeedSchema }, ...listErrors },
      handler: ({ params, query, ctx }) => {
        const tag = normalizeTag(params.tag)
        if (tag === undefined) throw new KithError('BAD_REQUEST', `tag: "${params.tag}" is not a hashtag (1 to 40 letters, marks, digits or _)`)
        const page = feed.byTag(tag, query)
        sendAsciiJson(ctx, page.answer({ tag }))
      }
    })
  ]
}
