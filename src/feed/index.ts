/**
 * The social feed, the only door into src/feed. Authors publish post bodies here (signed,
 * attachments scrubbed, stored durably off-chain on this node, the hosting relay); the chain
 * records each post's metadata through CREATE_POST (src/chain/rules/feed.ts). The feed keeps
 * in-memory indexes of live posts, updated as blocks are applied and views counted, and serves
 * bodies, attachments, stats and listings (author, timeline, hashtag, trending, for-you)
 * without scanning all posts. Design, limits and wire forms: docs/feed.md.
 */
export {
  FeedService, DEFAULT_PENDING_TTL_MS, FOR_YOU_MAX_SCAN, PENDING_RETRY_AFTER_S, PUBLISH_TS_TOLERANCE_S, SWEEP_INTERVAL_MS,
  type FeedChain, type FeedServiceOptions, type ListQuery, type Scrubber,
  type ScrubbedAttachment, type HeldAttachment, type HeldPublish
} from './service.js'
export { FeedIndex, FOR_YOU_HOURS, MAX_WINDOW_HOURS, type IndexedPost, type Page } from './feed-index.js'
export { HomeTimelines, DEFAULT_HOME_LIMITS, type HomeLimits } from './home-timelines.js'
export { extractHashtags, normalizeTag, HASHTAG_RULE, MAX_HASHTAGS, MAX_HASHTAG_CHARS } from './hashtags.js'
export { readPendingLimits, DEFAULT_PENDING_LIMITS, type PendingLimits } from './pending.js'
export { forYouScore, trendingScore, compareRank, compareTime, type Position, type RankedPost } from './ranking.js'
export { ViewLimiter, VIEW_WINDOW_MS } from './views.js'
export { joinFeed, type FeedHost } from './join.js'
export { FeedBodyStore, type BodyMeta } from './body-store.js'
export { PostPage } from './presented.js'
export { PublishDecoder, toTransfer, fromTransfer, type DecodedWire, type PublishDecoderOptions } from './publish-decoder.js'
export { decodePublishBytes, type DecodedPublish } from './publish-decode.js'
export * from './schemas.js'
