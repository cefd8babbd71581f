/**
 * The real-time gateway against real node processes, with real `ws` clients and an SSE reader:
 * every operation and push event, replay-then-live across a reconnect, tokens and the nonce
 * handshake, a slow consumer that never reads, fan-out to many sockets, an `inbox` event for an
 * envelope that arrives by gossip from a second node, and the close code on SIGTERM.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import nacl from 'tweetnacl'
import { buildTx, newAccount, transfer } from '../../src/client/index.js'
import { sign, toBase64, toHex } from '../../src/crypto/index.js'
import { errorMessage, http, KITH_BIN, pickBasePort, REPO_ROOT, startNode, stopAllNodes, waitFor, type NodeProcess } from '../helpers/node-process.js'
import { SseReader, WsClient, type Pushed } from '../helpers/realtime-client.js'
import { envelopeFor } from '../helpers/envelopes.js'

const run = promisify(execFile)

async function broadcast (node: NodeProcess, envelope: Record<string, unknown>): Promise<string> {
  const res = await http(node.url, 'POST', '/relay/broadcast', { body: { envelope } })
  assert.equal(res.status, 200, res.text)
  return (res.json as { id: string }).id
}

const open: WsClient[] = []
async function connect (node: NodeProcess, query = ''): Promise<WsClient> {
  const client = await WsClient.open(node.url, query)
  open.push(client)
  return client
}

describe('real-time gateway on one public node', { timeout: 180_000 }, () => {
  let node: NodeProcess
  const alice = newAccount()
  const bob = newAccount()

  before(async () => {
    node = await startNode({
      alloc: [{ pub: alice.pub, amountUt: 10_000_000 }],
      // fast keep-alives so the SSE test sees one; no per-connection rate limit so one socket can flood another
      env: { SVC_SSE_KEEPALIVE_MS: '200', SVC_WS_MESSAGES_PER_SECOND: '0', SVC_WS_MAX_QUEUED_BYTES: '65536', SVC_RELAY_SENDER_RPS: '0' }
    })
  })

  after(async () => {
    for (const c of open) c.ws.terminate()
    await stopAllNodes()
  })

  test('hello carries a nonce and the caps; ws_submit_tx is a feature tag', async () => {
    const ws = await connect(node)
    assert.match(ws.hello.nonce as string, /^[0-9a-f]{64}$/)
    assert.equal(ws.hello.protocol_version, 1)
    assert.equal(ws.hello.mailbox_needs_auth, false)
    assert.equal(ws.hello.token_accepted, true)
    const version = await node.client.request<{ features: string[] }>('GET', '/api/well-known-version')
    assert.ok(version.features.includes('ws_submit_tx'))
    const doc = await node.client.request<{ paths: Record<string, unknown>, components: { schemas: Record<string, unknown> } }>('GET', '/swagger/openapi.json')
    assert.ok(doc.paths['/api/ws'] !== undefined && doc.paths['/api/events'] !== undefined)
    for (const name of ['WsSubscribe', 'WsSubmitTx', 'WsTyping', 'WsPing', 'WsAuth', 'WsInboxEvent', 'WsSubmitAck', 'WsBlockEvent', 'WsTxEvent', 'WsTypingEvent']) {
      assert.ok(doc.components.schemas[name] !== undefined, name)
    }
    const plain = await http(node.url, 'GET', '/api/ws')
    assert.equal(plain.status, 426)
  })

  test('blocks, txs by address, submit_tx with submit_ack, ping', async () => {
    const ws = await connect(node)
    assert.equal((await ws.request({ op: 'subscribe', topic: 'blocks' })).event, 'subscribed')
    const block = await ws.next((m) => m.event === 'block')
    assert.equal(typeof block.height, 'number')
    assert.match(block.hash as string, /^[0-9a-f]{64}$/)
    const watcher = await connect(node)
    assert.equal((await watcher.request({ op: 'subscribe', topic: 'txs', address: bob.address })).key, `txs:${bob.pub}`)

    const tx = transfer(alice, bob.pub, 1_000_000)
    const ack = await ws.request({ op: 'submit_tx', tx })
    assert.deepEqual({ event: ack.event, id: ack.id, status: ack.status }, { event: 'submit_ack', id: tx.id, status: 'accepted' })
    const accepted = await watcher.next((m) => m.event === 'tx' && m.id === tx.id)
    assert.equal(accepted.status, 'accepted')
    assert.equal(accepted.to, bob.pub)
    const confirmed = await watcher.next((m) => m.event === 'tx' && m.id === tx.id && m.status === 'confirmed', 15_000)
    assert.equal(typeof confirmed.block_index, 'number')
    // the same transaction again: accepted again, as POST /api/tx answers a byte-identical retry
    assert.equal((await ws.request({ op: 'submit_tx', tx })).status, 'accepted')

    const pong = await ws.request({ op: 'ping' })
    assert.equal(pong.event, 'pong')
    assert.equal(typeof pong.time, 'number')
  })

  test('a rejected submit_tx carries the status and error text of POST /api/tx', async () => {
    const ws = await connect(node)
    const good = transfer(alice, bob.pub, 1000)
    const badSignature = { ...good, signature: toBase64(new Uint8Array(64)) }
    const stale = transfer(alice, bob.pub, 1000, { time: Date.now() - 3_600_000 })
    const poor = transfer(newAccount(), alice.pub, 1000)
    for (const tx of [badSignature, stale, poor, { ...good, fee: -1 }]) {
      const viaHttp = await http(node.url, 'POST', '/api/tx', { body: tx })
      const ack = await ws.request({ op: 'submit_tx', tx })
      assert.equal(ack.status, 'rejected')
      assert.equal(ack.id, tx.id)
      assert.equal(ack.code, viaHttp.status)
      assert.equal(ack.error, errorMessage(viaHttp))
    }
    const ackBad = await ws.request({ op: 'submit_tx', tx: { ...good, signature: toBase64(new Uint8Array(64)), id: 'tx-sig' } })
    assert.match(ackBad.error as string, /signature/)
  })

  test('bad messages are answered with errors naming the request; the socket stays open', async () => {
    const ws = await connect(node)
    ws.send('not json')
    assert.deepEqual(await ws.next((m) => m.event === 'error'), { event: 'error', op: null, code: 400, error: 'message is not valid JSON' })
    ws.send({ no: 'op' })
    assert.equal((await ws.next((m) => m.event === 'error')).op, null)
    const unknown = await ws.request({ op: 'launch' })
    assert.equal(unknown.op, 'launch')
    assert.match(unknown.error as string, /unknown op "launch"/)
    const badTopic = await ws.request({ op: 'subscribe', topic: 'weather' })
    assert.deepEqual([badTopic.event, badTopic.op, badTopic.code], ['error', 'subscribe', 400])
    const badPub = await ws.request({ op: 'subscribe', topic: 'mailbox', pub: 'zz' })
    assert.match(badPub.error as string, /pub/)
    const badAddress = await ws.request({ op: 'subscribe', topic: 'txs', address: 'nobody' })
    assert.match(badAddress.error as string, /address/)
    await ws.request({ op: 'subscribe', topic: 'blocks' })
    const again = await ws.request({ op: 'subscribe', topic: 'blocks' })
    assert.match(again.error as string, /already subscribed to blocks/)
    assert.equal((await ws.request({ op: 'unsubscribe', topic: 'blocks' })).event, 'unsubscribed')
    const notSubscribed = await ws.request({ op: 'unsubscribe', topic: 'blocks' })
    assert.deepEqual([notSubscribed.op, notSubscribed.code], ['unsubscribe', 404])
    const typingAnon = await ws.request({ op: 'typing', to: bob.pub })
    assert.deepEqual([typingAnon.op, typingAnon.code], ['typing', 401])
    ws.ws.send(Buffer.from([1, 2, 3]), { binary: true })
    assert.match((await ws.next((m) => m.event === 'error')).error as string, /binary/)
    assert.equal((await ws.request({ op: 'ping' })).event, 'pong')
    assert.equal(ws.closed, undefined)
  })

  test('nonce handshake: a good proof, a replayed nonce, a signature for another key; typing as the proven key', async () => {
    const a = await connect(node)
    const b = await connect(node)
    // a signature by Bob's key presented as Alice's
    const nonceA = a.hello.nonce as string
    const wrongKey = await a.request({ op: 'auth', nonce: nonceA, ed25519_pub: alice.pub, sig: toBase64(sign(Buffer.from(`kith-ws-auth:${nonceA}:${alice.pub}`), bob.keyPair.secretKey)) })
    assert.deepEqual([wrongKey.event, wrongKey.op, wrongKey.code], ['error', 'auth', 401])
    assert.match(wrongKey.error as string, /not a valid signature by/)
    assert.equal((await a.auth(alice.keyPair, alice.pub)).ed25519_pub, alice.pub)
    // the same proof again, on the same connection and on another
    const proof = { op: 'auth', nonce: nonceA, ed25519_pub: alice.pub, sig: toBase64(sign(Buffer.from(`kith-ws-auth:${nonceA}:${alice.pub}`), alice.keyPair.secretKey)) }
    const replayedHere = await a.request(proof)
    assert.equal(replayedHere.code, 401)
    const replayedThere = await b.request(proof)
    assert.equal(replayedThere.code, 401)
    assert.match(replayedThere.error as string, /was not issued to this connection or was already used/)
    assert.equal((await b.auth(bob.keyPair, bob.pub)).event, 'authenticated')

    assert.equal((await a.request({ op: 'subscribe', topic: 'typing', with: bob.pub })).event, 'subscribed')
    b.send({ op: 'typing', to: alice.pub })
    assert.deepEqual(await a.next((m) => m.event === 'typing'), { event: 'typing', from: bob.pub, to: alice.pub, state: 'typing' })
    b.send({ op: 'typing', to: alice.pub, state: 'stopped' })
    assert.equal((await a.next((m) => m.event === 'typing')).state, 'stopped')
  })

  test('inbox events carry sender_ed25519_pub ("" when none)', async () => {
    const device = nacl.box.keyPair()
    const pub = toHex(device.publicKey)
    const ws = await connect(node)
    await ws.request({ op: 'subscribe', topic: 'mailbox', pub })
    const signed = await broadcast(node, envelopeFor(device.publicKey, bob.pub))
    const plain = await broadcast(node, envelopeFor(device.publicKey))
    const first = await ws.next((m) => m.event === 'inbox')
    const second = await ws.next((m) => m.event === 'inbox')
    assert.deepEqual([first.id, first.sender_ed25519_pub, first.recipient_pub], [signed, bob.pub, pub])
    assert.deepEqual([second.id, second.sender_ed25519_pub], [plain, ''])
    assert.equal(first.replay, undefined)
  })

  test('mailbox replay-then-live across a reconnect: nothing missed, nothing twice', async () => {
    const device = nacl.box.keyPair()
    const pub = toHex(device.publicKey)
    const before = [await broadcast(node, envelopeFor(device.publicKey)), await broadcast(node, envelopeFor(device.publicKey))]
    const first = await connect(node)
    const sub = await first.request({ op: 'subscribe', topic: 'mailbox', pub, since: 0 })
    assert.equal(sub.event, 'subscribed')
    const caughtUp = await first.next((m) => m.event === 'caught_up')
    assert.equal(caughtUp.replayed, 2)
    const replayed = first.received.filter((m) => m.event === 'inbox')
    assert.deepEqual(new Set(replayed.map((m) => m.id)), new Set(before))
    assert.ok(replayed.every((m) => m.replay === true))
    const live = await broadcast(node, envelopeFor(device.publicKey))
    const liveEvent = await first.next((m) => m.event === 'inbox')
    assert.equal(liveEvent.id, live)
    first.close()
    await first.whenClosed()

    // while the app is away, two more arrive; it reconnects from the second of the last envelope it holds
    // (`since` is inclusive: envelopes of that second that it already holds come again, and it drops them by id)
    const missed = [await broadcast(node, envelopeFor(device.publicKey)), await broadcast(node, envelopeFor(device.publicKey))]
    const second = await connect(node)
    // envelopes keep arriving during the replay
    const racing = (async () => await Promise.all(Array.from({ length: 5 }, async () => await broadcast(node, envelopeFor(device.publicKey)))))()
    await second.request({ op: 'subscribe', topic: 'mailbox', pub, since: liveEvent.sent_at as number })
    const racingIds = await racing
    await second.next((m) => m.event === 'caught_up')
    const expected = [...missed, ...racingIds]
    const inboxIds = (): string[] => second.received.filter((m) => m.event === 'inbox').map((m) => m.id as string)
    await waitFor(() => expected.every((id) => inboxIds().includes(id)), 10_000, { message: 'every envelope sent while away or during the replay' })
    const ids = inboxIds()
    assert.equal(ids.length, new Set(ids).size, `an envelope came twice: ${ids.join(' ')}`)
    assert.ok(ids.every((id) => expected.includes(id) || id === live || before.includes(id)), 'only envelopes of the mailbox')
    const markerAt = second.received.findIndex((m) => m.event === 'caught_up')
    const afterMarker = second.received.slice(markerAt + 1).filter((m) => m.event === 'inbox')
    assert.ok(afterMarker.every((m) => m.replay === undefined), 'no replayed item after caught_up')
  })

  test('fan-out: one block and one envelope reach many sockets', async () => {
    const device = nacl.box.keyPair()
    const pub = toHex(device.publicKey)
    const many = await Promise.all(Array.from({ length: 60 }, async () => await connect(node)))
    await Promise.all(many.map(async (c) => {
      await c.request({ op: 'subscribe', topic: 'blocks' })
      await c.request({ op: 'subscribe', topic: 'mailbox', pub })
    }))
    const height = (await many[0].next((m) => m.event === 'block')).height as number
    const id = await broadcast(node, envelopeFor(device.publicKey))
    await Promise.all(many.map(async (c) => {
      await waitFor(() => c.received.some((m) => m.event === 'inbox') && c.received.some((m) => m.event === 'block' && m.height === height + 1), 15_000, { message: 'block and inbox on every socket' })
      assert.equal(c.received.filter((m) => m.event === 'block' && m.height === height + 1).length, 1)
      assert.deepEqual(c.received.filter((m) => m.event === 'inbox').map((m) => m.id), [id])
    }))
    for (const c of many) c.close()
  })

  test('a slow consumer that never reads is cut, and the node keeps serving', async () => {
    const victim = newAccount()
    const flooder = newAccount()
    const slow = await connect(node)
    await slow.auth(victim.keyPair, victim.pub)
    await slow.request({ op: 'subscribe', topic: 'typing' })
    slow.ws._socket.pause()
    const noisy = await connect(node)
    await noisy.auth(flooder.keyPair, flooder.pub)
    const cut = node.nextLog((l) => l.msg === 'closed a slow consumer', 60_000)
    // typing frames of ~200 bytes: enough to fill the kernel buffers and then the 64 KiB queue
    for (let batch = 0; batch < 40; batch++) {
      for (let i = 0; i < 1000; i++) noisy.send({ op: 'typing', to: victim.pub })
      await noisy.request({ op: 'ping' }, 30_000)
      if (node.logs.some((l) => l.msg === 'closed a slow consumer')) break
    }
    const line = await cut
    assert.ok((line.queuedBytes as number) <= 65_536 + 1024, `queued ${String(line.queuedBytes)} bytes`)
    slow.ws._socket.resume()
    const closed = await slow.whenClosed(15_000)
    assert.ok([4000, 1006].includes(closed.code), `closed with ${closed.code}`)
    // the node still serves: the flooder's socket, a new socket, HTTP
    assert.equal((await noisy.request({ op: 'ping' })).event, 'pong')
    const fresh = await connect(node)
    assert.equal((await fresh.request({ op: 'ping' })).event, 'pong')
    assert.ok((await node.client.netstats()).height >= 1)
  })

  test('SSE: named events, Last-Event-ID resumption of blocks, keep-alive comments', async () => {
    const device = nacl.box.keyPair()
    const pub = toHex(device.publicKey)
    const first = await SseReader.open(`${node.url}/api/events?topics=blocks,txs:${bob.pub},mailbox:${pub}`)
    assert.equal(first.status, 200)
    await waitFor(() => first.events.some((e) => e.event === 'block'), 10_000)
    const id = await broadcast(node, envelopeFor(device.publicKey, alice.pub))
    const tx = transfer(alice, bob.pub, 1000)
    await node.client.submit(tx)
    await waitFor(() => first.events.some((e) => e.event === 'inbox') && first.events.filter((e) => e.event === 'tx').length >= 2, 15_000, { message: 'inbox and tx events' })
    const inbox = first.events.find((e) => e.event === 'inbox')?.data as Pushed
    assert.deepEqual([inbox.id, inbox.sender_ed25519_pub], [id, alice.pub])
    assert.deepEqual(first.events.filter((e) => e.event === 'tx').map((e) => (e.data as Pushed).status), ['accepted', 'confirmed'])
    await waitFor(() => first.comments.includes('keep-alive'), 10_000, { message: 'a keep-alive comment' })
    const blocks = first.events.filter((e) => e.event === 'block')
    assert.ok(blocks.every((e) => e.id === String((e.data as Pushed).height)))
    first.close()
    const lastSeen = Number(blocks[0].id)

    const resumed = await SseReader.open(`${node.url}/api/events?topics=blocks`, { 'Last-Event-ID': String(lastSeen) })
    await waitFor(() => resumed.events.length >= 3, 10_000)
    const heights = resumed.events.map((e) => (e.data as Pushed).height as number)
    assert.equal(heights[0], lastSeen + 1)
    heights.forEach((h, i) => assert.equal(h, lastSeen + 1 + i, `heights in order without gaps or repeats: ${heights.join(',')}`))
    resumed.close()

    const bad = await http(node.url, 'GET', '/api/events?topics=weather')
    assert.equal(bad.status, 400)
    assert.match(errorMessage(bad), /unknown topic "weather"/)
  })

  test('SIGTERM closes sockets with 1001 and the node exits cleanly', async () => {
    const ws = await connect(node)
    await ws.request({ op: 'subscribe', topic: 'blocks' })
    const sse = await SseReader.open(`${node.url}/api/events`)
    await node.stop()
    const closed = await ws.whenClosed()
    assert.deepEqual([closed.code, closed.reason], [1001, 'node shutting down'])
    await sse.ended()
  })
})

describe('real-time tokens and mailbox read authentication', { timeout: 120_000 }, () => {
  let writes: NodeProcess
  let priv: NodeProcess
  const owner = newAccount()
  const device = nacl.box.keyPair()

  before(async () => {
    ;[writes, priv] = await Promise.all([
      startNode({ alloc: [{ pub: owner.pub, amountUt: 1_000_000 }], token: 'w-secret', env: { SVC_API_TOKEN: 'w-secret', SVC_RELAY_READ_AUTH: 'true' } }),
      startNode({ token: 'p-secret', env: { SVC_API_TOKEN: 'p-secret', SVC_API_PRIVATE: 'true' } })
    ])
  })

  after(async () => {
    for (const c of open) c.ws.terminate()
    await stopAllNodes()
  })

  test('token-writes mode: submit_tx needs ?token= on the upgrade; reads do not', async () => {
    const anonymous = await connect(writes)
    assert.equal(anonymous.hello.token_accepted, false)
    const tx = transfer(owner, newAccount().pub, 1000)
    const refused = await anonymous.request({ op: 'submit_tx', tx })
    assert.deepEqual([refused.status, refused.code, refused.id], ['rejected', 401, tx.id])
    assert.match(refused.error as string, /token/)
    assert.equal((await anonymous.request({ op: 'subscribe', topic: 'blocks' })).event, 'subscribed')
    const wrong = await connect(writes, '?token=nope')
    assert.equal((await wrong.request({ op: 'submit_tx', tx })).code, 401)
    const holder = await connect(writes, '?token=w-secret')
    assert.equal(holder.hello.token_accepted, true)
    assert.equal((await holder.request({ op: 'submit_tx', tx })).status, 'accepted')
  })

  test('fully private mode: the upgrade and the SSE stream need the token', async () => {
    await assert.rejects(WsClient.open(priv.url), /upgrade refused: 401/)
    await assert.rejects(WsClient.open(priv.url, '?token=wrong'), /upgrade refused: 401/)
    const ws = await connect(priv, '?token=p-secret')
    assert.equal((await ws.request({ op: 'ping' })).event, 'pong')
    assert.equal((await SseReader.open(`${priv.url}/api/events`)).status, 401)
    const sse = await SseReader.open(`${priv.url}/api/events`, { Authorization: 'Bearer p-secret' })
    assert.equal(sse.status, 200)
    sse.close()
  })

  test('SVC_RELAY_READ_AUTH: a mailbox subscription needs a proven key that owns the mailbox', async () => {
    const pub = toHex(device.publicKey)
    const anonymous = await connect(writes)
    assert.equal(anonymous.hello.mailbox_needs_auth, true)
    const noProof = await anonymous.request({ op: 'subscribe', topic: 'mailbox', pub })
    assert.deepEqual([noProof.op, noProof.code], ['subscribe', 401])
    const stranger = newAccount()
    const other = await connect(writes)
    await other.auth(stranger.keyPair, stranger.pub)
    assert.equal((await other.request({ op: 'subscribe', topic: 'mailbox', pub })).code, 403)
    assert.equal((await SseReader.open(`${writes.url}/api/events?topics=mailbox:${pub}`)).status, 401)

    await writes.client.submitAndWait(buildTx(owner, { type: 'REGISTER_KEY', payload: { x25519_pub: pub } }))
    const mine = await connect(writes)
    await mine.auth(owner.keyPair, owner.pub)
    assert.equal((await mine.request({ op: 'subscribe', topic: 'mailbox', pub, since: 0 })).event, 'subscribed')
    await mine.next((m) => m.event === 'caught_up')
    const id = await broadcast(writes, envelopeFor(device.publicKey))
    assert.equal((await mine.next((m) => m.event === 'inbox')).id, id)
  })
})

describe('real-time inbox events for envelopes that arrive by gossip', { timeout: 120_000 }, () => {
  let dir: string
  let a: NodeProcess
  let b: NodeProcess

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kith-rt-'))
    const basePort = await pickBasePort(2)
    await run(KITH_BIN, ['testnet', '--validators', '2', '--output', join(dir, 'net'), '--base-port', String(basePort)], {
      cwd: REPO_ROOT, env: { ...process.env, PATH: `${join(REPO_ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}` }
    })
    ;[a, b] = await Promise.all([0, 1].map(async (i) => await startNode({ home: join(dir, 'net', `node${i}`), blockIntervalMs: 150 })))
    await waitFor(async () => (await a.client.netstats()).height >= 1 && (await b.client.netstats()).height >= 1, 30_000)
  })

  after(async () => {
    for (const c of open) c.ws.terminate()
    await stopAllNodes()
    await rm(dir, { recursive: true, force: true })
  })

  test('an envelope broadcast to node A is pushed to a subscriber on node B', async () => {
    const device = nacl.box.keyPair()
    const pub = toHex(device.publicKey)
    const sender = newAccount()
    const onB = await connect(b)
    await onB.request({ op: 'subscribe', topic: 'mailbox', pub })
    const sse = await SseReader.open(`${b.url}/api/events?topics=mailbox:${pub}`)
    const id = await broadcast(a, envelopeFor(device.publicKey, sender.pub))
    const pushed = await onB.next((m) => m.event === 'inbox', 20_000)
    assert.deepEqual([pushed.id, pushed.recipient_pub, pushed.sender_ed25519_pub], [id, pub, sender.pub])
    await waitFor(() => sse.events.some((e) => e.event === 'inbox' && (e.data as Pushed).id === id), 20_000, { message: 'SSE inbox on node B' })
    sse.close()
  })
})

describe('real-time caps, heartbeats and idle timeout', { timeout: 120_000 }, () => {
  let node: NodeProcess

  before(async () => {
    node = await startNode({
      env: {
        SVC_WS_MAX_CONNECTIONS_PER_IP: '3',
        SVC_WS_HEARTBEAT_MS: '200',
        SVC_WS_IDLE_MS: '400',
        SVC_WS_MESSAGES_PER_SECOND: '2',
        SVC_MAX_BODY_BYTES: '4096'
      }
    })
  })

  after(async () => {
    for (const c of open) c.ws.terminate()
    await stopAllNodes()
  })

  test('connections per IP: the one over the cap is answered 429, and a slot comes back when one closes', async () => {
    const held = [await connect(node), await connect(node), await connect(node)]
    for (const c of held) await c.request({ op: 'subscribe', topic: 'blocks' })
    await assert.rejects(WsClient.open(node.url), /upgrade refused: 429/)
    assert.equal((await SseReader.open(`${node.url}/api/events`)).status, 429)
    held[0].close()
    await held[0].whenClosed()
    const next = await connectWhenFree()
    for (const c of [...held, next]) c.close()
    await Promise.all([...held, next].map(async (c) => await c.whenClosed()))
  })

  /** A connection once the per-IP cap has room again (the node frees a slot when the socket has closed on its side). */
  async function connectWhenFree (): Promise<WsClient> {
    return await waitFor(async () => await WsClient.open(node.url).then((c) => { open.push(c); return c }, () => undefined), 10_000, { message: 'a free connection slot' })
  }

  test('a message over the size cap closes with 1009; over the rate, errors name the request', async () => {
    const rated = await connectWhenFree()
    await rated.request({ op: 'subscribe', topic: 'blocks' })
    for (let i = 0; i < 8; i++) rated.send({ op: 'ping', req: `p${i}` })
    const refused = await rated.next((m) => m.event === 'error' && m.code === 429)
    assert.match(refused.error as string, /too many messages/)
    const big = await connectWhenFree()
    big.send({ op: 'ping', pad: 'x'.repeat(8000) })
    assert.equal((await big.whenClosed()).code, 1009)
    rated.close()
    await rated.whenClosed()
  })

  test('idle sockets are closed with 4001; a socket that stops answering pings is cut', async () => {
    const idle = await connectWhenFree()
    assert.equal((await idle.whenClosed(15_000)).code, 4001)
    const mute = await connectWhenFree()
    await mute.request({ op: 'subscribe', topic: 'blocks' })
    // a paused socket reads nothing, so it answers no ping; ten heartbeat intervals later it has been cut
    mute.ws._socket.pause()
    await new Promise((resolve) => setTimeout(resolve, 2000))
    mute.ws._socket.resume()
    const cut = await mute.whenClosed(15_000)
    assert.equal(cut.code, 1006)
  })
})
