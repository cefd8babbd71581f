/**
 * The HTTP edge (`--http-workers N`, src/api/edge): edge threads hold the public listener and
 * answer POST /api/tx, /relay/broadcast, /feed/publish and the committed reads (GET /api/tx/{id},
 * /api/address/{pubkey}, /api/blocks/{height}) themselves; everything else goes
 * through them to the core's private listener. Asserted through the public interface: submissions answered and committed as on one
 * thread, with the same refusals in the same order; other routes, WebSockets and event streams
 * forwarded; the client's own address (not the edge's) drawn on by the per-IP bucket, whatever
 * headers a client forges; the private listener closed to anyone without the per-start secret;
 * `accepted` surviving kill -9; a taken port refused rather than shared; the WebSocket's close
 * frame passed on at shutdown.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { connect as netConnect } from 'node:net'
import nacl from 'tweetnacl'
import { createPostTx, newAccount, publishRequest, transfer, type PublishResponse } from '../../src/client/index.js'
import { toBase64 } from '../../src/crypto/index.js'
import { errorMessage, http, startNode, stopAllNodes, waitFor, type LogLine, type NodeProcess } from '../helpers/node-process.js'
import { SseReader, WsClient } from '../helpers/realtime-client.js'
import { envelopeFor } from '../helpers/envelopes.js'
import { exifRead, photoWithMetadata } from '../helpers/media-files.js'

const FUNDED_UT = 1_000_000_000

async function committed (node: NodeProcess, id: string): Promise<void> {
  await waitFor(async () => {
    const res = await http(node.url, 'GET', `/api/tx/${id}`)
    return res.status === 200 && typeof (res.json as { block_index?: number }).block_index === 'number'
  }, 20_000, { message: `transaction ${id} committed` })
}

/** A raw request line and headers on a fresh socket; resolves with what the server wrote until it closed or 2 s passed. */
async function rawExchange (port: number, text: string): Promise<string> {
  return await new Promise((resolve, reject) => {
    const socket = netConnect(port, '127.0.0.1', () => socket.write(text))
    let got = ''
    socket.on('data', (chunk: Buffer) => { got += chunk.toString('latin1') })
    const timer = setTimeout(() => { socket.destroy(); resolve(got) }, 2000)
    socket.on('close', () => { clearTimeout(timer); resolve(got) })
    socket.on('error', reject)
  })
}

describe('HTTP edge threads in front of the core', { timeout: 240_000 }, () => {
  let node: NodeProcess
  let corePort = 0
  const alice = newAccount()
  const bob = newAccount()
  const carol = newAccount()

  before(async () => {
    node = await startNode({
      alloc: [{ pub: alice.pub, amountUt: FUNDED_UT }, { pub: carol.pub, amountUt: FUNDED_UT }],
      args: ['--http-workers', '2'],
      env: { SVC_RATE_LIMIT_RPS: '0' },
      onLog: (line: LogLine) => { if (typeof line.corePort === 'number') corePort = line.corePort }
    })
    assert.ok(corePort > 0, 'the node logs its private listener once the edges listen')
  })
  after(async () => { await stopAllNodes() })

  test('a transfer is accepted at the edge and committed; a retry is accepted again', async () => {
    const tx = transfer(alice, bob.pub, 1_000_000)
    const res = await http(node.url, 'POST', '/api/tx', { body: tx })
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(res.json, { id: tx.id, status: 'accepted' })
    await committed(node, tx.id)
    const again = await http(node.url, 'POST', '/api/tx', { body: tx })
    assert.deepEqual([again.status, again.json], [200, { id: tx.id, status: 'accepted' }])
  })

  test('committed reads answered at the edge agree with the chain; an id no block holds is the core\'s 404', async () => {
    const tx = transfer(alice, bob.pub, 7_000)
    assert.equal((await http(node.url, 'POST', '/api/tx', { body: tx })).status, 200)
    await committed(node, tx.id)
    const detail = (await http(node.url, 'GET', `/api/tx/${tx.id}`)).json as { block_index: number, amount_ut: number }
    assert.equal(detail.amount_ut, 7_000)
    const block = await http(node.url, 'GET', `/api/blocks/${detail.block_index}`)
    assert.equal(block.status, 200)
    assert.ok((block.json as { tx_ids: string[] }).tx_ids.includes(tx.id))
    const history = (await http(node.url, 'GET', `/api/address/${bob.pub}?limit=50`)).json as { transactions: Array<{ id: string }>, balance_ut: number }
    assert.ok(history.transactions.some((t) => t.id === tx.id))
    assert.ok(history.balance_ut >= 7_000)
    const head = await http(node.url, 'HEAD', '/api/blocks/latest')
    assert.deepEqual([head.status, head.text], [200, ''])
    // not in any block: handed on to the core, which knows the mempool, and answers as on one thread
    const unknown = await http(node.url, 'GET', `/api/tx/${'ab'.repeat(16)}`)
    assert.equal(unknown.status, 404)
    assert.match(errorMessage(unknown), /unknown transaction/)
  })

  test('refusals are those of the one-thread node, in the same order', async () => {
    const good = transfer(alice, bob.pub, 1000)
    const badSignature = await http(node.url, 'POST', '/api/tx', { body: { ...good, signature: toBase64(new Uint8Array(64)) } })
    assert.equal(badSignature.status, 400)
    assert.match(errorMessage(badSignature), /signature/)
    assert.equal(badSignature.headers.get('kith-error-code'), 'TX_BAD_SIGNATURE')

    const stale = await http(node.url, 'POST', '/api/tx', { body: transfer(alice, bob.pub, 1000, { time: Date.now() - 3_600_000 }) })
    assert.equal(stale.status, 400)
    assert.match(errorMessage(stale), /timestamp/)

    // a known id with other content is a duplicate before its (bad) signature is judged, as on one thread
    const first = transfer(alice, bob.pub, 1000)
    assert.equal((await http(node.url, 'POST', '/api/tx', { body: first })).status, 200)
    const reused = await http(node.url, 'POST', '/api/tx', { body: { ...first, amount: 2000, signature: toBase64(new Uint8Array(64)) } })
    assert.equal(reused.status, 400)
    assert.equal(reused.headers.get('kith-error-code'), 'TX_DUPLICATE')

    const notJson = await http(node.url, 'POST', '/api/tx', { rawBody: '{"id":', headers: { 'content-type': 'application/json' } })
    assert.deepEqual([notJson.status, errorMessage(notJson)], [400, 'request body is not valid JSON'])
    const noBody = await http(node.url, 'POST', '/api/tx')
    assert.equal(noBody.status, 400)
    const huge = await http(node.url, 'POST', '/api/tx', { rawBody: JSON.stringify({ memo: 'x'.repeat(4 * 1024 * 1024) }) })
    assert.equal(huge.status, 413)
    const poor = newAccount()
    const unfunded = await http(node.url, 'POST', '/api/tx', { body: transfer(poor, bob.pub, 1000) })
    assert.equal(unfunded.status, 400)
    assert.equal(unfunded.headers.get('kith-error-code'), 'TX_INSUFFICIENT_FUNDS')
    // the node keeps serving
    assert.equal((await http(node.url, 'GET', '/api/netstats')).status, 200)
  })

  test('an envelope is broadcast at the edge, stored once, and read back through the forwarded inbox', async () => {
    const device = nacl.box.keyPair()
    const envelope = envelopeFor(device.publicKey, alice.pub)
    const res = await http(node.url, 'POST', '/relay/broadcast', { body: { envelope } })
    assert.equal(res.status, 200, res.text)
    const { id, status } = res.json as { id: string, status: string }
    assert.equal(status, 'broadcast')
    const again = await http(node.url, 'POST', '/relay/broadcast', { body: { envelope } })
    assert.deepEqual([again.status, (again.json as { id: string }).id], [200, id])
    // spelled otherwise (uppercase hex): not the hand check's, so the schema's, which normalises it to the same envelope
    const upper = { ...envelope, recipient_pub: (envelope.recipient_pub as string).toUpperCase() }
    const respelled = await http(node.url, 'POST', '/relay/broadcast', { body: { envelope: upper } })
    assert.deepEqual([respelled.status, (respelled.json as { id: string }).id], [200, id])
    const inbox = await http(node.url, 'GET', `/relay/inbox?pub=${Buffer.from(device.publicKey).toString('hex')}`)
    assert.equal(inbox.status, 200)
    assert.deepEqual((inbox.json as { items: Array<{ id: string }> }).items.map((item) => item.id), [id])
    const malformed = await http(node.url, 'POST', '/relay/broadcast', { body: { envelope: { ...envelope, nonce: 'zz' } } })
    assert.equal(malformed.status, 400)
    assert.match(errorMessage(malformed), /nonce/)
  })

  test('a photo is published at the edge (decoded and scrubbed there once the core admits it), then committed by its CREATE_POST', async () => {
    const photo = await photoWithMetadata(1600, 1200)
    const res = await http(node.url, 'POST', '/feed/publish', { body: publishRequest(alice, { content: 'through the edge', attachment: photo, attachmentMime: 'image/jpeg' }) })
    assert.equal(res.status, 200, res.text)
    const published = res.json as PublishResponse
    const tx = createPostTx(alice, published)
    assert.equal((await http(node.url, 'POST', '/api/tx', { body: tx })).status, 200)
    await committed(node, tx.id)
    const body = await http(node.url, 'GET', `/feed/post/${published.post_id}`)
    assert.equal(body.status, 200, body.text)
    const media = await fetch(new URL(`/feed/post/${published.post_id}/attachment`, node.url))
    assert.equal(media.status, 200)
    const tags = await exifRead(Buffer.from(await media.arrayBuffer()), 'jpg')
    assert.equal(tags.GPSLatitude, undefined, 'the location is scrubbed')
    // refusals of the decode are the edge's, with the core's wording
    const forged = publishRequest(alice, { content: 'forged' })
    const badSig = await http(node.url, 'POST', '/feed/publish', { body: { ...forged, sig: toBase64(new Uint8Array(64)) } })
    assert.equal(badSig.status, 400)
    assert.match(errorMessage(badSig), /signature/)
    const notJson = await http(node.url, 'POST', '/feed/publish', { rawBody: 'x'.repeat(100_000) })
    assert.deepEqual([notJson.status, errorMessage(notJson)], [400, 'request body is not valid JSON'])
    // the core's refusals come before the edge's scrub; the scrub's refusals cross back with their codes
    const unfunded = await http(node.url, 'POST', '/feed/publish', { body: publishRequest(newAccount(), { content: 'no funds', attachment: photo, attachmentMime: 'image/jpeg' }) })
    assert.equal(unfunded.status, 402, unfunded.text)
    assert.equal(unfunded.headers.get('kith-error-code'), 'FEED_INSUFFICIENT_FUNDS')
    const broken = Buffer.concat([photo.subarray(0, 2000), Buffer.alloc(200_000, 0x55)])
    const corrupt = await http(node.url, 'POST', '/feed/publish', { body: publishRequest(alice, { content: 'a broken photo', attachment: broken, attachmentMime: 'image/jpeg' }) })
    assert.equal(corrupt.status, 400, corrupt.text)
    assert.equal(corrupt.headers.get('kith-error-code'), 'MEDIA_INVALID')
    // the refused publishes held nothing: the same author publishes again
    const again = await http(node.url, 'POST', '/feed/publish', { body: publishRequest(alice, { content: 'after the refusals', attachment: photo, attachmentMime: 'image/jpeg' }) })
    assert.equal(again.status, 200, again.text)
  })

  test('a flood of photos and a client that resets after sending one: each answered 200 or 503 with Retry-After, then the author publishes again and the node serves on', async () => {
    const photo = await photoWithMetadata(1200, 900)
    const body = (content: string): string => JSON.stringify(publishRequest(carol, { content, attachment: photo, attachmentMime: 'image/jpeg' }))
    // a client that sends a whole publish and resets before the answer: the edge holds its photo
    // only until the core answers the call
    const url = new URL(node.url)
    const text = body('reset after sending')
    await new Promise<void>((resolve, reject) => {
      const socket = netConnect(Number(url.port), url.hostname, () => {
        socket.write(`POST /feed/publish HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`, () => { socket.resetAndDestroy(); resolve() })
      })
      socket.on('error', reject)
    })
    const flood = await Promise.all(Array.from({ length: 12 }, async (_, i) => await http(node.url, 'POST', '/feed/publish', { rawBody: body(`flood ${i}`) })))
    for (const res of flood) {
      assert.ok(res.status === 200 || (res.status === 503 && res.headers.get('retry-after') !== null && res.headers.get('kith-error-code') === 'MEDIA_BUSY'), `${res.status} ${res.text}`)
    }
    const after = await http(node.url, 'POST', '/feed/publish', { rawBody: body('after the flood') })
    assert.equal(after.status, 200, after.text)
    assert.equal((await http(node.url, 'GET', '/api/netstats')).status, 200)
  })

  test('every other route is forwarded: reads, 404 and 405 answers, a query string, headers as the core set them', async () => {
    const stats = await http(node.url, 'GET', '/api/netstats')
    assert.equal(stats.status, 200)
    assert.equal(typeof (stats.json as { height: number }).height, 'number')
    const address = await http(node.url, 'GET', `/api/address/${alice.pub}?limit=1`)
    assert.equal(address.status, 200)
    assert.ok((address.json as { transactions: unknown[] }).transactions.length <= 1)
    const missing = await http(node.url, 'GET', '/api/nowhere')
    assert.equal(missing.status, 404)
    assert.match(errorMessage(missing), /no route/)
    const wrongMethod = await http(node.url, 'GET', '/api/tx')
    assert.equal(wrongMethod.status, 405)
    // the core's request id comes back, and the header the client chose is kept
    const withId = await http(node.url, 'GET', '/api/netstats', { headers: { 'x-request-id': 'edge-check-1' } })
    assert.equal(withId.headers.get('x-request-id'), 'edge-check-1')
    const metrics = await http(node.url, 'GET', '/metrics')
    assert.equal(metrics.status, 200)
    // the edge's own answers are counted in the core's metrics
    assert.match(metrics.text, /route="\/api\/tx",status="200"/)
  })

  test('a WebSocket and an event stream pass through the edge both ways', async () => {
    const ws = await WsClient.open(node.url)
    try {
      assert.equal((await ws.request({ op: 'subscribe', topic: 'blocks' })).event, 'subscribed')
      const block = await ws.next((m) => m.event === 'block')
      assert.equal(typeof block.height, 'number')
      const tx = transfer(alice, bob.pub, 5000)
      const ack = await ws.request({ op: 'submit_tx', tx })
      assert.equal(ack.status, 'accepted')
    } finally {
      ws.close()
    }
    const sse = await SseReader.open(new URL('/api/events?topics=blocks', node.url).toString())
    try {
      assert.equal(sse.status, 200)
      await waitFor(() => sse.events.some((e) => e.event === 'block'), 10_000, { message: 'a block event through the edge' })
    } finally {
      sse.close()
    }
  })

  test('odd framing passes through as on one thread: a GET declaring a body it never sends, a chunked HEAD, an upgrade with a body', async () => {
    const port = Number(new URL(node.url).port)
    // answered at once, not when 512 MiB have come
    const declared = await rawExchange(port, 'GET /api/netstats HTTP/1.1\r\nHost: x\r\nContent-Length: 536870912\r\n\r\n')
    assert.match(declared, /^HTTP\/1\.1 200 /)
    const chunkedHead = await rawExchange(port, 'HEAD /api/netstats HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n')
    assert.match(chunkedHead, /^HTTP\/1\.1 200 /)
    // the refusal reaches the client even though the core did not read the body
    const h2c = await rawExchange(port, `POST /api/onboarding/claim HTTP/1.1\r\nHost: x\r\nUpgrade: h2c\r\nConnection: Upgrade\r\nContent-Length: 20000\r\n\r\n${'x'.repeat(20_000)}`)
    assert.match(h2c, /^HTTP\/1\.1 404 /)
    assert.equal((await http(node.url, 'GET', '/api/netstats')).status, 200)
  })

  test('the private listener refuses whoever lacks the secret, and a forged edge header changes nothing', async () => {
    const direct = await http(`http://127.0.0.1:${corePort}`, 'GET', '/api/netstats')
    assert.equal(direct.status, 403)
    assert.match(errorMessage(direct), /edge/)
    const guessed = await http(`http://127.0.0.1:${corePort}`, 'GET', '/api/netstats', { headers: { 'x-kith-edge': 'f'.repeat(64), 'x-kith-client-ip': '10.0.0.1' } })
    assert.equal(guessed.status, 403)
    const upgrade = await rawExchange(corePort, 'GET /api/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n')
    assert.match(upgrade, /^HTTP\/1\.1 403/)
    // through the public port, a client's own x-kith-edge header is dropped: the request is served as usual
    const forged = await http(node.url, 'GET', '/api/netstats', { headers: { 'x-kith-edge': 'f'.repeat(64) } })
    assert.equal(forged.status, 200)
  })
})

describe('HTTP edge: per-IP bucket, durability, a taken port, shutdown', { timeout: 240_000 }, () => {
  after(async () => { await stopAllNodes() })

  test('the bucket draws on the client\'s address whatever it claims, for forwarded and edge-answered requests alike', async () => {
    const alice = newAccount()
    const node = await startNode({ alloc: [{ pub: alice.pub, amountUt: FUNDED_UT }], args: ['--http-workers', '2'], env: { SVC_RATE_LIMIT_RPS: '2' } })
    const statuses: number[] = []
    // bursts of 4 are allowed at 2 rps; each request claims another address
    for (let i = 0; i < 12; i++) {
      const forgedIp = `10.9.${i}.1`
      const res = i % 2 === 0
        ? await http(node.url, 'GET', '/api/netstats', { headers: { 'x-forwarded-for': forgedIp, 'x-kith-client-ip': forgedIp } })
        : await http(node.url, 'POST', '/api/tx', { body: transfer(alice, alice.pub, 1), headers: { 'x-forwarded-for': forgedIp, 'x-kith-client-ip': forgedIp } })
      statuses.push(res.status)
      if (res.status === 429) assert.ok(Number(res.headers.get('retry-after')) >= 1, 'a 429 says when to retry')
    }
    assert.ok(statuses.filter((s) => s === 429).length >= 6, `most of 12 quick requests are refused: ${statuses.join(' ')}`)
    await node.stop()
  })

  test('reads answered at the edges draw on the one bucket: a client over the limit is refused by every edge, then let in again', async () => {
    const node = await startNode({ args: ['--http-workers', '2'], env: { SVC_RATE_LIMIT_RPS: '2' } })
    const statuses: number[] = []
    // 20 quick reads, each on a fresh connection (so over both edges), each claiming another address
    for (let i = 0; i < 20; i++) {
      const res = await http(node.url, 'GET', '/api/blocks/latest', { headers: { connection: 'close', 'x-forwarded-for': `10.8.${i}.1` } })
      statuses.push(res.status)
      if (res.status === 429) {
        assert.ok(Number(res.headers.get('retry-after')) >= 1, 'a 429 says when to retry')
        assert.match(errorMessage(res), /too many requests/)
      }
    }
    // a burst of 4 at 2 rps; the edges hear the bucket is empty within a message's round trip
    assert.ok(statuses.filter((s) => s === 429).length >= 10, `most of 20 quick reads are refused: ${statuses.join(' ')}`)
    await new Promise((resolve) => setTimeout(resolve, 2500))
    assert.equal((await http(node.url, 'GET', '/api/blocks/latest')).status, 200, 'the bucket refilled')
    await node.stop()
  })

  test('a transaction answered accepted by the edge survives kill -9', async () => {
    const alice = newAccount()
    const bob = newAccount()
    // no empty blocks and a long interval: what was accepted is still in the mempool when killed
    const node = await startNode({ alloc: [{ pub: alice.pub, amountUt: FUNDED_UT }], args: ['--http-workers', '1'], blockIntervalMs: 60_000, emptyBlocks: false, env: { SVC_RATE_LIMIT_RPS: '0' } })
    const txs = Array.from({ length: 20 }, (_, i) => transfer(alice, bob.pub, 1000 + i))
    for (const res of await Promise.all(txs.map(async (tx) => await http(node.url, 'POST', '/api/tx', { body: tx })))) assert.equal(res.status, 200)
    await node.kill9()
    await node.restart()
    for (const tx of txs) {
      const res = await http(node.url, 'GET', `/api/tx/${tx.id}`)
      assert.equal(res.status, 200, `${tx.id} is known after the restart`)
    }
    await node.stop()
  })

  test('a port another program holds is refused, not shared through SO_REUSEPORT', async () => {
    const first = await startNode({ args: ['--http-workers', '1'] })
    const port = Number(new URL(first.url).port)
    const second = await startNode({ args: ['--http-workers', '1', '--http-addr', `127.0.0.1:${port}`], mayExitBeforeReady: true })
    const exit = await second.whenExited()
    assert.notEqual(exit.code, 0)
    assert.match(second.tail(), /EADDRINUSE|in use/i)
    assert.equal((await http(first.url, 'GET', '/api/netstats')).status, 200)
    await first.stop()
  })

  test('on shutdown a WebSocket gets its close frame (1001) through the edge', async () => {
    const node = await startNode({ args: ['--http-workers', '1'] })
    const ws = await WsClient.open(node.url)
    const closed = ws.whenClosed(15_000)
    await node.stop()
    assert.equal((await closed).code, 1001)
  })
})
