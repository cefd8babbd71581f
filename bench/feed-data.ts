/**
 * The feed benchmark's data set, written straight into a `kith init` home before the node starts
 * (a pre-load: no transactions, no blocks). Chain state gets what the feed rules
 * (src/chain/rules/feed.ts) would have written: `post:<id>` records, `like:<post>:<pub>` for
 * the readers whose for-you is measured, and both keys of every follow relation. The node's
 * body store (`<home>/data/feed`, FeedBodyStore) gets the bodies of the posts this node hosts,
 * with the metadata FeedService writes at publish (so the node's start-up check finds each body
 * matching its record), and the view counts.
 *
 * Deterministic (a seeded PRNG), skewed where real feeds are: posts per author, followers per
 * author, likes per post and hashtags (Zipf-like ranks, a Pareto tail of likes).
 */
import { createHash } from 'node:crypto'
import { mkdirSync, renameSync, rmSync, statSync } from 'node:fs'
import path from 'node:path'
import { open } from 'lmdb'
import { pino } from 'pino'
import type { PostRecord, StateValue } from '../src/chain/index.js'
import { StateKeys } from '../src/chain/index.js'
import { FeedBodyStore, PREVIEW_CHARS, extractHashtags, type BodyMeta } from '../src/feed/index.js'
import { KithNode, loadHome } from '../src/node/index.js'
import { ChainStore } from '../src/storage/index.js'
import { rng } from '../test/sim/simulator.js'

export interface FeedDataSize {
  posts: number
  authors: number
  /** readers following 50-200 authors each (targets skewed towards heavy authors) */
  readers: number
  /** readers following ~1,000 authors (all of them when there are fewer) */
  heavyReaders: number
  /** readers (among `readers`) with real likes, whose for-you is measured */
  likers: number
  /** share of the posts whose body this node hosts */
  hostedShare: number
  /** hashtag vocabulary */
  tags: number
  /** PRNG seed */
  seed: number
}

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS
/** of the posts, this share is spread over the last 48 hours, the rest over the 5 days before */
const RECENT_SHARE = 0.8
const REPLY_SHARE = 0.1
const ATTACHMENT_SHARE = 0.15
/** bodies handed to lmdb at once (its async transactions batch into one commit) */
const BODY_BATCH = 2_000
/** state entries per synchronous lmdb transaction */
const STATE_BATCH = 100_000
/** posts that the view load aims at: the best of the last 24 hours */
const HOT_POSTS = 5_000

export interface PreloadResult {
  size: FeedDataSize
  /** unix ms the post times were spread back from */
  nowMs: number
  posts: number
  replies: number
  hostedBodies: number
  withAttachment: number
  followPairs: number
  likeKeys: number
  viewRows: number
  stateEntries: number
  /** the most used tags and one rare tag, with the hosted posts that carry them */
  commonTags: Array<{ tag: string, posts: number }>
  rareTag: { tag: string, posts: number }
  distinctTags: number
  heavyAuthors: Array<{ pub: string, posts: number, followers: number }>
  /** readers by how many authors they follow; likers have like keys */
  readers: { f50: string[], f200: string[], f1000: string[], likers: string[] }
  followCounts: { f50: [number, number], f200: [number, number], f1000: [number, number], likerLikes: [number, number] }
  /** the best posts of the last 24 hours (likes × 3 + views), best first */
  hotPosts: string[]
  seconds: { genesis: number, generate: number, state: number, bodies: number, compact: number, verify: number, total: number }
  /** pages holding lmdb's freelist (each lists up to 511 free page numbers) before the compacting copy: chain store, body store */
  freelistPagesBefore: [number, number]
  bytes: { chain: number, feed: number }
  likesMax: number
  /** posts with at least 1 / 10 / 100 / 1,000 likes */
  likesAtLeast: [number, number, number, number]
}

// ---------------------------------------------------------------------------------------
// randomness (rng: the simulator's seeded mulberry32)

function hex (rand: () => number, bytes: number): string {
  let out = ''
  for (let i = 0; i < bytes; i += 4) out += Math.floor(rand() * 4294967296).toString(16).padStart(8, '0')
  return out.slice(0, bytes * 2)
}

/** Ranks 0..n-1 drawn with weight 1/(rank+1)^s. */
function zipf (n: number, s: number, rand: () => number): () => number {
  const cum = new Float64Array(n)
  let total = 0
  for (let i = 0; i < n; i++) { total += 1 / Math.pow(i + 1, s); cum[i] = total }
  return () => {
    const u = rand() * total
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (cum[mid] < u) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

/** Likes of a post: P(likes ≥ k) = (k + 1)^-1.2, so most posts have none and a few thousands. */
function paretoLikes (rand: () => number): number {
  return Math.min(200_000, Math.floor(Math.pow(1 - rand(), -1 / 1.2)) - 1)
}

const WORDS = ('the a of and to in is it you that was for on are with as this be at one have from or had by word but what some we can out other were all there ' +
  'when up use your how said an each she which do their time if will way about many then them write would like so these her long make thing see him two has ' +
  'look more day could go come did number sound no most people my over know water than call first who may down side been now find morning light coffee city ' +
  'walk train photo street market river sunset friends music night garden book rain summer winter bread').split(' ')

function sentence (rand: () => number, chars: number): string {
  const words: string[] = []
  let n = 0
  while (n < chars) {
    const w = WORDS[Math.floor(rand() * WORDS.length)]
    words.push(w)
    n += w.length + 1
  }
  return words.join(' ')
}

// ---------------------------------------------------------------------------------------
// the data set

interface Posts {
  ids: string[]
  author: Int32Array
  created: Float64Array
  likes: Int32Array
  views: Int32Array
  hosted: Uint8Array
  replyTo: Int32Array
}

function makePosts (size: FeedDataSize, nowMs: number, rand: () => number): Posts {
  const n = size.posts
  const posts: Posts = {
    ids: new Array<string>(n),
    author: new Int32Array(n),
    created: new Float64Array(n),
    likes: new Int32Array(n),
    views: new Int32Array(n),
    hosted: new Uint8Array(n),
    replyTo: new Int32Array(n).fill(-1)
  }
  // posts per author: Zipf over author ranks (rank 0 posts most)
  const authorOf = zipf(size.authors, 0.8, rand)
  for (let i = 0; i < n; i++) {
    posts.ids[i] = hex(rand, 16)
    posts.author[i] = authorOf()
    const recent = rand() < RECENT_SHARE
    posts.created[i] = Math.floor(recent ? nowMs - 60_000 - rand() * 2 * DAY_MS : nowMs - 2 * DAY_MS - rand() * 5 * DAY_MS)
    posts.likes[i] = paretoLikes(rand)
    posts.views[i] = posts.likes[i] * (3 + Math.floor(rand() * 17)) + Math.floor(Math.pow(1 - rand(), -1 / 1.5)) - 1
    posts.hosted[i] = rand() < size.hostedShare ? 1 : 0
    if (i > 0 && rand() < REPLY_SHARE) posts.replyTo[i] = Math.floor(rand() * i)
  }
  return posts
}

/** Each reader's followed authors (author indexes); targets skewed towards the heavy authors. */
function makeFollows (size: FeedDataSize, rand: () => number): { follows: Int32Array[], readerIds: string[] } {
  const targetOf = zipf(size.authors, 0.9, rand)
  const follows: Int32Array[] = []
  const draw = (k: number, skewed: number): Int32Array => {
    const chosen = new Set<number>()
    if (k >= size.authors) for (let a = 0; a < size.authors; a++) chosen.add(a)
    // skewed draws first (heavy authors), then uniform ones: rejection stays cheap either way
    let tries = 0
    while (chosen.size < Math.min(k, Math.floor(k * skewed)) && tries++ < k * 20) chosen.add(targetOf())
    while (chosen.size < k) chosen.add(Math.floor(rand() * size.authors))
    return Int32Array.from(chosen).sort()
  }
  for (let r = 0; r < size.readers; r++) follows.push(draw(50 + Math.floor(rand() * 151), 0.7))
  for (let r = 0; r < size.heavyReaders; r++) follows.push(draw(Math.min(size.authors, 950 + Math.floor(rand() * 101)), 0.3))
  const readerIds = follows.map(() => hex(rand, 32))
  return { follows, readerIds }
}

/** Bodies of hosted posts: text with 1-3 hashtags from a skewed vocabulary, some with a small attachment. */
function makeBody (rand: () => number, tagOf: () => number): { content: string, attachment: Buffer | undefined } {
  const tagCount = rand() < 0.5 ? 1 : rand() < 0.7 ? 2 : 3
  const tags = Array.from({ length: tagCount }, () => `#topic${tagOf().toString(36)}`)
  const chars = 30 + Math.floor(Math.pow(rand(), 2) * 570)
  const words = sentence(rand, chars).split(' ')
  for (const tag of tags) words.splice(Math.floor(rand() * (words.length + 1)), 0, tag)
  const attachment = rand() < ATTACHMENT_SHARE ? Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from(hex(rand, 512 + Math.floor(rand() * 1024)), 'hex')]) : undefined
  return { content: words.join(' '), attachment }
}

/** The metadata FeedService writes at publish (src/feed/service.ts, scrubAndStore), for a body stored as it is. */
function bodyMeta (author: string, content: string, attachment: Buffer | undefined, publishedAt: number): BodyMeta {
  const chars = [...content]
  const hash = createHash('sha256').update(Buffer.from(content, 'utf8'))
  if (attachment !== undefined) hash.update(attachment)
  const contentHash = hash.digest('hex')
  return {
    author,
    content_type: 'text/plain',
    hashtags: extractHashtags(content),
    preview: chars.length > PREVIEW_CHARS ? chars.slice(0, PREVIEW_CHARS).join('') : content,
    content_chars: chars.length,
    attachment_mime: attachment === undefined ? '' : 'image/jpeg',
    attachment_bytes: attachment?.length ?? 0,
    size: Buffer.byteLength(content, 'utf8') + (attachment?.length ?? 0) + 128,
    content_hash: contentHash,
    raw_hash: contentHash,
    reply_to: '',
    quote_of: '',
    published_at: publishedAt
  }
}

const seconds = (t0: number): number => (performance.now() - t0) / 1000

function dirBytes (file: string): number {
  try {
    return statSync(file).blocks * 512
  } catch {
    return NaN
  }
}

/**
 * Writes state entries with the chain store's own lmdb layout (src/storage/index.ts: the env at
 * `<dataDir>`, its `state` database, default msgpack values), in large synchronous transactions
 * and without fsync. `verify` below reads them back through ChainStore.
 */
class StateWriter {
  private readonly root
  private readonly state
  private batch: Array<[string, StateValue]> = []
  count = 0

  constructor (dataDir: string) {
    this.root = open({ path: dataDir, compression: false, noSync: true, mapSize: 2 ** 34 })
    this.state = this.root.openDB<StateValue, string>({ name: 'state' })
  }

  put (key: string, value: StateValue): void {
    this.batch.push([key, value])
    if (this.batch.length >= STATE_BATCH) this.flush()
  }

  flush (): void {
    const batch = this.batch
    this.batch = []
    // sorted keys go in at the right edge of the B-tree: far fewer pages touched
    batch.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    this.root.transactionSync(() => { for (const [k, v] of batch) this.state.putSync(k, v) })
    this.count += batch.length
  }

  async close (): Promise<void> {
    this.flush()
    await this.root.close()
  }
}

/**
 * Builds the data set into `home` (made by `kith init`; the node must not be running) and
 * returns what the benchmark needs to drive it. `log` hears of progress.
 */
export async function preloadFeed (home: string, size: FeedDataSize, log: (line: string) => void): Promise<PreloadResult> {
  const t0 = performance.now()
  const loaded = await loadHome(home)
  const dataDir = loaded.dataDir
  const relay = Buffer.from(loaded.validatorKey.publicKey).toString('hex')
  // the node's own genesis initialisation, then closed: what `kith start` finds on first start
  const node = await KithNode.open({
    dataDir, genesis: loaded.genesis, validatorKey: loaded.validatorKey, blockIntervalMs: 1000, mempool: { maxTxs: 1000 }, logger: pino({ level: 'silent' })
  })
  await node.stop()
  const genesisS = seconds(t0)

  const tGen = performance.now()
  const rand = rng(size.seed)
  const nowMs = Date.now()
  const authors = Array.from({ length: size.authors }, () => hex(rand, 32))
  const otherRelays = Array.from({ length: 3 }, () => hex(rand, 32))
  const posts = makePosts(size, nowMs, rand)
  const { follows, readerIds } = makeFollows(size, rand)

  // likers like recent posts, mostly popular ones (so for-you has to skip them)
  const recent = [...posts.ids.keys()].filter((i) => posts.created[i] >= nowMs - 2 * DAY_MS)
  const score = (i: number): number => posts.likes[i] * 3 + posts.views[i]
  const popular = [...recent].sort((a, b) => score(b) - score(a)).slice(0, 5_000)
  const popularOf = zipf(Math.max(1, popular.length), 1, rand)
  const likes: Array<[number, number]> = [] // [post, reader]
  const likerLikes: number[] = []
  for (let r = 0; r < Math.min(size.likers, size.readers); r++) {
    const m = 20 + Math.floor(rand() * 181)
    const liked = new Set<number>()
    for (let tries = 0; liked.size < m && tries < m * 10; tries++) liked.add(rand() < 0.7 ? popular[popularOf()] : recent[Math.floor(rand() * recent.length)])
    for (const p of liked) {
      likes.push([p, r])
      posts.likes[p] += 1
    }
    likerLikes.push(liked.size)
  }
  const generateS = seconds(tGen)
  log(`feed: generated ${size.posts} posts, ${follows.length} readers, ${likes.length} likes in ${generateS.toFixed(1)} s`)

  // chain state
  const tState = performance.now()
  const writer = new StateWriter(dataDir)
  const hostedBody = new Map<number, { content: string, attachment: Buffer | undefined, meta: BodyMeta }>()
  const tagOf = zipf(size.tags, 1, rand)
  let followPairs = 0
  let replies = 0
  let withAttachment = 0
  for (let i = 0; i < size.posts; i++) {
    const author = authors[posts.author[i]]
    let contentHash = hex(rand, 32)
    let bytes = 60 + Math.floor(rand() * 600)
    if (posts.hosted[i] === 1) {
      const body = makeBody(rand, tagOf)
      const meta = bodyMeta(author, body.content, body.attachment, Math.floor(posts.created[i] / 1000) - 2)
      hostedBody.set(i, { ...body, meta })
      contentHash = meta.content_hash
      bytes = meta.size
      if (body.attachment !== undefined) withAttachment++
    }
    const replyTo = posts.replyTo[i] >= 0 ? posts.ids[posts.replyTo[i]] : ''
    if (replyTo !== '') replies++
    const record: PostRecord = {
      author,
      size: bytes,
      content_hash: contentHash,
      hosting_relay: posts.hosted[i] === 1 ? relay : otherRelays[i % otherRelays.length],
      reply_to: replyTo,
      quote_of: '',
      deleted: false,
      created_ms: posts.created[i],
      likes: posts.likes[i],
      tx_id: hex(rand, 32)
    }
    writer.put(StateKeys.post(posts.ids[i]), record as unknown as StateValue)
  }
  for (const [p, r] of likes) writer.put(StateKeys.like(posts.ids[p], readerIds[r]), 1)
  const followers = new Int32Array(size.authors)
  follows.forEach((targets, r) => {
    for (const a of targets) {
      writer.put(StateKeys.follow(readerIds[r], authors[a]), 1)
      writer.put(StateKeys.follower(authors[a], readerIds[r]), 1)
      followers[a]++
      followPairs++
    }
  })
  await writer.close()
  const stateS = seconds(tState)
  log(`feed: wrote ${writer.count} state entries in ${stateS.toFixed(1)} s`)

  // bodies and view counts
  const tBodies = performance.now()
  const store = FeedBodyStore.open(path.join(dataDir, 'feed'), { sync: false })
  const hostedIds = [...hostedBody.keys()]
  for (let at = 0; at < hostedIds.length; at += BODY_BATCH) {
    await Promise.all(hostedIds.slice(at, at + BODY_BATCH).map(async (i) => {
      const b = hostedBody.get(i) as { content: string, attachment: Buffer | undefined, meta: BodyMeta }
      await store.put(posts.ids[i], b.meta, { content: b.content, attachment: b.attachment })
    }))
  }
  let viewRows = 0
  for (let i = 0; i < size.posts; i++) {
    if (posts.views[i] > 0) { store.saveViews(posts.ids[i], posts.views[i]); viewRows++ }
  }
  await store.close()
  const bodiesS = seconds(tBodies)
  log(`feed: wrote ${hostedIds.length} bodies and ${viewRows} view counts in ${bodiesS.toFixed(1)} s`)

  // what the benchmark drives: tags, heavy authors, readers by follow count, hot posts
  const tagPosts = new Map<string, number>()
  for (const { meta } of hostedBody.values()) for (const t of meta.hashtags) tagPosts.set(t, (tagPosts.get(t) ?? 0) + 1)
  const byUse = [...tagPosts.entries()].sort((a, b) => b[1] - a[1])
  const rare = byUse.find(([, n]) => n >= 10 && n <= 50) ?? byUse.at(-1) ?? ['none', 0]
  const postsOf = new Int32Array(size.authors)
  for (let i = 0; i < size.posts; i++) postsOf[posts.author[i]]++
  const heavy = [...authors.keys()].sort((a, b) => postsOf[b] - postsOf[a]).slice(0, 5)
  const readersWith = (lo: number, hi: number, from: number, to: number): number[] =>
    [...readerIds.keys()].slice(from, to).filter((r) => follows[r].length >= lo && follows[r].length <= hi)
  const f50 = readersWith(50, 60, 0, size.readers)
  const f200 = readersWith(190, 200, 0, size.readers)
  const f1000 = readersWith(0, Infinity, size.readers, readerIds.length)
  const span = (rs: number[]): [number, number] => rs.length === 0 ? [NaN, NaN] : [Math.min(...rs.map((r) => follows[r].length)), Math.max(...rs.map((r) => follows[r].length))]
  const hot = recent.filter((i) => posts.created[i] >= nowMs - DAY_MS).sort((a, b) => score(b) - score(a)).slice(0, HOT_POSTS)

  // Only the chain store is compacted. A compacting copy of the body store (its values span
  // overflow pages) made the node abort at its first write on it (lmdb 3.5.6, mdb.c:2937
  // "Assertion 'key.mv_size > 0' failed in mdb_page_alloc()"), and its freelist is small anyway.
  const tCompact = performance.now()
  const freelistPagesBefore: [number, number] = [await compact(dataDir), freelistPages(path.join(dataDir, 'feed'))]
  const compactS = seconds(tCompact)
  log(`feed: compacted the chain store in ${compactS.toFixed(1)} s (freelists before: chain ${freelistPagesBefore[0]} pages, bodies ${freelistPagesBefore[1]} pages)`)

  const tVerify = performance.now()
  await verify(dataDir, relay, posts, hostedBody, readerIds[0], follows[0].length)
  const verifyS = seconds(tVerify)
  const likeCounts = [1, 10, 100, 1000].map((k) => posts.likes.reduce((n, l) => n + (l >= k ? 1 : 0), 0)) as [number, number, number, number]

  return {
    size,
    nowMs,
    posts: size.posts,
    replies,
    hostedBodies: hostedIds.length,
    withAttachment,
    followPairs,
    likeKeys: likes.length,
    viewRows,
    stateEntries: writer.count,
    commonTags: byUse.slice(0, 3).map(([tag, n]) => ({ tag, posts: n })),
    rareTag: { tag: rare[0], posts: rare[1] },
    distinctTags: byUse.length,
    heavyAuthors: heavy.map((a) => ({ pub: authors[a], posts: postsOf[a], followers: followers[a] })),
    readers: {
      f50: f50.map((r) => readerIds[r]),
      f200: f200.map((r) => readerIds[r]),
      f1000: f1000.map((r) => readerIds[r]),
      likers: likerLikes.map((_, r) => readerIds[r])
    },
    followCounts: { f50: span(f50), f200: span(f200), f1000: span(f1000), likerLikes: [Math.min(...likerLikes), Math.max(...likerLikes)] },
    hotPosts: hot.map((i) => posts.ids[i]),
    seconds: { genesis: genesisS, generate: generateS, state: stateS, bodies: bodiesS, compact: compactS, verify: verifyS, total: seconds(t0) },
    freelistPagesBefore,
    bytes: { chain: dirBytes(path.join(dataDir, 'data.mdb')), feed: dirBytes(path.join(dataDir, 'feed', 'data.mdb')) },
    likesMax: posts.likes.reduce((m, l) => Math.max(m, l), 0),
    likesAtLeast: likeCounts
  }
}

/**
 * Replaces the lmdb store in `dir` by a compacting copy of itself (mdb_env_copy2 with
 * MDB_CP_COMPACT); answers how many pages its freelist took. The pre-load's dozens of large
 * transactions leave ~100,000 freed pages on it, and until a node has reused them every one of its
 * commits spends milliseconds merging that list (perf: mdb_freelist_save → mdb_midl_insert), which
 * kept 0.8 of the 2 cores busy in lmdb's threads for minutes after start. A node that grew to this
 * size block by block reuses freed pages as it goes.
 */
async function compact (dir: string): Promise<number> {
  const copy = `${dir}.compact`
  rmSync(copy, { recursive: true, force: true })
  mkdirSync(copy)
  const pages = freelistPages(dir)
  const root = open({ path: dir, compression: false, noSync: true, mapSize: 2 ** 38 })
  await root.backup(copy, true)
  await root.close()
  renameSync(path.join(copy, 'data.mdb'), path.join(dir, 'data.mdb'))
  rmSync(path.join(dir, 'lock.mdb'), { force: true })
  rmSync(copy, { recursive: true, force: true })
  return pages
}

/** Pages holding the freelist of the lmdb store in `dir`. */
function freelistPages (dir: string): number {
  const root = open({ path: dir, compression: false, readOnly: true, mapSize: 2 ** 38 })
  try {
    const free = (root.getStats() as { free?: { treeLeafPageCount?: number, overflowPages?: number } }).free
    return (free?.overflowPages ?? 0) + (free?.treeLeafPageCount ?? 0)
  } finally {
    void root.close()
  }
}

/**
 * Reads a sample back the way the node will: through ChainStore (so the state layout above is
 * the chain store's) and FeedBodyStore (a hosted body matches its record, or the node would
 * drop it as an orphan at start).
 */
async function verify (dataDir: string, relay: string, posts: Posts, bodies: Map<number, { meta: BodyMeta }>, reader: string, follows: number): Promise<void> {
  const chain = ChainStore.open(dataDir, { sync: false })
  const store = FeedBodyStore.open(path.join(dataDir, 'feed'), { sync: false })
  try {
    for (let i = 0; i < posts.ids.length; i += Math.max(1, Math.floor(posts.ids.length / 1000))) {
      const record = chain.get(StateKeys.post(posts.ids[i])) as unknown as PostRecord | undefined
      if (record === undefined || record.created_ms !== posts.created[i] || record.likes !== posts.likes[i]) throw new Error(`pre-load check: post ${posts.ids[i]} does not read back through ChainStore`)
      const body = bodies.get(i)
      if (body === undefined) continue
      const meta = store.meta(posts.ids[i])
      if (meta === undefined || record.hosting_relay !== relay || meta.content_hash !== record.content_hash || meta.size !== record.size || meta.author !== record.author) {
        throw new Error(`pre-load check: the body of ${posts.ids[i]} does not match its record`)
      }
    }
    const followed = [...chain.scanState(StateKeys.follow(reader, ''))].length
    if (followed !== follows) throw new Error(`pre-load check: reader follows ${followed} authors by scan, ${follows} written`)
  } finally {
    await chain.close()
    await store.close()
  }
}
