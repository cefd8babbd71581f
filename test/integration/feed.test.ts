/**
 * The feed user story through HTTP against a real node process, real sharp and real chain
 * transactions: publish a post with a photo carrying EXIF, GPS, ICC, XMP and IPTC, commit it with
 * CREATE_POST, read the body and the scrubbed attachment (checked with exiftool), follow, list by
 * author, hashtag and timeline, rank it in trending by likes and views from several client
 * addresses, find it in for-you, delete it (410 everywhere). Also: bad input answered 4xx while
 * the node keeps serving, the CREATE_POST body check, the disk quota (507), video without a
 * sidecar (503), and a publish that survives kill -9.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import sharp from 'sharp'
import {
  createPostTx, followTx, newAccount, postActionTx, publishRequest, type Account, type PublishResponse
} from '../../src/client/index.js'
import {
  KITH_BIN, REPO_ROOT, errorMessage, http, pickBasePort, startNode, startSidecar, stopAllNodes, waitFor, type NodeProcess, type SidecarProcess
} from '../helpers/node-process.js'
import { decodesCleanly, exifRead, groupsOf, makeMedia, mediaInfo, photoWithMetadata } from '../helpers/media-files.js'

interface Listing { count: number, posts: Array<{ post_id: string, likes: number, views: number, content_preview: string, has_attachment: boolean }>, next_cursor?: string | null }

const ids = (listing: Listing): string[] => listing.posts.map((p) => p.post_id)
const run = promisify(execFile)

async function get<T> (node: NodeProcess, path: string): Promise<T> {
  const res = await http(node.url, 'GET', path)
  assert.equal(res.status, 200, `${path}: ${res.text}`)
  return res.json as T
}

async function publish (node: NodeProcess, author: Account, input: Parameters<typeof publishRequest>[1]): Promise<PublishResponse> {
  const res = await http(node.url, 'POST', '/feed/publish', { body: publishRequest(author, input) })
  assert.equal(res.status, 200, res.text)
  return res.json as PublishResponse
}

async function commitPost (node: NodeProcess, author: Account, published: PublishResponse): Promise<void> {
  await node.client.submitAndWait(createPostTx(author, published))
}

interface Answer { status: number, retryAfter: string | undefined, json: unknown }

/** A POST from a given loopback address: views and uncommitted posts are counted per client address. */
async function postFrom (node: NodeProcess, path: string, localAddress: string, body?: unknown): Promise<Answer> {
  const url = new URL(path, node.url)
  const payload = body === undefined ? undefined : JSON.stringify(body)
  return await new Promise((resolve, reject) => {
    const headers = payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', localAddress, headers }, (res) => {
      let text = ''
      res.on('data', (chunk: Buffer) => { text += chunk.toString() })
      res.on('end', () => {
        const retryAfter = res.headers['retry-after']
        resolve({ status: res.statusCode ?? 0, retryAfter, json: JSON.parse(text) as unknown })
      })
    })
    req.on('error', reject)
    req.end(payload)
  })
}

async function viewFrom (node: NodeProcess, postId: string, localAddress: string): Promise<number> {
  const res = await postFrom(node, `/feed/post/${postId}/view`, localAddress)
  if (res.status !== 200) throw new Error(`view: ${res.status} ${JSON.stringify(res.json)}`)
  return (res.json as { views: number }).views
}

describe('feed over HTTP', { timeout: 180_000 }, () => {
  let node: NodeProcess
  const alice = newAccount()
  const bob = newAccount()
  const carol = newAccount()
  const dave = newAccount()
  let photo: Buffer

  before(async () => {
    photo = await photoWithMetadata(3000, 2000)
    node = await startNode({ alloc: [alice, bob, carol, dave].map((a) => ({ pub: a.pub, amountUt: 100_000_000 })) })
  })

  after(async () => { await stopAllNodes() })

  test('the user story: publish with a photo, commit, read, scrubbed attachment, follow, lists, trending, for-you, delete', async () => {
    const before = await exifRead(photo, 'jpg')
    for (const group of ['EXIF', 'ICC_Profile', 'XMP', 'IPTC']) assert.ok(groupsOf(before).has(group), `the test photo carries ${group}: ${[...groupsOf(before)].join(', ')}`)
    assert.ok(Object.keys(before).some((tag) => tag.startsWith('EXIF:GPS')), 'the test photo carries a GPS position')

    const text = 'Sunset at the #beach, what a #SUNSET'
    const published = await publish(node, alice, { content: text, attachment: photo, attachmentMime: 'image/jpeg' })
    assert.equal(published.hosting_relay, node.validatorPub)
    assert.deepEqual(published.hashtags, ['beach', 'sunset'])
    assert.equal(published.estimated_fee_ut, 1000 + published.size)
    assert.equal((await http(node.url, 'GET', `/feed/post/${published.post_id}`)).status, 404, 'not readable before CREATE_POST is committed')

    await commitPost(node, alice, published)
    const body = await get<Record<string, unknown>>(node, `/feed/post/${published.post_id}`)
    assert.equal(body.content, text)
    assert.equal(body.author, alice.pub)
    assert.equal(body.attachment_mime, 'image/jpeg')
    assert.deepEqual(body.hashtags, ['beach', 'sunset'])
    const stored = Buffer.from(body.attachment as string, 'base64')
    assert.equal(published.size, Buffer.byteLength(text) + stored.length + 128, 'size = content + stored attachment + 128')

    const res = await fetch(new URL(`/feed/post/${published.post_id}/attachment`, node.url))
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'image/jpeg')
    assert.equal(res.headers.get('cache-control'), 'public, max-age=3600, immutable')
    const attachment = Buffer.from(await res.arrayBuffer())
    assert.deepEqual(attachment, stored)
    const info = await sharp(attachment).metadata()
    assert.equal(info.format, 'jpeg')
    assert.equal(Math.max(info.width, info.height), 1080)
    assert.equal(Math.round(info.width / info.height * 100) / 100, 1.5, 'aspect kept')
    const after = await exifRead(attachment, 'jpg')
    for (const group of ['EXIF', 'ICC_Profile', 'XMP', 'IPTC', 'MakerNotes']) assert.ok(!groupsOf(after).has(group), `${group} left in the scrubbed photo: ${Object.keys(after).join(', ')}`)
    assert.ok(!Object.keys(after).some((tag) => /GPS/.test(tag)), 'no GPS tag left')

    // bob follows alice: her post is in his timeline; it is listed by author and (any case) hashtag
    await node.client.submitAndWait(followTx(bob, 'FOLLOW', alice.pub))
    assert.deepEqual(ids(await get<Listing>(node, `/feed/timeline?follower=${bob.pub}`)), [published.post_id])
    assert.deepEqual(ids(await get<Listing>(node, `/feed/timeline?follower=${carol.address}`)), [])
    const byAuthor = await get<Listing & { author: string }>(node, `/feed/author/${alice.address}`)
    assert.deepEqual(ids(byAuthor), [published.post_id])
    assert.equal(byAuthor.posts[0].has_attachment, true)
    assert.equal(byAuthor.posts[0].content_preview, text)
    assert.deepEqual(ids(await get<Listing>(node, '/feed/hashtag/Sunset')), [published.post_id])
    assert.deepEqual(ids(await get<Listing>(node, '/feed/hashtag/%23BEACH')), [published.post_id])

    // trending: bob's post gets four views from four addresses (4), alice's one like (3), then a second (6)
    const other = await publish(node, bob, { content: 'a quieter post #beach' })
    await commitPost(node, bob, other)
    for (const address of ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5']) await viewFrom(node, other.post_id, address)
    assert.equal(await viewFrom(node, other.post_id, '127.0.0.5'), 4, 'a second view from one address in the hour is not counted')
    await node.client.submitAndWait(postActionTx(carol, 'LIKE_POST', published.post_id))
    assert.deepEqual(ids(await get<Listing>(node, '/feed/trending')), [other.post_id, published.post_id])
    await node.client.submitAndWait(postActionTx(bob, 'LIKE_POST', published.post_id))
    const trending = await get<Listing & { window: number }>(node, '/feed/trending?window=1')
    assert.equal(trending.window, 1)
    assert.deepEqual(ids(trending), [published.post_id, other.post_id])
    assert.equal(trending.posts[0].likes, 2)
    assert.equal(trending.posts[1].views, 4)
    assert.deepEqual(await get(node, `/feed/post/${published.post_id}/stats?me=${bob.pub}`), { post_id: published.post_id, views: 0, likes: 2, liked_by_me: true })
    assert.deepEqual(await get(node, `/feed/post/${other.post_id}/stats`), { post_id: other.post_id, views: 4, likes: 0 })

    // for-you: carol follows nobody, liked alice's post: she is offered bob's; a newcomer gets both, best first
    assert.deepEqual(ids(await get<Listing>(node, `/feed/foryou?pub=${carol.pub}`)), [other.post_id])
    assert.deepEqual(ids(await get<Listing>(node, `/feed/foryou?pub=${newAccount().pub}`)), [published.post_id, other.post_id])
    assert.deepEqual(ids(await get<Listing>(node, `/feed/foryou?pub=${bob.pub}`)), [], 'own post, followed author')

    // alice deletes: every read answers 410 and the post leaves every list
    await node.client.submitAndWait(postActionTx(alice, 'DELETE_POST', published.post_id))
    for (const [method, path] of [['GET', ''], ['GET', '/attachment'], ['GET', '/stats'], ['POST', '/view']]) {
      const gone = await http(node.url, method, `/feed/post/${published.post_id}${path}`)
      assert.equal(gone.status, 410, `${method} ${path}: ${gone.text}`)
      assert.ok(errorMessage(gone).includes('deleted'))
    }
    assert.deepEqual(ids(await get<Listing>(node, `/feed/timeline?follower=${bob.pub}`)), [])
    assert.deepEqual(ids(await get<Listing>(node, '/feed/hashtag/beach')), [other.post_id])
    assert.deepEqual(ids(await get<Listing>(node, '/feed/trending')), [other.post_id])
    assert.deepEqual(ids(await get<Listing>(node, `/feed/author/${alice.pub}`)), [])

    const version = await get<{ features: string[] }>(node, '/api/well-known-version')
    assert.ok(version.features.includes('feed_v2') && version.features.includes('media_scrub'))
  })

  test('paging: `before` and next_cursor through HTTP', async () => {
    const author = dave
    const made: string[] = []
    for (let i = 0; i < 5; i++) {
      const p = await publish(node, author, { content: `post ${i}` })
      await commitPost(node, author, p)
      made.push(p.post_id)
    }
    const seen: string[] = []
    let path = `/feed/author/${author.pub}?limit=2`
    for (;;) {
      const page = await get<Listing>(node, path)
      seen.push(...ids(page))
      if (page.next_cursor === null) break
      path = `/feed/author/${author.pub}?limit=2&cursor=${page.next_cursor}`
    }
    assert.deepEqual(seen, [...made].reverse())
    const first = await get<{ posts: Array<{ created_at: number }> }>(node, `/feed/author/${author.pub}?limit=1`)
    const older = await get<Listing>(node, `/feed/author/${author.pub}?before=${first.posts[0].created_at}`)
    assert.ok(!ids(older).includes(made[4]))
  })

  test('bad input gets a 4xx JSON error naming the problem, and the node keeps serving', async () => {
    const png = await sharp({ create: { width: 50, height: 50, channels: 3, background: 'red' } }).png().toBuffer()
    const cases: Array<[string, unknown, number, string]> = [
      ['magic bytes disagree', publishRequest(alice, { content: 'x', attachment: png, attachmentMime: 'image/jpeg' }), 400, 'PNG'],
      ['truncated JPEG', publishRequest(alice, { content: 'x', attachment: photo.subarray(0, Math.floor(photo.length / 2)), attachmentMime: 'image/jpeg' }), 400, 'truncated'],
      ['stale ts', publishRequest(alice, { content: 'x', ts: Math.floor(Date.now() / 1000) - 600 }), 400, 'timestamp'],
      ['bad signature', { ...publishRequest(alice, { content: 'x' }), content: 'y' }, 400, 'signature'],
      ['over MaxPostSize', publishRequest(alice, { content: 'z'.repeat(262_144) }), 413, 'MaxPostSize'],
      ['video without a sidecar', publishRequest(alice, { content: 'x', attachment: MP4_HEADER, attachmentMime: 'video/mp4' }), 503, 'SVC_MEDIA_SIDECAR_URL'],
      ['unsupported type', publishRequest(alice, { content: 'x', attachment: Buffer.from('%PDF-1.7 hello'), attachmentMime: 'application/pdf' }), 400, 'image/jpeg'],
      // names an object has from its prototype are not mimes (they were looked up in a plain object: a 500)
      ...['__proto__', 'constructor', 'toString', 'hasOwnProperty'].map((name): [string, unknown, number, string] =>
        [`attachment_mime ${name}`, publishRequest(alice, { content: 'x', attachment: png, attachmentMime: name }), 400, 'is not supported'])
    ]
    for (const [name, body, status, mentions] of cases) {
      const res = await http(node.url, 'POST', '/feed/publish', { body })
      assert.equal(res.status, status, `${name}: ${res.text}`)
      assert.ok(errorMessage(res).includes(mentions), `${name}: "${errorMessage(res)}" should mention ${mentions}`)
    }
    // bodies over 64 KiB are decoded on a worker thread: the same answers as inline
    const large = publishRequest(alice, { content: 'x', attachment: photo, attachmentMime: 'image/jpeg' })
    assert.ok(JSON.stringify(large).length > 64 * 1024)
    const largeCases: Array<[string, { body?: unknown, rawBody?: string }, number, string]> = [
      ['bad signature, large body', { body: { ...large, content: 'y' } }, 400, 'signature'],
      ['non-canonical base64, large body', { body: { ...large, attachment_b64: `${large.attachment_b64 ?? ''}A` } }, 400, 'standard padded base64'],
      ['attachment without its mime, large body', { body: { ...large, attachment_mime: undefined } }, 400, 'attachment_mime'],
      ['schema fault, large body', { body: { ...large, ts: 'soon' } }, 400, 'ts'],
      ['stale ts before the attachment fault, large body', { body: { ...large, attachment_b64: `${large.attachment_b64 ?? ''}A`, ts: 1 } }, 400, 'timestamp'],
      ['not JSON, large body', { rawBody: `{"post_id": "${'a'.repeat(100_000)}` }, 400, 'not valid JSON']
    ]
    for (const [name, body, status, mentions] of largeCases) {
      const res = await http(node.url, 'POST', '/feed/publish', body)
      assert.equal(res.status, status, `${name}: ${res.text}`)
      assert.ok(errorMessage(res).includes(mentions), `${name}: "${errorMessage(res)}" should mention ${mentions}`)
    }
    const bomb = await sharp({ create: { width: 12_000, height: 12_000, channels: 3, background: 'black' } }).png({ compressionLevel: 9 }).toBuffer()
    const res = await http(node.url, 'POST', '/feed/publish', { body: publishRequest(alice, { content: 'boom', attachment: bomb, attachmentMime: 'image/png' }) })
    assert.equal(res.status, 400, res.text)
    assert.match(errorMessage(res), /pixel/i)
    for (const path of ['/feed/trending?window=0', '/feed/trending?window=169', '/feed/author/nobody', '/feed/timeline?follower=x', '/feed/hashtag/two%20words', '/feed/post/xyz', '/feed/author/' + alice.pub + '?limit=0']) {
      const bad = await http(node.url, 'GET', path)
      assert.equal(bad.status, 400, `${path}: ${bad.text}`)
      errorMessage(bad)
    }
    // the CREATE_POST body check: a size that is not the published one is refused
    const published = await publish(node, alice, { content: 'check the size' })
    const wrong = await http(node.url, 'POST', '/api/tx', { body: createPostTx(alice, { ...published, size: published.size + 1, estimated_fee_ut: published.estimated_fee_ut + 1 }) })
    assert.equal(wrong.status, 400)
    assert.match(errorMessage(wrong), /size does not match the body published/)
    assert.equal((await http(node.url, 'GET', '/api/netstats')).status, 200)
  })

  test('hashtags are NFC-normalised, marks included: İstanbul, café typed composed or decomposed, नमस्ते, found either way', async () => {
    const istanbul = await publish(node, bob, { content: 'Landed in #İstanbul' })
    const cafeDecomposed = await publish(node, bob, { content: 'coffee at the #cafe\u0301' })
    const cafeComposed = await publish(node, bob, { content: 'another #caf\u00e9 visit' })
    const namaste = await publish(node, bob, { content: '#नमस्ते दुनिया' })
    assert.deepEqual(istanbul.hashtags, ['i\u0307stanbul'], 'İ lowercases to i + U+0307, which a tag keeps')
    assert.deepEqual(cafeDecomposed.hashtags, ['caf\u00e9'], 'the accent is kept, stored composed')
    assert.deepEqual(cafeComposed.hashtags, ['caf\u00e9'])
    assert.deepEqual(namaste.hashtags, ['नमस्ते'], 'not cut at the first vowel sign')
    for (const p of [istanbul, cafeDecomposed, cafeComposed, namaste]) await commitPost(node, bob, p)
    const cafes = [cafeComposed.post_id, cafeDecomposed.post_id]
    const cases: Array<[string, string, string[]]> = [
      ['İstanbul', 'i\u0307stanbul', [istanbul.post_id]], ['I\u0307stanbul', 'i\u0307stanbul', [istanbul.post_id]], ['#İSTANBUL', 'i\u0307stanbul', [istanbul.post_id]],
      ['café', 'caf\u00e9', cafes], ['cafe\u0301', 'caf\u00e9', cafes], ['CAFÉ', 'caf\u00e9', cafes],
      ['नमस्ते', 'नमस्ते', [namaste.post_id]]
    ]
    for (const [typed, tag, expected] of cases) {
      const listing = await get<Listing & { tag: string }>(node, `/feed/hashtag/${encodeURIComponent(typed)}`)
      assert.equal(listing.tag, tag, `GET /feed/hashtag/${typed} answers the stored tag`)
      assert.deepEqual(ids(listing), expected, `GET /feed/hashtag/${typed}`)
    }
    assert.deepEqual(ids(await get<Listing>(node, '/feed/hashtag/cafe')), [], 'café is not cafe')
    assert.deepEqual(ids(await get<Listing>(node, `/feed/hashtag/${encodeURIComponent('नमस')}`)), [], 'nor is the cut-off नमस a tag of it')
  })

  test('the OpenAPI document describes every feed route and the feed\'s wire objects', async () => {
    const doc = await get<{ paths: Record<string, Record<string, { responses?: object }>>, components: { schemas: Record<string, { properties?: Record<string, unknown> }> } }>(node, '/swagger/openapi.json')
    const routes: Array<[string, string]> = [
      ['/feed/publish', 'post'], ['/feed/post/{id}', 'get'], ['/feed/post/{id}/attachment', 'get'], ['/feed/post/{id}/view', 'post'],
      ['/feed/post/{id}/stats', 'get'], ['/feed/author/{pub}', 'get'], ['/feed/timeline', 'get'], ['/feed/trending', 'get'],
      ['/feed/foryou', 'get'], ['/feed/hashtag/{tag}', 'get']
    ]
    for (const [path, method] of routes) assert.ok(doc.paths[path]?.[method]?.responses !== undefined, `${method} ${path}`)
    for (const name of ['PublishRequest', 'PublishResponse', 'PostBody', 'PostStats', 'FeedPostItem', 'Timeline', 'Trending', 'ForYou', 'HashtagFeed', 'AuthorFeed']) {
      assert.ok(doc.components.schemas[name] !== undefined, `schema ${name}`)
    }
    for (const field of ['post_id', 'author', 'content_preview', 'created_at', 'likes', 'views', 'has_attachment', 'reply_to', 'quote_of']) {
      assert.ok(doc.components.schemas.FeedPostItem.properties?.[field] !== undefined, `FeedPostItem.${field}`)
    }
    assert.ok(doc.paths['/feed/publish'].post.responses !== undefined && '507' in (doc.paths['/feed/publish'].post.responses as object))
  })

  test('a published body survives kill -9 and is committed after the restart', async () => {
    const published = await publish(node, carol, { content: 'written before the crash #durable', attachment: photo, attachmentMime: 'image/jpeg' })
    await node.kill9()
    await node.restart()
    await commitPost(node, carol, published)
    const body = await get<{ content: string, attachment: string }>(node, `/feed/post/${published.post_id}`)
    assert.equal(body.content, 'written before the crash #durable')
    assert.ok(Buffer.from(body.attachment, 'base64').length > 1000)
    assert.deepEqual(ids(await get<Listing>(node, '/feed/hashtag/durable')), [published.post_id])
  })
})

describe('feed across two validators', { timeout: 120_000 }, () => {
  let dir: string
  after(async () => {
    await stopAllNodes()
    await rm(dir, { recursive: true, force: true })
  })

  test('a post published to node A and committed through node B: A serves the body, both list it, B says where the body is', async () => {
    const alice = newAccount()
    const bob = newAccount()
    dir = await mkdtemp(join(tmpdir(), 'kith-feed-net-'))
    const basePort = await pickBasePort(2)
    await run(KITH_BIN, ['testnet', '--validators', '2', '--output', join(dir, 'net'), '--base-port', String(basePort),
      '--alloc', `${alice.pub}=10000000`, '--alloc', `${bob.pub}=10000000`], {
      cwd: REPO_ROOT, env: { ...process.env, PATH: `${join(REPO_ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}` }
    })
    const [a, b] = await Promise.all([0, 1].map(async (i) => await startNode({ home: join(dir, 'net', `node${i}`) })))
    await waitFor(async () => (await a.client.netstats()).height >= 1 && (await b.client.netstats()).height >= 1, 30_000)

    const published = await publish(a, alice, { content: 'hosted on A #twonodes' })
    assert.equal(published.hosting_relay, a.validatorPub)
    // B cannot check the body (it is on A), so it admits the CREATE_POST; consensus commits it everywhere
    await b.client.submitAndWait(createPostTx(alice, published))
    await b.client.submitAndWait(followTx(bob, 'FOLLOW', alice.pub))
    await waitFor(async () => (await http(a.url, 'GET', `/feed/post/${published.post_id}`)).status === 200, 10_000)
    const onB = await http(b.url, 'GET', `/feed/post/${published.post_id}`)
    assert.equal(onB.status, 404)
    assert.ok(errorMessage(onB).includes(a.validatorPub), 'B names the hosting relay')
    const timelineB = await get<{ posts: Array<{ post_id: string, body_available: boolean, hosting_relay: string }> }>(b, `/feed/timeline?follower=${bob.pub}`)
    assert.deepEqual(timelineB.posts.map((p) => [p.post_id, p.body_available, p.hosting_relay]), [[published.post_id, false, a.validatorPub]])
    await waitFor(async () => (await get<Listing>(a, `/feed/timeline?follower=${bob.pub}`)).count === 1, 10_000)
    assert.deepEqual(ids(await get<Listing>(a, '/feed/hashtag/twonodes')), [published.post_id], 'the hosting node lists it under its tag')
  })
})

describe('feed video through the media sidecar', { timeout: 90_000 }, () => {
  let sidecar: SidecarProcess | undefined
  after(async () => {
    sidecar?.child.kill('SIGTERM')
    await sidecar?.exited
    await stopAllNodes()
  })

  test('a video post is scrubbed by the sidecar the node is pointed at; SVC_ALLOW_UNSCRUBBED_VIDEO keeps it as uploaded', async () => {
    sidecar = await startSidecar()
    const author = newAccount()
    const alloc = [{ pub: author.pub, amountUt: 10_000_000 }]
    const [scrubbing, permissive] = await Promise.all([
      startNode({ alloc, env: { SVC_MEDIA_SIDECAR_URL: sidecar.url } }),
      startNode({ alloc, env: { SVC_ALLOW_UNSCRUBBED_VIDEO: 'true' } })
    ])
    const video = await makeMedia('mp4')
    const carried = new Set((await mediaInfo(video, 'mp4')).tags.map(([key]) => key))
    for (const key of ['title', 'artist', 'location', 'comment', 'creation_time']) assert.ok(carried.has(key), `the test video carries ${key}`)

    const published = await publish(scrubbing, author, { content: 'a clip', attachment: video, attachmentMime: 'video/mp4' })
    await commitPost(scrubbing, author, published)
    const res = await fetch(new URL(`/feed/post/${published.post_id}/attachment`, scrubbing.url))
    assert.equal(res.headers.get('content-type'), 'video/mp4')
    const stored = Buffer.from(await res.arrayBuffer())
    const left = (await mediaInfo(stored, 'mp4')).tags.filter(([key, value]) => ['title', 'artist', 'location', 'comment', 'creation_time'].includes(key) || /Kith|Alice|48\.8566|hidden/.test(value))
    assert.deepEqual(left, [], 'no tag survives the sidecar')
    assert.equal(await decodesCleanly(stored, 'mp4'), '', 'the scrubbed video still decodes')

    const kept = await publish(permissive, author, { content: 'as uploaded', attachment: video, attachmentMime: 'video/mp4' })
    await commitPost(permissive, author, kept)
    const raw = Buffer.from(await (await fetch(new URL(`/feed/post/${kept.post_id}/attachment`, permissive.url))).arrayBuffer())
    assert.deepEqual(raw, video)
  })
})

describe('publishers pay: funds and bounds on uncommitted posts', { timeout: 90_000 }, () => {
  let node: NodeProcess
  const funded = Array.from({ length: 4 }, () => newAccount())

  before(async () => {
    node = await startNode({
      alloc: funded.map((a) => ({ pub: a.pub, amountUt: 10_000_000 })),
      args: ['--feed-disk-limit-mb', '1'],
      env: { SVC_FEED_PENDING_PER_AUTHOR: '2', SVC_FEED_PENDING_PER_IP: '3' }
    })
  })
  after(async () => { await stopAllNodes() })

  const usage = async (): Promise<{ disk_used_bytes: number, pending: { bodies: number } }> =>
    (await get<{ feed: { disk_used_bytes: number, pending: { bodies: number } } }>(node, '/api/limits')).feed

  test('keys holding nothing cannot fill the quota: 402 before anything is stored, and a funded user still publishes', async () => {
    const big = 'q'.repeat(200_000)
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: 'blue' } }).png().toBuffer()
    for (let i = 0; i < 6; i++) {
      // a fresh key each time, as an attacker would: no per-key bound is what stops them
      const attacker = newAccount()
      const res = await postFrom(node, '/feed/publish', '127.0.0.1', publishRequest(attacker, { content: big, ...(i % 2 === 0 ? { attachment: png, attachmentMime: 'image/png' } : {}) }))
      assert.equal(res.status, 402, JSON.stringify(res.json))
      assert.match((res.json as { error: string }).error, /insufficient funds: the author's committed balance is 0 µT, less than the 201128 µT the CREATE_POST of this post costs at least/)
    }
    const after = await usage()
    assert.deepEqual([after.disk_used_bytes, after.pending.bodies], [0, 0], 'nothing stored for them')
    const user = funded[0]
    const published = await publish(node, user, { content: big })
    await commitPost(node, user, published)
    assert.equal((await get<{ content: string }>(node, `/feed/post/${published.post_id}`)).content, big)
    assert.equal((await usage()).disk_used_bytes, published.size)
  })

  test('uncommitted posts are bounded per author and per client address: 429 with Retry-After, freed by a commit', async () => {
    const [, alice, bob, carol] = funded
    const from = async (author: Account, address: string, content: string): Promise<Answer> => await postFrom(node, '/feed/publish', address, publishRequest(author, { content }))
    const first = await from(alice, '127.0.0.1', 'one')
    assert.equal(first.status, 200)
    assert.equal((await from(alice, '127.0.0.1', 'two')).status, 200)
    const third = await from(alice, '127.0.0.2', 'three')
    assert.equal(third.status, 429)
    assert.equal(third.retryAfter, '30')
    assert.match((third.json as { error: string }).error, /too many uncommitted posts from this author: 2 published here/)
    // 127.0.0.1 holds alice's two; bob's first from it is its third, his second is one too many
    assert.equal((await from(bob, '127.0.0.1', 'bob one')).status, 200)
    const crowded = await from(bob, '127.0.0.1', 'bob two')
    assert.equal(crowded.status, 429)
    assert.match((crowded.json as { error: string }).error, /from this client address: 3 published here/)
    assert.equal((await from(bob, '127.0.0.3', 'bob elsewhere')).status, 200)
    // a committed post leaves both counts
    await commitPost(node, alice, first.json as PublishResponse)
    assert.equal((await from(alice, '127.0.0.1', 'after the commit')).status, 200)
    assert.equal((await from(carol, '127.0.0.4', 'unrelated')).status, 200)
    const limits = await get<{ feed: { pending: Record<string, unknown> } }>(node, '/api/limits')
    assert.deepEqual(limits.feed.pending, {
      max_per_author: 2, max_bytes_per_author: 2 * 1024 * 1024, max_per_ip: 3, max_bytes_per_ip: 8 * 1024 * 1024, ttl_s: 86_400,
      funds_rule: limits.feed.pending.funds_rule, bodies: 5
    })
  })
})

describe('feed disk quota', { timeout: 60_000 }, () => {
  after(async () => { await stopAllNodes() })

  test('--feed-disk-limit-mb is a hard quota on stored bodies: 507, and nothing stored', async () => {
    const author = newAccount()
    const node = await startNode({ alloc: [{ pub: author.pub, amountUt: 10_000_000 }], args: ['--feed-disk-limit-mb', '1'] })
    const big = 'q'.repeat(200_000)
    const statuses: number[] = []
    for (let i = 0; i < 7; i++) statuses.push((await http(node.url, 'POST', '/feed/publish', { body: publishRequest(author, { content: big }) })).status)
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 507, 507], '5 × 200,128 bytes fit in 1 MiB, a sixth does not')
    const refused = publishRequest(author, { content: big })
    const res = await http(node.url, 'POST', '/feed/publish', { body: refused })
    assert.match(errorMessage(res), /quota/)
    assert.equal((await http(node.url, 'POST', '/api/tx', { body: createPostTx(author, { post_id: refused.post_id, hosting_relay: node.validatorPub, content_hash: '00'.repeat(32), size: 200_128, hashtags: [], estimated_fee_ut: 201_128 }) })).status, 400, 'nothing was stored for it')
  })
})

/** The first bytes of an MP4 (an ftyp box): enough for the magic check, which comes before the sidecar question. */
const MP4_HEADER = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom', 'ascii'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2', 'ascii'), Buffer.alloc(64)])

