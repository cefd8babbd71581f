/** The pure parts of the real-time gateway: fan-out, the replay seam, the handshake, one connection's protocol over a fake sink. */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { generateKeyPair, sign, toBase64, toHex } from '../../../src/crypto/index.js'
import { KithError } from '../../../src/errors/index.js'
import {
  CLOSE_CODES, Connection, textFrame, DEFAULT_REALTIME_LIMITS, Frame, Hub, NonceHandshake, ReplaySeam, authText, inboxFrame, parseLastEventId, readRealtimeEnv, sseTopicKeys,
  type ConnectionContext, type MailboxSource, type RealtimeLimits, type Sink
} from '../../../src/realtime/index.js'
import type { InboxEvent } from '../../../src/relay/index.js'

class FakeSink implements Sink {
  readonly sent: Array<Record<string, unknown>> = []
  bufferedAmount = 0
  closedWith: { code: number, reason: string } | undefined
  send (frame: Frame): void { this.sent.push(JSON.parse(frame.json) as Record<string, unknown>) }
  close (code: number, reason: string): void { this.closedWith = { code, reason } }
  last (): Record<string, unknown> | undefined { return this.sent.at(-1) }
}

function item (id: string, sentAt: number): InboxEvent {
  return { id, recipient_pub: 'ab'.repeat(32), sender_pub: 'cd'.repeat(32), sender_ed25519_pub: '', sent_at: sentAt }
}

function context (over: Partial<ConnectionContext> = {}, limits: Partial<RealtimeLimits> = {}): ConnectionContext & { clock: { t: number } } {
  const clock = { t: 1_000_000 }
  return {
    hub: new Hub(),
    limits: { ...DEFAULT_REALTIME_LIMITS, ...limits },
    submit: async (tx) => ({ id: (tx as { id: string }).id, status: 'accepted' }),
    describeError: (err) => err instanceof KithError ? { status: err.code === 'UNAUTHORIZED' ? 401 : 400, error: err.message } : { status: 500, error: 'internal error' },
    limiter: { take: () => true },
    mailbox: undefined,
    writesNeedToken: false,
    protocolVersion: 1,
    nodeVersion: 'test',
    now: () => clock.t,
    clock,
    ...over
  }
}

function connection (ctx: ConnectionContext, sink = new FakeSink()): { conn: Connection, sink: FakeSink } {
  const conn = new Connection(ctx, sink, { id: 'c1', tokenAccepted: true, ip: '192.0.2.1' })
  conn.hello()
  return { conn, sink }
}

describe('hub', () => {
  test('a subscriber on several keys of one event receives it once; no frame is built without subscribers', () => {
    const hub = new Hub()
    const got: string[] = []
    const sub = { deliver: (f: Frame) => got.push(f.json) }
    hub.add('txs:a', sub)
    hub.add('txs', sub)
    assert.equal(hub.publish(['txs', 'txs:a', 'txs:b'], Frame.of({ event: 'tx' })), 1)
    assert.deepEqual(got, ['{"event":"tx"}'])
    let built = 0
    assert.equal(hub.publish(['nobody'], () => { built++; return Frame.of({ event: 'x' }) }), 0)
    assert.equal(built, 0)
    hub.remove('txs', sub)
    hub.remove('txs:a', sub)
    assert.equal(hub.has('txs'), false)
  })

  test('a fan-out larger than a chunk continues on later turns, and later frames keep their order behind it', async () => {
    const done: Array<[number, number]> = []
    const hub = new Hub({ chunk: 2, onFanOut: (n, ms) => done.push([n, ms]) })
    const got = new Map<number, string[]>()
    for (let i = 0; i < 5; i++) {
      got.set(i, [])
      hub.add('blocks', { deliver: (f) => got.get(i)?.push(f.name) })
    }
    hub.add('txs', { deliver: (f) => got.get(0)?.push(f.name) })
    assert.equal(hub.publish(['blocks'], Frame.of({ event: 'first' })), 5)
    assert.equal(hub.publish(['txs'], Frame.of({ event: 'second' })), 1)
    assert.deepEqual([...got.values()].map((names) => names.length), [1, 1, 0, 0, 0], 'one chunk at once')
    for (let turn = 0; turn < 5 && hub.pending > 0; turn++) await new Promise((resolve) => setImmediate(resolve))
    assert.equal(hub.pending, 0)
    assert.deepEqual(got.get(0), ['first', 'second'])
    assert.ok([1, 2, 3, 4].every((i) => got.get(i)?.join() === 'first'))
    assert.equal(done.length, 1)
    assert.equal(done[0][0], 5)
  })

  test('a ready-made WebSocket frame: FIN + text opcode, unmasked, 7-, 16- and 64-bit lengths', () => {
    for (const [n, header] of [[5, [0x81, 5]], [200, [0x81, 126, 0, 200]], [70_000, [0x81, 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70]]] as const) {
      const payload = Buffer.alloc(n, 0x61)
      const frame = textFrame(payload)
      assert.deepEqual([...frame.subarray(0, header.length)], header)
      assert.equal(frame.length, header.length + n)
      assert.ok(frame.subarray(header.length).equals(payload))
    }
  })

  test('an SSE frame names the event and carries the block height as its id', () => {
    assert.equal(new Frame('block', '{"h":1}', undefined, 7).sseText(), 'event: block\nid: 7\ndata: {"h":1}\n\n')
    assert.equal(Frame.of({ event: 'tx' }).sseText(), 'event: tx\ndata: {"event":"tx"}\n\n')
  })
})

describe('replay seam', () => {
  test('live frames wait during the replay; those the replay sent are dropped at the end', () => {
    const seam = new ReplaySeam(10)
    assert.equal(seam.replay('a'), true)
    assert.equal(seam.live(inboxFrame(item('b', 2))), 'hold')
    assert.equal(seam.live(inboxFrame(item('a', 1))), 'hold')
    assert.equal(seam.replay('b'), true)
    assert.equal(seam.replay('b'), false)
    assert.equal(seam.live(inboxFrame(item('c', 3))), 'hold')
    assert.deepEqual(seam.finish().map((f) => f.envelopeId), ['c'])
    assert.equal(seam.live(inboxFrame(item('d', 4))), 'send')
  })

  test('more waiting frames than the bound is an overflow', () => {
    const seam = new ReplaySeam(1)
    assert.equal(seam.live(inboxFrame(item('a', 1))), 'hold')
    assert.equal(seam.live(inboxFrame(item('b', 1))), 'overflow')
  })
})

describe('nonce handshake', () => {
  const key = generateKeyPair()
  const pub = toHex(key.publicKey)
  const proof = (nonce: string, by = key): string => toBase64(sign(Buffer.from(authText(nonce, pub)), by.secretKey))

  test('a signature over the nonce proves the key once', () => {
    const hs = new NonceHandshake()
    const nonce = hs.pendingNonce as string
    assert.equal(hs.prove(nonce, pub, proof(nonce)), pub)
    assert.equal(hs.identity, pub)
    assert.throws(() => hs.prove(nonce, pub, proof(nonce)), /already proved/)
  })

  test('a nonce of another connection, or a signature by another key, is refused', () => {
    const mine = new NonceHandshake()
    const theirs = new NonceHandshake()
    const stolen = theirs.pendingNonce as string
    assert.throws(() => mine.prove(stolen, pub, proof(stolen)), (err: unknown) => err instanceof KithError && err.code === 'UNAUTHORIZED' && /not issued to this connection/.test(err.message))
    const nonce = mine.pendingNonce as string
    assert.throws(() => mine.prove(nonce, pub, proof(nonce, generateKeyPair())), /not a valid signature/)
    assert.throws(() => mine.prove(nonce, pub, 'not base64!'), /not a valid signature/)
    assert.equal(mine.prove(nonce, pub, proof(nonce)), pub)
  })
})

describe('connection protocol', () => {
  test('hello first; errors name the op and req', () => {
    const { conn, sink } = connection(context())
    assert.equal(sink.sent[0].event, 'hello')
    conn.onMessage('{"op":"subscribe","req":"q1","topic":"nope"}')
    assert.deepEqual([sink.last()?.event, sink.last()?.op, sink.last()?.req, sink.last()?.code], ['error', 'subscribe', 'q1', 400])
    conn.onMessage('[1,2]')
    assert.equal(sink.last()?.op, null)
  })

  test('a frame that would pass the queue bound closes the slow consumer with 4000', () => {
    const ctx = context({}, { maxQueuedBytes: 1000 })
    const { conn, sink } = connection(ctx)
    conn.onMessage('{"op":"subscribe","topic":"blocks"}')
    assert.equal(ctx.hub.count('blocks'), 1)
    sink.bufferedAmount = 990
    ctx.hub.publish(['blocks'], Frame.of({ event: 'block', height: 1 }))
    assert.equal(sink.closedWith?.code, CLOSE_CODES.SLOW_CONSUMER)
    assert.equal(ctx.hub.count('blocks'), 0, 'a closed connection leaves its topics')
  })

  test('over the rate: an error per message, then close 4029 after many in a row', () => {
    const { conn, sink } = connection(context({ limiter: { take: () => false } }))
    conn.onMessage('{"op":"ping"}')
    assert.equal(sink.last()?.code, 400)
    assert.match(String(sink.last()?.error), /too many messages/)
    for (let i = 0; i < 60 && sink.closedWith === undefined; i++) conn.onMessage('{"op":"ping"}')
    assert.equal(sink.closedWith?.code, CLOSE_CODES.RATE_LIMITED)
  })

  test('the per-IP bucket: every message takes a token from its address; a refusal answers in the op\'s shape', async () => {
    const taken: string[] = []
    let tokens = 3
    const ctx = context({
      describeError: (err) => err instanceof KithError && err.code === 'RATE_LIMITED' ? { status: 429, error: err.message } : { status: 400, error: 'x' },
      addressLimiter: { admit: (ip) => { taken.push(ip); return { allowed: tokens-- > 0, retryAfterSeconds: 2 } } }
    })
    const { conn, sink } = connection(ctx)
    conn.onMessage('{"op":"ping","req":"p1"}')
    conn.onMessage('not json')
    conn.onMessage('{"op":"subscribe","topic":"blocks","req":"s1"}')
    assert.deepEqual(taken, ['192.0.2.1', '192.0.2.1', '192.0.2.1'], 'valid or not, each message took a token of its address')
    assert.deepEqual(sink.sent.slice(1).map((m) => m.event), ['pong', 'error', 'subscribed'])
    conn.onMessage(JSON.stringify({ op: 'submit_tx', req: 'r', tx: { id: 'tx-7' } }))
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual([sink.last()?.event, sink.last()?.id, sink.last()?.status, sink.last()?.code, sink.last()?.req], ['submit_ack', 'tx-7', 'rejected', 429, 'r'])
    assert.match(String(sink.last()?.error), /too many requests from this address.*retry after 2 s/)
    conn.onMessage('{"op":"subscribe","topic":"txs","req":"s2"}')
    assert.deepEqual([sink.last()?.event, sink.last()?.op, sink.last()?.req, sink.last()?.code], ['error', 'subscribe', 's2', 429])
    assert.equal(ctx.hub.count('txs'), 0, 'the refused subscription was not made')
    for (let i = 0; i < 60 && sink.closedWith === undefined; i++) conn.onMessage('{"op":"ping"}')
    assert.equal(sink.closedWith?.code, CLOSE_CODES.RATE_LIMITED, 'refused in a row by the address bucket, the connection is closed')
  })

  test('subscription cap; idle only without subscriptions', () => {
    const ctx = context({}, { maxSubscriptions: 1, idleMs: 1000 })
    const { conn, sink } = connection(ctx)
    ctx.clock.t += 1000
    assert.equal(conn.isIdle(ctx.clock.t), true)
    conn.onMessage('{"op":"subscribe","topic":"blocks"}')
    conn.onMessage('{"op":"subscribe","topic":"txs"}')
    assert.match(String(sink.last()?.error), /at most 1 subscriptions/)
    ctx.clock.t += 5000
    assert.equal(conn.isIdle(ctx.clock.t), false)
  })

  test('submit_tx: token-writes mode without the token is refused with 401 and the transaction id', async () => {
    const ctx = context({ writesNeedToken: true })
    const sink = new FakeSink()
    const conn = new Connection(ctx, sink, { id: 'c', tokenAccepted: false, ip: '192.0.2.1' })
    conn.onMessage(JSON.stringify({ op: 'submit_tx', req: 'r', tx: { id: 'tx-9' } }))
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual([sink.last()?.event, sink.last()?.id, sink.last()?.status, sink.last()?.code, sink.last()?.req], ['submit_ack', 'tx-9', 'rejected', 401, 'r'])
  })

  test('mailbox replay then live: stored pages, held live frames without repeats, caught_up', async () => {
    const stored = Array.from({ length: 450 }, (_, i) => item(`e${String(i).padStart(4, '0')}`, 100 + Math.floor(i / 3)))
    const hubRef: { hub?: Hub } = {}
    const mailbox: MailboxSource = {
      requireReadAuth: false,
      ownsMailbox: () => true,
      page: (_pub, from) => {
        const start = stored.findIndex((e) => e.sent_at > (from.since ?? 0) || (e.sent_at === from.since && (from.after === undefined || e.id > from.after)))
        const items = start < 0 ? [] : stored.slice(start, start + from.limit)
        // a live envelope arrives while the replay runs, and one of the stored ones is announced late
        if (from.after !== undefined) hubRef.hub?.publish([`mailbox:${'ab'.repeat(32)}`], inboxFrame(item(from.after, 0)))
        return { items, hasMore: start >= 0 && start + from.limit < stored.length }
      }
    }
    const ctx = context({ mailbox })
    hubRef.hub = ctx.hub
    const { conn, sink } = connection(ctx)
    conn.onMessage(JSON.stringify({ op: 'subscribe', req: 'm', topic: 'mailbox', pub: 'ab'.repeat(32), since: 0 }))
    ctx.hub.publish([`mailbox:${'ab'.repeat(32)}`], inboxFrame(item('live1', 999)))
    const caughtUp = await (async () => {
      for (let i = 0; i < 100; i++) {
        const found = sink.sent.find((m) => m.event === 'caught_up')
        if (found !== undefined) return found
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      throw new Error('no caught_up')
    })()
    assert.equal(caughtUp.replayed, 450)
    const ids = sink.sent.filter((m) => m.event === 'inbox').map((m) => m.id)
    assert.equal(ids.length, 451)
    assert.equal(new Set(ids).size, 451)
    assert.equal(ids.at(-1), 'live1')
    ctx.hub.publish([`mailbox:${'ab'.repeat(32)}`], inboxFrame(item('live2', 1000)))
    assert.equal(sink.last()?.id, 'live2')
    assert.equal(sink.last()?.replay, undefined)
  })
})

describe('SSE query and options', () => {
  test('topics and Last-Event-ID', () => {
    const pub = 'ab'.repeat(32)
    assert.deepEqual(sseTopicKeys(`blocks, txs,txs:${pub},mailbox:${pub.toUpperCase()}`), ['blocks', 'txs', `txs:${pub}`, `mailbox:${pub}`])
    assert.throws(() => sseTopicKeys('weather'), /unknown topic "weather"/)
    assert.throws(() => sseTopicKeys('txs:nobody'), /neither/)
    assert.throws(() => sseTopicKeys(' , '), /at least one/)
    assert.equal(parseLastEventId('12'), 12)
    assert.equal(parseLastEventId(undefined), undefined)
    assert.throws(() => parseLastEventId('x1'), /not a block height/)
  })

  test('SVC_WS_* override the defaults; a bad value names the variable', () => {
    const limits = readRealtimeEnv({ SVC_WS_MAX_CONNECTIONS_PER_IP: '0', SVC_WS_IDLE_MS: '5000' }, { maxMessageBytes: 42 })
    assert.deepEqual([limits.maxConnectionsPerIp, limits.idleMs, limits.maxMessageBytes, limits.maxSubscriptions], [0, 5000, 42, DEFAULT_REALTIME_LIMITS.maxSubscriptions])
    assert.throws(() => readRealtimeEnv({ SVC_WS_MAX_QUEUED_BYTES: '-1' }), /SVC_WS_MAX_QUEUED_BYTES/)
  })
})
