/**
 * FeedService over a real body store (lmdb in a temporary directory) and chain state that real
 * feed transactions are applied to, with a controlled clock: publish rules, the local
 * CREATE_POST check, blocks, deletes, reads, quota, collection of uncommitted bodies, restart.
 * Attachments go through the real media scrubber in the HTTP tests (test/integration/feed.test.ts).
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import type { MemoryState} from '../../../src/chain/index.js';
import {
  GenesisSchema, StateOverlay, applyTx, checkStateless, genesisState, postFee, type BlockContext, type StateValue, type Transaction
} from '../../../src/chain/index.js'
import { accountFrom, createPostTx, followTx, postActionTx, publishRequest, type Account, type PublishResponse } from '../../../src/client/index.js'
import { KithError } from '../../../src/errors/index.js'
import { FeedService, DEFAULT_PENDING_TTL_MS, decodePublishBytes, type FeedChain, type HeldPublish } from '../../../src/feed/index.js'
import { FeedBodyStore, type BodyMeta } from '../../../src/feed/body-store.js'
import { aliceKey, bobKey, carolKey, validatorKey, VALIDATOR, ALICE, BOB, CAROL } from '../../helpers/fixtures.js'

const alice = accountFrom(aliceKey)
const bob = accountFrom(bobKey)
const carol = accountFrom(carolKey)
const RELAY = VALIDATOR
const GENESIS = GenesisSchema.parse({
  chain_id: 'kith-test',
  genesis_time: '2026-01-01T00:00:00Z',
  validators: [{ pub_key: VALIDATOR, power: 1 }],
  alloc: [ALICE, BOB, CAROL].map((pub) => ({ pub_key: pub, amount_ut: 100_000_000 })),
  relays: [{ pub_key: RELAY, x25519_pub_key: 'c3'.repeat(32), fee_per_msg_ut: 0 }]
})

/** A chain of MemoryState with real rules: blocks are lists of transactions applied in order. */
class TestChain implements FeedChain {
  readonly state: MemoryState = genesisState(GENESIS).state
  height = 0

  scan (prefix: string): Array<[string, StateValue]> {
    const keys = [...this.state.data.keys()].filter((k) => k.startsWith(prefix)).sort()
    return keys.map((key) => [key, this.state.data.get(key) as StateValue])
  }

  commit (txs: Transaction[], timeMs: number): void {
    this.height += 1
    const overlay = new StateOverlay(this.state)
    const ctx: BlockContext = { height: this.height, time: timeMs, proposer: VALIDATOR, params: GENESIS.params }
    for (const tx of txs) applyTx(overlay, checkStateless(tx), ctx)
    this.state.apply(overlay.writes)
  }
}

const noScrubber = {
  async scrub (): Promise<never> { throw new Error('text-only tests never scrub') }
}

async function expectError (promise: Promise<unknown> | (() => unknown), code: string, mentions?: string): Promise<void> {
  try {
    await (typeof promise === 'function' ? promise() : promise)
  } catch (err) {
    assert.ok(err instanceof KithError, `expected a KithError, got ${String(err)}`)
    assert.equal(err.code, code, err.message)
    if (mentions !== undefined) assert.ok(err.message.includes(mentions), `"${err.message}" should mention ${mentions}`)
    return
  }
  assert.fail(`expected ${code}`)
}

describe('FeedService', () => {
  let dir: string
  let nowMs = Date.parse('2026-05-01T12:00:00Z')
  const clock = (): number => nowMs
  let chain: TestChain
  let feed: FeedService

  async function openFeed (opts: { diskLimitBytes?: number } = {}): Promise<FeedService> {
    const service = new FeedService({
      dataDir: dir, chain, hostingRelay: RELAY, scrubber: noScrubber, logger: pino({ level: 'silent' }), now: clock, sync: false, ...opts
    })
    await service.open()
    return service
  }

  async function publishAndCommit (author: Account, content: string, opts: { replyTo?: string, quoteOf?: string } = {}): Promise<PublishResponse> {
    const published = await feed.publish(publishRequest(author, { content, ts: Math.floor(nowMs / 1000), ...opts }))
    const tx = createPostTx(author, published, { ...opts, time: nowMs })
    feed.checkSubmission(checkStateless(tx))
    chain.commit([tx], nowMs)
    await feed.applyBlock([tx])
    return published
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kith-feed-'))
    chain = new TestChain()
    feed = await openFeed()
  })

  after(async () => {
    await feed.stop()
    await rm(dir, { recursive: true, force: true })
  })

  test('publish answers the fields of the CREATE_POST: size = content bytes + 128, the exact fee, hashtags', async () => {
    const content = 'Hello #World from Zürich #world #kith'
    const answer = await feed.publish(publishRequest(alice, { content, ts: Math.floor(nowMs / 1000) }))
    const bytes = Buffer.byteLength(content, 'utf8')
    assert.equal(answer.size, bytes + 128)
    assert.equal(answer.estimated_fee_ut, 1000 + answer.size)
    assert.equal(answer.estimated_fee_ut, postFee(answer.size))
    assert.deepEqual(answer.hashtags, ['world', 'kith'])
    assert.equal(answer.hosting_relay, RELAY)
    assert.match(answer.content_hash, /^[0-9a-f]{64}$/)
  })

  test('publish refuses a body its CREATE_POST could never commit: the hosting node\'s own key as author, or a node that is no registered relay', async () => {
    const ts = Math.floor(nowMs / 1000)
    const operator = accountFrom(validatorKey)
    await expectError(feed.publish(publishRequest(operator, { content: 'my own node', ts })), 'FEED_BAD_HOSTING_RELAY', 'post from another key')
    const unregistered = new FeedService({
      dataDir: join(dir, 'unregistered'), chain, hostingRelay: BOB, scrubber: noScrubber, logger: pino({ level: 'silent' }), now: clock, sync: false
    })
    await unregistered.open()
    try {
      await expectError(unregistered.publish(publishRequest(alice, { content: 'hosted nowhere', ts })), 'UNAVAILABLE', 'not a registered relay')
    } finally {
      await unregistered.stop()
    }
  })

  test('a retry of the same publish gets the same answer; other content under the same id is refused', async () => {
    const req = publishRequest(alice, { content: 'retry me', ts: Math.floor(nowMs / 1000) })
    const first = await feed.publish(req)
    assert.deepEqual(await feed.publish(req), first)
    const other = publishRequest(alice, { content: 'something else', postId: req.post_id, ts: req.ts })
    await expectError(feed.publish(other), 'BAD_REQUEST', 'already published')
  })

  test('publish rules: ts within ±5 minutes, the author\'s signature, reply/quote exclusive, MaxPostSize', async () => {
    const ts = Math.floor(nowMs / 1000)
    await expectError(feed.publish(publishRequest(alice, { content: 'late', ts: ts - 301 })), 'FEED_STALE_TS', 'timestamp')
    await expectError(feed.publish(publishRequest(alice, { content: 'early', ts: ts + 301 })), 'FEED_STALE_TS', 'timestamp')
    await feed.publish(publishRequest(alice, { content: 'on the edge', ts: ts - 300 }))
    const forged = { ...publishRequest(alice, { content: 'mine', ts }), author: BOB }
    await expectError(feed.publish(forged), 'FEED_BAD_SIGNATURE', 'signature')
    const tampered = { ...publishRequest(alice, { content: 'original', ts }), content: 'changed' }
    await expectError(feed.publish(tampered), 'FEED_BAD_SIGNATURE', 'signature')
    const p = 'f'.repeat(32)
    await expectError(feed.publish(publishRequest(alice, { content: 'both', replyTo: p, quoteOf: p, ts })), 'BAD_REQUEST', 'mutually exclusive')
    await expectError(feed.publish(publishRequest(alice, { content: 'x'.repeat(256 * 1024 - 128 + 1), ts })), 'POST_TOO_LARGE', 'MaxPostSize')
    await feed.publish(publishRequest(alice, { content: 'x'.repeat(256 * 1024 - 128), ts }))
    await expectError(feed.publish({ ...publishRequest(alice, { content: 'a', ts }), post_id: 'nope' }), 'BAD_REQUEST', 'post_id')
    await expectError(feed.publish({ ...publishRequest(alice, { content: 'a', ts }), attachment_b64: 'AAAA' }), 'BAD_REQUEST', 'attachment_mime')
  })

  test('a CREATE_POST submitted here must match the body published here', async () => {
    const ts = Math.floor(nowMs / 1000)
    const published = await feed.publish(publishRequest(alice, { content: 'check me', ts }))
    const ok = createPostTx(alice, published, { time: nowMs })
    feed.checkSubmission(checkStateless(ok))
    await expectError(() => feed.checkSubmission(checkStateless(createPostTx(alice, { ...published, size: published.size + 1, estimated_fee_ut: postFee(published.size + 1) }, { time: nowMs }))), 'TX_INVALID', 'size')
    await expectError(() => feed.checkSubmission(checkStateless(createPostTx(alice, { ...published, content_hash: 'ab'.repeat(32) }, { time: nowMs }))), 'TX_INVALID', 'content_hash')
    await expectError(() => feed.checkSubmission(checkStateless(createPostTx(bob, published, { time: nowMs }))), 'TX_INVALID', 'author')
    await expectError(() => feed.checkSubmission(checkStateless(createPostTx(alice, { ...published, post_id: 'e'.repeat(32) }, { time: nowMs }))), 'TX_UNKNOWN_TARGET', 'no body')
    // another hosting relay: not this node's to check
    feed.checkSubmission(checkStateless(createPostTx(alice, { ...published, hosting_relay: CAROL, post_id: 'e'.repeat(32) }, { time: nowMs })))
  })

  test('committed posts are readable and listed; deleted ones answer 410 and leave every list', async () => {
    const first = await publishAndCommit(alice, 'first post #news')
    nowMs += 1000
    const second = await publishAndCommit(alice, 'second post #news')
    const body = feed.post(first.post_id)
    assert.equal(body.content, 'first post #news')
    assert.equal(body.created_at, Math.floor((nowMs - 1000) / 1000))
    assert.deepEqual(body.hashtags, ['news'])
    const listed = feed.byAuthor(ALICE, { limit: 10 }).posts.map((p) => p.post_id)
    assert.deepEqual(listed.slice(0, 2), [second.post_id, first.post_id])
    assert.deepEqual(feed.byTag('news', { limit: 10 }).posts.map((p) => p.post_id), [second.post_id, first.post_id])

    const used = feed.diskUsage().usedBytes
    const del = postActionTx(alice, 'DELETE_POST', first.post_id, { time: nowMs })
    chain.commit([del], nowMs)
    await feed.applyBlock([del])
    await expectError(() => feed.post(first.post_id), 'POST_GONE')
    await expectError(() => feed.stats(first.post_id, undefined), 'POST_GONE')
    await expectError(() => feed.view(first.post_id, '1.2.3.4'), 'POST_GONE')
    await expectError(() => feed.attachment(first.post_id), 'POST_GONE')
    assert.deepEqual(feed.byTag('news', { limit: 10 }).posts.map((p) => p.post_id), [second.post_id])
    assert.equal(feed.diskUsage().usedBytes, used - first.size, 'the deleted body no longer counts against the quota')
    await expectError(() => feed.post('0'.repeat(32)), 'NOT_FOUND')
  })

  test('views: one per address per hour; stats with liked_by_me only when asked', async () => {
    const post = await publishAndCommit(bob, 'view me')
    assert.equal(feed.view(post.post_id, '10.0.0.1').views, 1)
    assert.equal(feed.view(post.post_id, '10.0.0.1').views, 1)
    assert.equal(feed.view(post.post_id, '10.0.0.2').views, 2)
    const like = postActionTx(alice, 'LIKE_POST', post.post_id, { time: nowMs })
    chain.commit([like], nowMs)
    await feed.applyBlock([like])
    assert.deepEqual(feed.stats(post.post_id, undefined), { post_id: post.post_id, views: 2, likes: 1 })
    assert.deepEqual(feed.stats(post.post_id, ALICE), { post_id: post.post_id, views: 2, likes: 1, liked_by_me: true })
    assert.equal(feed.stats(post.post_id, CAROL).liked_by_me, false)
  })

  test('timeline follows committed FOLLOWs; for-you leaves out own, followed and liked posts', async () => {
    nowMs += 1000
    const byCarol = await publishAndCommit(carol, 'carol writes')
    const follow = followTx(bob, 'FOLLOW', CAROL, { time: nowMs })
    assert.deepEqual(feed.timeline(BOB, { limit: 10 }).posts, [])
    chain.commit([follow], nowMs)
    await feed.applyBlock([follow])
    assert.deepEqual(feed.timeline(BOB, { limit: 10 }).posts.map((p) => p.post_id), [byCarol.post_id])
    // bob's home is kept between reads: a later post reaches it, and an UNFOLLOW empties it
    nowMs += 1000
    const again = await publishAndCommit(carol, 'carol again')
    assert.deepEqual(feed.timeline(BOB, { limit: 10 }).posts.map((p) => p.post_id), [again.post_id, byCarol.post_id])
    const unfollow = followTx(bob, 'UNFOLLOW', CAROL, { time: nowMs })
    chain.commit([unfollow], nowMs)
    await feed.applyBlock([unfollow])
    assert.deepEqual(feed.timeline(BOB, { limit: 10 }).posts, [])
    const refollow = followTx(bob, 'FOLLOW', CAROL, { time: nowMs + 1 })
    chain.commit([refollow], nowMs)
    await feed.applyBlock([refollow])
    const forBob = feed.forYou(BOB, 50).posts.map((p) => p.post_id)
    assert.ok(!forBob.includes(byCarol.post_id), 'followed author left out')
    assert.ok(feed.forYou(ALICE, 50).posts.some((p) => p.post_id === byCarol.post_id), 'reaches a reader who does not follow carol')
    assert.ok(feed.forYou(BOB, 50).posts.every((p) => p.author !== BOB), 'own posts left out')
    const like = postActionTx(alice, 'LIKE_POST', byCarol.post_id, { time: nowMs })
    chain.commit([like], nowMs)
    await feed.applyBlock([like])
    assert.ok(!feed.forYou(ALICE, 50).posts.some((p) => p.post_id === byCarol.post_id), 'liked post left out')
  })

  test('for-you follows likes and unlikes of a post whose likers it keeps, and ignores one the chain refused', async () => {
    nowMs += 1000
    const post = await publishAndCommit(alice, 'liked by many')
    const shown = (reader: string): boolean => feed.forYou(reader, 50).posts.some((p) => p.post_id === post.post_id)
    const apply = async (tx: Transaction): Promise<void> => { chain.commit([tx], nowMs); await feed.applyBlock([tx]) }
    await apply(postActionTx(carol, 'LIKE_POST', post.post_id, { time: nowMs }))
    assert.ok(shown(BOB), 'bob has not liked it: its likers are read and kept')
    assert.ok(!shown(CAROL))
    await apply(postActionTx(bob, 'LIKE_POST', post.post_id, { time: nowMs + 1 }))
    assert.ok(!shown(BOB), 'a like committed after the likers were kept')
    await apply(postActionTx(bob, 'UNLIKE_POST', post.post_id, { time: nowMs + 2 }))
    assert.ok(shown(BOB), 'and an unlike')
    // a block holding a like the chain did not apply (the state has no like) changes nothing
    const refused = postActionTx(bob, 'LIKE_POST', post.post_id, { time: nowMs + 3 })
    await feed.applyBlock([refused])
    assert.ok(shown(BOB))
  })

  test('paging: `before` as the spec gives it, and next_cursor without gaps or repeats in one second', async () => {
    const author = accountFrom()
    chain.state.data.set(`bal:${author.pub}`, 100_000_000)
    nowMs += 10_000
    const made: string[] = []
    for (let i = 0; i < 7; i++) made.push((await publishAndCommit(author, `same second ${i}`)).post_id)
    const seen: string[] = []
    let cursor: string | undefined
    for (;;) {
      const page = feed.byAuthor(author.pub, { limit: 3, ...(cursor !== undefined ? { cursor } : {}) })
      seen.push(...page.posts.map((p) => p.post_id))
      if (page.next_cursor === null) break
      cursor = page.next_cursor
    }
    assert.deepEqual([...seen].sort(), [...made].sort())
    assert.equal(new Set(seen).size, 7)
    const createdAt = feed.byAuthor(author.pub, { limit: 1 }).posts[0].created_at
    assert.deepEqual(feed.byAuthor(author.pub, { limit: 10, before: createdAt }).posts, [], 'before leaves out the whole second')
    await expectError(() => feed.byAuthor(author.pub, { limit: 3, cursor: 'garbage', before: 5 }), 'BAD_REQUEST', 'either')
    await expectError(() => feed.byAuthor(author.pub, { limit: 3, cursor: 'garbage' }), 'BAD_REQUEST', 'cursor')
  })

  test('uncommitted bodies are collected after their TTL; committed ones and recently claimed ones are kept', async () => {
    const ts = Math.floor(nowMs / 1000)
    const lonely = await feed.publish(publishRequest(alice, { content: 'never committed', ts }))
    const claimed = await feed.publish(publishRequest(alice, { content: 'in the mempool', ts }))
    nowMs += DEFAULT_PENDING_TTL_MS - 60_000
    feed.checkSubmission(checkStateless(createPostTx(alice, claimed, { time: nowMs })))
    nowMs += 60_000
    const before = feed.diskUsage()
    const collected = await feed.sweep()
    assert.equal(collected, before.pendingBodies - 1, 'every uncommitted body but the claimed one (earlier tests left some)')
    assert.equal(feed.diskUsage().pendingBodies, 1)
    assert.ok(feed.diskUsage().usedBytes <= before.usedBytes - lonely.size, 'collected bodies leave the quota (the restart test checks the sum)')
    // the collected body is gone: a CREATE_POST for it is now refused here
    await expectError(() => feed.checkSubmission(checkStateless(createPostTx(alice, lonely, { time: nowMs }))), 'TX_UNKNOWN_TARGET', 'no body')
    feed.checkSubmission(checkStateless(createPostTx(alice, claimed, { time: nowMs })))
    assert.ok(feed.byAuthor(ALICE, { limit: 50 }).posts.length > 0, 'committed posts stay')
  })

  test('quota: a body that would pass --feed-disk-limit-mb is refused with 507', async () => {
    const used = feed.diskUsage().usedBytes
    await feed.stop()
    feed = await openFeed({ diskLimitBytes: used + 1000 })
    const ts = Math.floor(nowMs / 1000)
    await feed.publish(publishRequest(alice, { content: 'y'.repeat(800), ts }))
    await expectError(feed.publish(publishRequest(alice, { content: 'z'.repeat(800), ts })), 'FEED_QUOTA_EXCEEDED', 'quota')
  })

  test('a restart rebuilds the indexes, the quota and the view counts from disk and chain state', async () => {
    const listed = feed.byAuthor(ALICE, { limit: 50 }).posts
    const usage = feed.diskUsage()
    const withViews = feed.byAuthor(BOB, { limit: 50 }).posts
    await feed.stop()
    feed = await openFeed()
    assert.deepEqual(feed.byAuthor(ALICE, { limit: 50 }).posts, listed)
    assert.deepEqual(feed.byAuthor(BOB, { limit: 50 }).posts, withViews)
    assert.equal(feed.diskUsage().usedBytes, usage.usedBytes)
    assert.equal(feed.diskUsage().pendingBodies, usage.pendingBodies)
  })
  test('a listed post read again shows its new likes and views, members in the schema\'s order', async () => {
    nowMs += 1000
    const post = await publishAndCommit(carol, 'listed twice #again')
    const listed = (): Record<string, unknown> | undefined => feed.byTag('again', { limit: 10 }).posts.find((p) => p.post_id === post.post_id)
    assert.equal(listed()?.likes, 0)
    assert.equal(listed()?.body_available, true)
    const like = postActionTx(bob, 'LIKE_POST', post.post_id, { time: nowMs })
    chain.commit([like], nowMs)
    await feed.applyBlock([like])
    feed.view(post.post_id, '10.9.9.9')
    assert.deepEqual([listed()?.likes, listed()?.views], [1, 1], 'the counts are the index\'s, not kept with the rest')
    assert.equal(listed()?.content_preview, 'listed twice #again')
    assert.deepEqual(Object.keys(listed() ?? {}), ['post_id', 'author', 'created_at', 'content_preview', 'content_truncated', 'content_type', 'hashtags',
      'has_attachment', 'attachment_mime', 'likes', 'views', 'reply_to', 'quote_of', 'hosting_relay', 'size', 'body_available'])

  })
})

describe('FeedService: what a publish costs its author', () => {
  let dir: string
  const nowMs = Date.parse('2026-05-01T12:00:00Z')
  const ts = Math.floor(nowMs / 1000)
  let chain: TestChain
  let feed: FeedService
  const scrubbed: string[] = []
  let crowded: Account
  /** records every scrub: a refused publish must not get this far */
  const scrubber = {
    async scrub (bytes: Buffer, mime: string): Promise<{ bytes: Buffer, mime: string }> {
      scrubbed.push(mime)
      return { bytes: bytes.subarray(0, 100), mime }
    }
  }

  async function openFeed (pendingLimits = { maxPerAuthor: 3, maxBytesPerAuthor: 10_000, maxPerClient: 3, maxBytesPerClient: 0 }): Promise<FeedService> {
    const service = new FeedService({ dataDir: dir, chain, hostingRelay: RELAY, scrubber, logger: pino({ level: 'silent' }), now: () => nowMs, sync: false, pendingLimits })
    await service.open()
    return service
  }

  function funded (amountUt: number): Account {
    const account = accountFrom()
    if (amountUt > 0) chain.state.data.set(`bal:${account.pub}`, amountUt)
    return account
  }

  async function commit (author: Account, published: PublishResponse): Promise<void> {
    const tx = createPostTx(author, published, { time: nowMs })
    chain.commit([tx], nowMs)
    await feed.applyBlock([tx])
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kith-feed-funds-'))
    chain = new TestChain()
    feed = await openFeed()
  })

  after(async () => {
    await feed.stop()
    await rm(dir, { recursive: true, force: true })
  })

  test('a key holding nothing is refused (402) before its attachment is scrubbed, and nothing is stored', async () => {
    const broke = funded(0)
    const before = feed.diskUsage()
    await expectError(feed.publish(publishRequest(broke, { content: 'free ride', ts, attachment: Buffer.alloc(5000, 1), attachmentMime: 'image/png' })), 'FEED_INSUFFICIENT_FUNDS', 'balance is 0 µT')
    assert.deepEqual(scrubbed, [], 'no scrubbing work for it')
    assert.deepEqual(feed.diskUsage(), before)
  })

  test('the balance must cover this post\'s fee plus those of the author\'s other uncommitted posts; a commit pays one and frees it', async () => {
    const content = 'a'.repeat(872) // size 1000: fee 2000 µT
    const author = funded(2 * postFee(1000) + 1500)
    const first = await feed.publish(publishRequest(author, { content, ts }))
    assert.equal(first.estimated_fee_ut, 2000)
    await feed.publish(publishRequest(author, { content, ts }))
    await expectError(feed.publish(publishRequest(author, { content, ts })), 'FEED_INSUFFICIENT_FUNDS', 'plus 4000 µT for the 2 post(s)')
    // committing the first pays its 2000 µT: 3500 left, 2000 held by the second; room for a short third
    await commit(author, first)
    await expectError(feed.publish(publishRequest(author, { content, ts })), 'FEED_INSUFFICIENT_FUNDS', 'balance is 3500 µT')
    await feed.publish(publishRequest(author, { content: 'short', ts }))
  })

  test('the exact fee after scrubbing is checked too, before the body is stored', async () => {
    const author = funded(postFee(128 + 4) + 50)
    // 4 content bytes + 128 fit; the scrubbed 100-byte attachment does not
    await expectError(feed.publish(publishRequest(author, { content: 'pics', ts, attachment: Buffer.alloc(5000, 1), attachmentMime: 'image/png' })), 'FEED_INSUFFICIENT_FUNDS', 'less than the 1232 µT')
    assert.equal(feed.diskUsage().pendingBodies, 2, 'only the bodies of the test before')
  })

  test('an attachment held where it was decoded (an HTTP edge) is scrubbed there, once, and only after the publish is admitted', async () => {
    const held = (author: Account, content: string, asked: number[]): HeldPublish => {
      const { attachment, ...decoded } = decodePublishBytes(Buffer.from(JSON.stringify(publishRequest(author, { content, ts, attachment: Buffer.alloc(5000, 1), attachmentMime: 'image/png' }))))
      assert.ok(attachment !== undefined)
      return { ...decoded, attachment: { mime: attachment.mime, size: attachment.bytes.length, scrub: async () => { asked.push(1); return { bytes: attachment.bytes.subarray(0, 60), mime: 'image/jpeg' } } } }
    }
    const asked: number[] = []
    await expectError(feed.publishHeld(held(funded(0), 'unfunded', asked), undefined), 'FEED_INSUFFICIENT_FUNDS')
    assert.deepEqual(asked, [], 'a refused publish asks for no scrub')
    const pending = feed.diskUsage().pendingBodies
    const answer = await feed.publishHeld(held(funded(10_000_000), 'held elsewhere', asked), undefined)
    assert.deepEqual(asked, [1])
    assert.equal(answer.size, Buffer.byteLength('held elsewhere') + 60 + 128, 'the size counts the scrubbed bytes the edge sent back')
    assert.equal(feed.diskUsage().pendingBodies, pending + 1)
  })

  test('a service without a scrubber (edge threads take every publish) refuses an attachment that reaches it, and keeps nothing', async () => {
    const bare = new FeedService({ dataDir: join(dir, 'bare'), chain, hostingRelay: RELAY, logger: pino({ level: 'silent' }), now: () => nowMs, sync: false })
    await bare.open()
    try {
      await expectError(bare.publish(publishRequest(funded(10_000_000), { content: 'photo', ts, attachment: Buffer.alloc(5000, 1), attachmentMime: 'image/png' })), 'UNAVAILABLE', 'public address')
      assert.equal(bare.diskUsage().pendingBodies, 0)
    } finally {
      await bare.stop()
    }
  })

  test('uncommitted bodies are bounded per author and per client address (429), and a commit frees a place', async () => {
    const author = crowded = funded(100_000_000)
    const made: PublishResponse[] = []
    for (let i = 0; i < 3; i++) made.push(await feed.publish(publishRequest(author, { content: `pending ${i}`, ts }), '10.0.0.1'))
    await expectError(feed.publish(publishRequest(author, { content: 'one too many', ts }), '10.0.0.2'), 'FEED_PENDING_LIMIT', 'author: 3 published here')
    await commit(author, made[0])
    await feed.publish(publishRequest(author, { content: 'after a commit', ts }), '10.0.0.1')
    // 10.0.0.1 holds 3 again: another author from it is refused, from elsewhere admitted
    const other = funded(100_000_000)
    await expectError(feed.publish(publishRequest(other, { content: 'same address', ts }), '10.0.0.1'), 'FEED_PENDING_LIMIT', 'client address')
    await feed.publish(publishRequest(other, { content: 'another address', ts }), '10.0.0.3')
    // bytes too: 10,000 per author
    const big = funded(100_000_000)
    await feed.publish(publishRequest(big, { content: 'b'.repeat(9000), ts }))
    await expectError(feed.publish(publishRequest(big, { content: 'b'.repeat(1000), ts })), 'FEED_PENDING_LIMIT', 'at most 10000 bytes may wait')
  })

  test('bodies tagged by the old rule (no marks, no NFC) are tagged again from their text at start', async () => {
    const author = funded(100_000_000)
    const post = await feed.publish(publishRequest(author, { content: 'old #cafe\u0301 and #नमस्ते', ts }))
    await commit(author, post)
    assert.deepEqual(feed.byTag('caf\u00e9', { limit: 5 }).posts.map((p) => p.post_id), [post.post_id])
    await feed.stop()
    // what the rule before version 2 stored for this text
    const store = FeedBodyStore.open(join(dir, 'feed'), { sync: false })
    const old: BodyMeta = { ...(store.meta(post.post_id) as BodyMeta), hashtags: ['cafe', 'नमस'] }
    delete old.hashtag_rule
    await store.putMeta([[post.post_id, old]])
    await store.close()
    feed = await openFeed()
    assert.deepEqual(feed.byTag('caf\u00e9', { limit: 5 }).posts.map((p) => p.post_id), [post.post_id])
    assert.deepEqual(feed.byTag('नमस्ते', { limit: 5 }).posts.map((p) => p.post_id), [post.post_id])
    assert.deepEqual(feed.byTag('cafe', { limit: 5 }).posts, [])
    assert.deepEqual(feed.post(post.post_id).hashtags, ['caf\u00e9', 'नमस्ते'])
  })

  test('the holdings are rebuilt at start from the bodies on disk (by author; addresses are not stored)', async () => {
    await feed.stop()
    feed = await openFeed()
    await expectError(feed.publish(publishRequest(crowded, { content: 'still three waiting', ts }), '10.0.0.9'), 'FEED_PENDING_LIMIT', 'author: 3 published here')
    await feed.publish(publishRequest(funded(100_000_000), { content: 'the address starts afresh', ts }), '10.0.0.1')
  })
})
