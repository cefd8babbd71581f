/**
 * The feed: publish (verify, scrub, account, store durably), the local check of CREATE_POSTs
 * submitted here, the indexes kept as blocks are applied, and the reads. Reads go skeleton (post
 * ids from the index) -> hydrate (the on-chain record, the body's metadata when it is here) ->
 * present. Chain state is read, never written: the feed's on-chain facts come from the rules in
 * src/chain/rules/feed.ts.
 */
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import type { Logger } from 'pino'
import {
  POST_METADATA_BYTES, MAX_POST_SIZE, Posts, Registry, StateKeys, balanceOf, decodePayload, postFee, unixSeconds, type CheckedTx, type CreatePostPayload, type PostRecord,
  type StateReader, type StateValue, type Transaction
} from '../chain/index.js'
import { KithError } from '../errors/index.js'
import { FeedBodyStore, type BodyMeta } from './body-store.js'
import { FeedIndex, type IndexedPost, type NewPost } from './feed-index.js'
import { HASHTAG_RULE, extractHashtags } from './hashtags.js'
import { HomeTimelines } from './home-timelines.js'
import { DEFAULT_PENDING_LIMITS, PendingLedger, type Claim, type PendingLimits } from './pending.js'
import type { Position } from './ranking.js'
import { decodePublish, decodePublishBytes, type DecodedPublish } from './publish-decode.js'
import type { PublishDecoder } from './publish-decoder.js'
import { Likers } from './likers.js'
import { ListedPost, PostPage, PresentedPosts, type FixedItem } from './presented.js'
import { PREVIEW_CHARS, type PublishResponse } from './schemas.js'
import { ViewLimiter } from './views.js'

/** What the feed reads of the chain: committed state, and its keys by prefix. */
export interface FeedChain {
  readonly state: StateReader
  scan (prefix: string): Iterable<[string, StateValue]>
}

/** Mandatory scrubbing of attachments (src/media provides it). */
export interface Scrubber {
  scrub (bytes: Buffer, declaredMime: string): Promise<ScrubbedAttachment>
}

export interface ScrubbedAttachment { bytes: Buffer, mime: string }

/**
 * An attachment as the publish sees it: its declared mime and size, and the scrub of its bytes,
 * run where the bytes are. On one thread that is this service's scrubber; behind HTTP edge
 * threads it is the edge that decoded the body, so a photo's megabytes never reach the thread
 * that orders transactions.
 */
export interface HeldAttachment {
  mime: string
  size: number
  scrub: () => Promise<ScrubbedAttachment>
}

/** A decoded publish whose attachment is held where it was decoded. */
export type HeldPublish = Omit<DecodedPublish, 'attachment'> & { attachment: HeldAttachment | undefined }

export interface FeedServiceOptions {
  dataDir: string
  chain: FeedChain
  /** Ed25519 pubkey of this node: the hosting relay of bodies published here */
  hostingRelay: string
  /** scrubs the attachments of publishes decoded here; absent where edge threads take every publish (they scrub their own) */
  scrubber?: Scrubber
  /** hard quota on stored bodies (--feed-disk-limit-mb); unlimited when absent */
  diskLimitBytes?: number
  /** bodies published but never committed are collected after this long (default 24 h) */
  pendingTtlMs?: number
  /** bounds on pending bodies per author and per client address (default DEFAULT_PENDING_LIMITS) */
  pendingLimits?: PendingLimits
  logger: Logger
  now?: () => number
  /** fsync body writes (default true) */
  sync?: boolean
  maxViewPairs?: number
  /** decodes large publish bodies off this thread; without it, every body is decoded inline */
  decoder?: PublishDecoder
}

/** A publish request's fields, its attachment decoded apart. */
type PublishFields = DecodedPublish['req']

export interface ListQuery {
  limit: number
  before?: number
  cursor?: string
}

export const PUBLISH_TS_TOLERANCE_S = 5 * 60
export const DEFAULT_PENDING_TTL_MS = 24 * 60 * 60 * 1000
/** a body named by a CREATE_POST submitted here is kept at least this long after, even past its TTL */
const CLAIM_GRACE_MS = 60 * 60 * 1000
export const SWEEP_INTERVAL_MS = 60_000
/** for-you looks at most this many candidates per request, however many it excludes */
export const FOR_YOU_MAX_SCAN = 5000

/** Retry-After of a publish refused by a pending bound: a pending body leaves the bound when its CREATE_POST is committed (a block or two). */
export const PENDING_RETRY_AFTER_S = 30

interface PendingBody extends Claim {
  publishedAtMs: number
  claimedAtMs: number
}

export class FeedService {
  private readonly index = new FeedIndex()
  /** the fixed part of the posts presented last (presented.ts) */
  private readonly presented = new PresentedPosts()
  private readonly homes = new HomeTimelines(this.index)
  /** the likers of the posts for-you checks (likers.ts) */
  private readonly likers: Likers
  private readonly store: FeedBodyStore
  private readonly log: Logger
  private readonly now: () => number
  private readonly views: ViewLimiter
  /** bodies stored here whose post is not (yet) committed, by post id */
  private readonly pending = new Map<string, PendingBody>()
  /** what pending bodies and publishes under way hold, per author and per client address */
  private readonly ledger = new PendingLedger()
  readonly pendingLimits: Readonly<PendingLimits>
  readonly pendingTtlMs: number
  private readonly inFlight = new Map<string, { rawHash: string, author: string, answer: Promise<PublishResponse> }>()
  private usedBytes = 0
  private reservedBytes = 0
  private sweepTimer: NodeJS.Timeout | undefined

  constructor (private readonly opts: FeedServiceOptions) {
    this.store = FeedBodyStore.open(join(opts.dataDir, 'feed'), { sync: opts.sync })
    this.log = opts.logger
    this.now = opts.now ?? Date.now
    this.views = new ViewLimiter(opts.maxViewPairs)
    this.pendingLimits = opts.pendingLimits ?? DEFAULT_PENDING_LIMITS
    this.pendingTtlMs = opts.pendingTtlMs ?? DEFAULT_PENDING_TTL_MS
    this.likers = new Likers(function * (postId) {
      const prefix = StateKeys.like(postId, '')
      for (const [key] of opts.chain.scan(prefix)) yield key.slice(prefix.length)
    })
  }

  /** Committed posts the indexes hold (for /metrics and /api/limits). */
  get livePostCount (): number {
    return this.index.size
  }

  /** Bytes of stored bodies counted against the disk quota (committed and pending). */
  get diskUsedBytes (): number {
    return this.usedBytes
  }

  /** Committed, undeleted posts as the index takes them, with their counted views. */
  private * livePosts (views: Map<string, number>): Generator<NewPost> {
    for (const [key, value] of this.opts.chain.scan('post:')) {
      const id = key.slice('post:'.length)
      const post = value as unknown as PostRecord
      if (post.deleted) continue
      yield { id, author: post.author, created: post.created_ms, likes: post.likes, views: views.get(id) ?? 0, tags: this.localMeta(id, post)?.hashtags }
    }
  }

  /** Rebuilds the indexes from committed chain state and the bodies on disk. */
  async open (): Promise<void> {
    const state = this.opts.chain.state
    this.index.prune(this.now())
    const views = new Map(this.store.allViews())
    const orphans: string[] = []
    const retagged = await this.retag()
    this.index.addAll(this.livePosts(views))
    for (const [id, meta] of this.store.allMeta()) {
      const post = Posts.get(state, id)
      if (post === undefined) {
        this.addPending(id, { author: meta.author, client: undefined, size: meta.size, publishedAtMs: meta.published_at * 1000, claimedAtMs: 0 })
        this.usedBytes += meta.size
      } else if (post.deleted || !bodyMatches(meta, post, this.opts.hostingRelay)) {
        orphans.push(id)
      } else {
        this.usedBytes += meta.size
      }
    }
    await this.store.remove(orphans)
    this.presented.forget(orphans)
    this.log.info({ posts: this.index.size, pendingBodies: this.pending.size, usedBytes: this.usedBytes, removed: orphans.length, retagged }, 'feed indexes rebuilt')
  }

  /**
   * Bodies stored under an older hashtag rule get their tags extracted again from their text
   * (once: the rule's version is recorded with them), so posts tagged before the rule changed
   * are listed under the tags it gives now.
   */
  private async retag (): Promise<number> {
    const updates: Array<[string, BodyMeta]> = []
    for (const [id, meta] of this.store.allMeta()) {
      if (meta.hashtag_rule === HASHTAG_RULE) continue
      const content = this.store.body(id)?.content
      if (content !== undefined) updates.push([id, { ...meta, hashtags: extractHashtags(content), hashtag_rule: HASHTAG_RULE }])
    }
    await this.store.putMeta(updates)
    this.presented.clear()
    return updates.length
  }

  start (): void {
    this.sweepTimer = setInterval(() => { this.sweep().catch((err: unknown) => this.log.error({ err }, 'feed sweep failed')) }, SWEEP_INTERVAL_MS)
    this.sweepTimer.unref()
  }

  async stop (): Promise<void> {
    if (this.sweepTimer !== undefined) clearInterval(this.sweepTimer)
    await Promise.allSettled([...this.inFlight.values()].map(async ({ answer }) => await answer))
    await this.store.close()
  }

  // ---- publish ----

  /** Stores a signed body; `client` is the address it came from, for the per-address bound. */
  async publish (raw: unknown, client?: string): Promise<PublishResponse> {
    return await this.publishHeld(this.heldHere(decodePublish(raw)), client)
  }

  /**
   * publish, from the request body's bytes: a large body is decoded off this thread (the
   * decoder's workers), and the buffer is handed over (a worker takes its memory).
   */
  async publishBytes (body: Buffer, client?: string): Promise<PublishResponse> {
    const decoder = this.opts.decoder
    const decoded = decoder !== undefined ? await decoder.decode(body) : decodePublishBytes(body)
    return await this.publishHeld(this.heldHere(decoded), client)
  }

  /** A publish decoded on this thread, its attachment to be scrubbed by this service's scrubber. */
  private heldHere (decoded: DecodedPublish): HeldPublish {
    const { attachment } = decoded
    if (attachment === undefined) return { ...decoded, attachment: undefined }
    const { bytes, mime } = attachment
    const scrubber = this.opts.scrubber
    const scrub = scrubber !== undefined
      ? async () => await scrubber.scrub(bytes, mime)
      : async () => { throw new KithError('UNAVAILABLE', 'this listener does not scrub attachments: publish through the node\'s public address') }
    return { ...decoded, attachment: { mime, size: bytes.length, scrub } }
  }

  /** publish, from a body decoded elsewhere (an HTTP edge thread decodes it while it reads it, and holds its attachment) */
  async publishHeld ({ req, content, attachment, rawHash, signatureValid, attachmentError }: HeldPublish, client: string | undefined): Promise<PublishResponse> {
    const skew = req.ts - this.nowS()
    if (Math.abs(skew) > PUBLISH_TS_TOLERANCE_S) {
      throw new KithError('FEED_STALE_TS', `ts (timestamp) ${req.ts} is more than 5 minutes from the node clock`)
    }
    if ((req.reply_to ?? '') !== '' && (req.quote_of ?? '') !== '') {
      throw new KithError('BAD_REQUEST', 'reply_to and quote_of are mutually exclusive: a post replies to one post or quotes one, not both')
    }
    this.checkHostable(req.author)
    if (attachmentError !== undefined) throw new KithError('BAD_REQUEST', attachmentError)
    if (!signatureValid) {
      throw new KithError('FEED_BAD_SIGNATURE', 'invalid signature: sig must be the author\'s Ed25519 signature over publish:<post_id>:<raw_content_hash_hex>:<ts>')
    }
    const running = this.inFlight.get(req.post_id)
    if (running !== undefined) {
      if (running.rawHash === rawHash && running.author === req.author) return await running.answer
      throw new KithError('BAD_REQUEST', `post_id ${req.post_id} is being published with other content`)
    }
    const stored = this.store.meta(req.post_id)
    if (stored !== undefined) {
      // a retry of a publish that was answered (or whose answer was lost) gets the same answer
      if (stored.raw_hash === rawHash && stored.author === req.author) return this.answer(req.post_id, stored)
      throw new KithError('BAD_REQUEST', `post_id ${req.post_id} was already published with other content`)
    }
    if (Posts.get(this.opts.chain.state, req.post_id) !== undefined) throw new KithError('BAD_REQUEST', `post_id ${req.post_id} already exists on chain`)
    const answer = this.scrubAndStore(req, client, content, rawHash, attachment)
    this.inFlight.set(req.post_id, { rawHash, author: req.author, answer })
    try {
      return await answer
    } finally {
      this.inFlight.delete(req.post_id)
    }
  }

  /** Refuses early a body whose CREATE_POST the chain would refuse: its hosting relay must be a registered relay other than its author. */
  private checkHostable (author: string): void {
    const host = this.opts.hostingRelay
    if (author === host) {
      throw new KithError('FEED_BAD_HOSTING_RELAY', `author ${author} is this node's own account key, the hosting_relay of posts published here, and a post may not name its author as hosting_relay: post from another key (docs/feed.md)`)
    }
    if (Registry.relay(this.opts.chain.state, host) === undefined) {
      throw new KithError('UNAVAILABLE', `this node cannot host posts: its account key ${host} is not a registered relay (its operator must submit REGISTER_RELAY from it; docs/feed.md)`)
    }
  }

  private async scrubAndStore (req: PublishFields, client: string | undefined, content: Buffer, rawHash: string, attachment: HeldAttachment | undefined): Promise<PublishResponse> {
    const fixed = content.length + POST_METADATA_BYTES
    if (fixed > MAX_POST_SIZE) throw tooLarge(fixed)
    // scrubbing shrinks images, not video or audio: those too large already are refused before the sidecar
    if (attachment !== undefined && !attachment.mime.startsWith('image/') && fixed + attachment.size > MAX_POST_SIZE) throw tooLarge(fixed + attachment.size)
    // funds and bounds before any scrubbing, on the size known so far (the least the post can be);
    // held while the attachment is scrubbed, so concurrent publishes of one author count each other
    const claim: Claim = { author: req.author, client, size: fixed }
    this.admit(claim, fixed)
    this.ledger.add(claim)
    let kept = false
    try {
      const answer = await this.scrubAndKeep(req, claim, content, rawHash, attachment)
      kept = true
      return answer
    } finally {
      if (!kept) this.ledger.remove(claim)
    }
  }

  private async scrubAndKeep (req: PublishFields, claim: Claim, content: Buffer, rawHash: string, attachment: HeldAttachment | undefined): Promise<PublishResponse> {
    const fixed = claim.size
    const scrubbed = attachment === undefined ? undefined : await attachment.scrub()
    const size = fixed + (scrubbed?.bytes.length ?? 0)
    if (size > MAX_POST_SIZE) throw tooLarge(size)
    if (size !== claim.size) {
      // the exact size: its fee and bytes checked again, with this publish's own hold taken out
      this.ledger.remove(claim)
      try {
        this.admit(claim, size)
        claim.size = size
      } finally {
        this.ledger.add(claim)
      }
    }
    const limit = this.opts.diskLimitBytes
    if (limit !== undefined && this.usedBytes + this.reservedBytes + size > limit) {
      throw new KithError('FEED_QUOTA_EXCEEDED', `the feed disk quota of ${Math.floor(limit / 1024 / 1024)} MiB (--feed-disk-limit-mb) is exhausted: this node takes no new post bodies`)
    }
    const hashtags = extractHashtags(req.content)
    const chars = [...req.content]
    const meta: BodyMeta = {
      author: req.author,
      content_type: req.content_type,
      hashtags,
      preview: chars.length > PREVIEW_CHARS ? chars.slice(0, PREVIEW_CHARS).join('') : req.content,
      content_chars: chars.length,
      attachment_mime: scrubbed?.mime ?? '',
      attachment_bytes: scrubbed?.bytes.length ?? 0,
      size,
      content_hash: sha256Hex(content, scrubbed?.bytes),
      raw_hash: rawHash,
      reply_to: req.reply_to ?? '',
      quote_of: req.quote_of ?? '',
      published_at: this.nowS(),
      hashtag_rule: HASHTAG_RULE
    }
    this.reservedBytes += size
    try {
      await this.store.put(req.post_id, meta, { content: req.content, attachment: scrubbed?.bytes })
      // once the store has changed: a listing read meanwhile may have kept the old
      this.presented.forget([req.post_id])
      this.usedBytes += size
      // the publish's hold becomes the pending body's
      this.pending.set(req.post_id, Object.assign(claim, { publishedAtMs: this.now(), claimedAtMs: 0 }))
    } finally {
      this.reservedBytes -= size
    }
    return this.answer(req.post_id, meta)
  }

  /**
   * Whether `claim`'s author and address may hold one more pending body of `size` bytes: the
   * author's committed balance covers the least fee of its CREATE_POST plus those of the author's
   * other pending bodies (402), and the per-author and per-address bounds hold (429).
   */
  private admit (claim: Claim, size: number): void {
    const held = this.ledger.ofAuthor(claim.author)
    const fee = postFee(size)
    const balance = balanceOf(this.opts.chain.state, claim.author)
    if (balance < held.fees + fee) {
      const others = held.count === 0 ? '' : ` plus ${held.fees} µT for the ${held.count} post(s) it published here that are not committed yet`
      throw new KithError('FEED_INSUFFICIENT_FUNDS',
        `insufficient funds: the author's committed balance is ${balance} µT, less than the ${fee} µT the CREATE_POST of this post costs at least${others} (fund the account first)`)
    }
    const limits = this.pendingLimits
    over('author', held, limits.maxPerAuthor, limits.maxBytesPerAuthor, size)
    if (claim.client !== undefined) over('client address', this.ledger.ofClient(claim.client), limits.maxPerClient, limits.maxBytesPerClient, size)
  }

  private addPending (id: string, body: PendingBody): void {
    this.pending.set(id, body)
    this.ledger.add(body)
  }

  /** Forgets a pending body (committed, deleted or collected); its bytes leave the quota elsewhere. */
  private dropPending (id: string): PendingBody | undefined {
    const body = this.pending.get(id)
    if (body === undefined) return undefined
    this.pending.delete(id)
    this.ledger.remove(body)
    return body
  }

  private answer (postId: string, meta: BodyMeta): PublishResponse {
    return {
      post_id: postId,
      hosting_relay: this.opts.hostingRelay,
      content_hash: meta.content_hash,
      size: meta.size,
      hashtags: meta.hashtags,
      estimated_fee_ut: postFee(meta.size)
    }
  }

  /**
   * A CREATE_POST submitted to this node that names this node as its hosting relay must match
   * the body published here (spec, CREATE_POST validation). Other nodes cannot check this, so
   * it is a submission check, not a block rule.
   */
  checkSubmission (checked: CheckedTx): void {
    if (checked.tx.type !== 'CREATE_POST') return
    const payload = checked.payload as CreatePostPayload
    if (payload.hosting_relay !== this.opts.hostingRelay) return
    const meta = this.store.meta(payload.post_id)
    if (meta === undefined) throw new KithError('TX_UNKNOWN_TARGET', `CREATE_POST names this node as hosting_relay, but no body for post ${payload.post_id} was published here (POST /feed/publish first)`)
    const mismatch = meta.author !== checked.tx.from
      ? 'author'
      : meta.content_hash !== Buffer.from(payload.content_hash, 'base64').toString('hex')
        ? 'content_hash'
        : meta.size !== payload.size
          ? 'size'
          : meta.reply_to !== payload.reply_to ? 'reply_to' : meta.quote_of !== payload.quote_of ? 'quote_of' : undefined
    if (mismatch !== undefined) throw new KithError('TX_INVALID', `CREATE_POST ${mismatch} does not match the body published to this node for post ${payload.post_id}`)
    const pending = this.pending.get(payload.post_id)
    if (pending !== undefined) pending.claimedAtMs = this.now()
  }

  // ---- blocks ----

  /** Brings the indexes and the body store up to date with a committed block. */
  async applyBlock (txs: readonly Transaction[]): Promise<void> {
    const state = this.opts.chain.state
    const gone: string[] = []
    for (const tx of txs) {
      switch (tx.type) {
        case 'CREATE_POST': {
          const id = postIdOf(tx)
          const post = Posts.get(state, id)
          if (post === undefined || post.deleted || post.tx_id !== tx.id) break
          const meta = this.localMeta(id, post)
          if (meta !== undefined) this.dropPending(id)
          this.index.add({ id, author: post.author, created: post.created_ms, likes: post.likes, views: 0, tags: meta?.hashtags })
          const entry = this.index.get(id)
          if (entry !== undefined) this.homes.added(entry)
          break
        }
        case 'DELETE_POST': {
          const id = postIdOf(tx)
          this.index.remove(id)
          const meta = this.store.meta(id)
          if (meta !== undefined) {
            this.usedBytes -= meta.size
            this.dropPending(id)
          }
          gone.push(id) // its body when it is here, and its view count
          break
        }
        case 'FOLLOW':
        case 'UNFOLLOW':
          this.homes.followsChanged(tx.from)
          break
        case 'LIKE_POST':
        case 'UNLIKE_POST': {
          const id = postIdOf(tx)
          const post = Posts.get(state, id)
          if (post !== undefined) this.index.setLikes(id, post.likes)
          this.likers.changed(id, tx.from, () => Posts.liked(state, id, tx.from))
          break
        }
        default:
          break
      }
    }
    // a deleted post's body is removed from disk: every read of it answers 410 from now on
    await this.store.remove(gone)
    this.presented.forget(gone)
    this.likers.forget(gone)
  }

  /** Collects bodies published but never committed once their TTL has passed. */
  async sweep (): Promise<number> {
    const now = this.now()
    const ttl = this.pendingTtlMs
    const expired: string[] = []
    for (const [id, body] of this.pending) {
      if (body.publishedAtMs + ttl <= now && body.claimedAtMs + CLAIM_GRACE_MS <= now && Posts.get(this.opts.chain.state, id) === undefined) {
        expired.push(id)
      }
    }
    for (const id of expired) this.usedBytes -= this.dropPending(id)?.size ?? 0
    await this.store.remove(expired)
    this.presented.forget(expired)
    this.index.prune(this.now())
    if (expired.length > 0) this.log.info({ count: expired.length }, 'collected post bodies that were never committed')
    return expired.length
  }

  // ---- reads ----

  /** The committed, undeleted post: 404 unknown, 410 deleted. */
  private livePost (id: string): PostRecord {
    const post = Posts.get(this.opts.chain.state, id)
    if (post === undefined) throw new KithError('NOT_FOUND', `unknown post ${id}`)
    if (post.deleted) throw new KithError('POST_GONE', `post ${id} was deleted by its author`)
    return post
  }

  post (id: string): Record<string, unknown> {
    const post = this.livePost(id)
    const meta = this.localMeta(id, post)
    const body = meta === undefined ? undefined : this.store.body(id)
    if (meta === undefined || body === undefined) throw notHere(id, post)
    return {
      post_id: id,
      author: post.author,
      content: body.content,
      content_type: meta.content_type,
      hashtags: meta.hashtags,
      created_at: unixSeconds(post.created_ms),
      reply_to: post.reply_to,
      quote_of: post.quote_of,
      attachment: body.attachment?.toString('base64') ?? '',
      attachment_mime: meta.attachment_mime,
      size: post.size,
      content_hash: post.content_hash,
      hosting_relay: post.hosting_relay
    }
  }

  attachment (id: string): { bytes: Buffer, mime: string } {
    const post = this.livePost(id)
    const meta = this.localMeta(id, post)
    if (meta === undefined) throw notHere(id, post)
    const bytes = meta.attachment_mime === '' ? undefined : this.store.attachment(id)
    if (bytes === undefined) throw new KithError('NOT_FOUND', `post ${id} has no attachment`)
    return { bytes, mime: meta.attachment_mime }
  }

  /** Counts a view from `client` (its address): at most one per client per post per hour. */
  view (id: string, client: string): { post_id: string, views: number } {
    this.livePost(id)
    const entry = this.index.get(id)
    if (entry === undefined) return { post_id: id, views: 0 }
    if (!this.views.take(client, id, this.now())) return { post_id: id, views: entry.views }
    const views = this.index.addView(id) ?? entry.views
    this.store.saveViews(id, views)
    return { post_id: id, views }
  }

  stats (id: string, me: string | undefined): Record<string, unknown> {
    const post = this.livePost(id)
    return {
      post_id: id,
      views: this.index.get(id)?.views ?? 0,
      likes: post.likes,
      ...(me !== undefined ? { liked_by_me: Posts.liked(this.opts.chain.state, id, me) } : {})
    }
  }

  byAuthor (author: string, query: ListQuery): PostPage {
    return this.page(query, (page) => this.index.byAuthor(author, page))
  }

  byTag (tag: string, query: ListQuery): PostPage {
    return this.page(query, (page) => this.index.byTag(tag, page))
  }

  /** Posts of everyone `follower` follows by committed FOLLOWs, newest first. */
  timeline (follower: string, query: ListQuery): PostPage {
    return this.page(query, (page) => this.homes.page(follower, () => this.followed(follower), page))
  }

  trending (windowHours: number, limit: number): PostPage {
    return new PostPage(this.index.trending(windowHours, limit, this.now()).map((p) => this.present(p)))
  }

  /** Recent posts ranked by likes × 3 + views + 1, leaving out the reader's own, followed authors' and liked ones. */
  forYou (pub: string, limit: number): PostPage {
    const followed = this.homes.followsOf(pub, () => this.followed(pub))
    const state = this.opts.chain.state
    // a post the index counts no like for is not the reader's liked one: nothing to read for it
    const exclude = (p: IndexedPost): boolean => p.author === pub || followed.has(p.author) ||
      (p.likes > 0 && (this.likers.likes(p.id, p.likes, pub) ?? Posts.liked(state, p.id, pub)))
    return new PostPage(this.index.forYou(limit, this.now(), exclude, FOR_YOU_MAX_SCAN).map((p) => this.present(p)))
  }

  /** Stored bytes of bodies, against the quota. */
  diskUsage (): { usedBytes: number, limitBytes: number | undefined, pendingBodies: number } {
    return { usedBytes: this.usedBytes, limitBytes: this.opts.diskLimitBytes, pendingBodies: this.pending.size }
  }

  private followed (follower: string): string[] {
    const prefix = StateKeys.follow(follower, '')
    const authors: string[] = []
    for (const [key] of this.opts.chain.scan(prefix)) authors.push(key.slice(prefix.length))
    return authors
  }

  private page (query: ListQuery, read: (page: { limit: number, before?: Position }) => IndexedPost[]): PostPage {
    const before = positionOf(query)
    const found = read({ limit: query.limit + 1, ...(before !== undefined ? { before } : {}) })
    const posts = found.slice(0, query.limit)
    const last = posts.at(-1)
    return new PostPage(posts.map((p) => this.present(p)), found.length > query.limit && last !== undefined ? encodeCursor(last) : null)
  }

  /** A list entry: the index's counts, the on-chain record, and the body's metadata when it is here. */
  private present (p: IndexedPost): { post: ListedPost, likes: number, views: number } {
    const kept = this.presented.get(p.id)
    if (kept !== undefined) return { post: kept, likes: p.likes, views: p.views }
    const post = Posts.get(this.opts.chain.state, p.id)
    const meta = post === undefined ? undefined : this.localMeta(p.id, post)
    const fixed: FixedItem = {
      post_id: p.id,
      author: p.author,
      created_at: unixSeconds(p.created),
      content_preview: meta?.preview ?? '',
      content_truncated: meta !== undefined && meta.content_chars > PREVIEW_CHARS,
      content_type: meta?.content_type ?? '',
      hashtags: meta?.hashtags ?? [],
      has_attachment: meta !== undefined && meta.attachment_mime !== '',
      attachment_mime: meta?.attachment_mime ?? '',
      reply_to: post?.reply_to ?? '',
      quote_of: post?.quote_of ?? '',
      hosting_relay: post?.hosting_relay ?? '',
      size: post?.size ?? 0,
      body_available: meta !== undefined
    }
    const listed = new ListedPost(fixed)
    // kept whether its body is here or not: a body stored later forgets the entry (scrubAndKeep)
    if (post !== undefined) this.presented.keep(p.id, listed)
    return { post: listed, likes: p.likes, views: p.views }
  }

  /** The body's metadata when this node holds the body the chain committed to. */
  private localMeta (id: string, post: PostRecord): BodyMeta | undefined {
    if (post.hosting_relay !== this.opts.hostingRelay) return undefined
    const meta = this.store.meta(id)
    return meta !== undefined && bodyMatches(meta, post, this.opts.hostingRelay) ? meta : undefined
  }

  private nowS (): number {
    return Math.floor(this.now() / 1000)
  }
}

function bodyMatches (meta: BodyMeta, post: PostRecord, hostingRelay: string): boolean {
  return post.hosting_relay === hostingRelay && meta.content_hash === post.content_hash && meta.size === post.size && meta.author === post.author
}

/** Refuses one more pending body of `size` bytes past a bound (0: none) on what `holder` holds. */
function over (holder: string, held: { count: number, bytes: number }, maxCount: number, maxBytes: number, size: number): void {
  const tooMany = maxCount > 0 && held.count + 1 > maxCount
  if (!tooMany && !(maxBytes > 0 && held.bytes + size > maxBytes)) return
  const bound = tooMany ? `at most ${maxCount} may wait` : `at most ${maxBytes} bytes may wait (this post is ${size})`
  throw new KithError('FEED_PENDING_LIMIT',
    `too many uncommitted posts from this ${holder}: ${held.count} published here (${held.bytes} bytes) wait for their CREATE_POST, and ${bound}; ` +
    'submit their CREATE_POSTs (a committed post leaves the count), or wait until uncommitted ones are collected 24 h after publishing')
}

function sha256Hex (first: Buffer, second?: Buffer): string {
  const hash = createHash('sha256').update(first)
  if (second !== undefined) hash.update(second)
  return hash.digest('hex')
}

function tooLarge (size: number): KithError {
  return new KithError('POST_TOO_LARGE', `post of ${size} bytes (content + scrubbed attachment + ${POST_METADATA_BYTES}) is larger than MaxPostSize (${MAX_POST_SIZE} bytes)`)
}

function notHere (id: string, post: PostRecord): KithError {
  return new KithError('NOT_FOUND', `the body of post ${id} is not on this node: its hosting relay is ${post.hosting_relay} (feed bodies are not replicated)`)
}

function postIdOf (tx: Transaction): string {
  const postId = decodePayload(tx).post_id
  return typeof postId === 'string' ? postId : ''
}

function encodeCursor (p: Position): string {
  return Buffer.from(`${p.created}:${p.id}`, 'utf8').toString('base64url')
}

function positionOf (query: ListQuery): Position | undefined {
  if (query.cursor !== undefined) {
    if (query.before !== undefined) throw new KithError('BAD_REQUEST', 'pass either `before` or `cursor`, not both')
    const [created, id] = Buffer.from(query.cursor, 'base64url').toString('utf8').split(':')
    if (!/^\d+$/.test(created ?? '') || !/^[0-9a-f]{32}$/.test(id ?? '')) throw new KithError('BAD_REQUEST', 'cursor: not a cursor this node gave out (use next_cursor as it is)')
    return { created: Number(created), id }
  }
  // `before` is a second: every post of that second or later is left out
  return query.before === undefined ? undefined : { created: query.before * 1000, id: '' }
}
