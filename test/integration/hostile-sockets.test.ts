/**
 * Hostile clients at the socket level (issue 25, items 1 and 6), against real node processes
 * with raw TCP sockets. A connection reset (RST) at every stage of HTTP, of a WebSocket upgrade
 * (refused or accepted), of an open WebSocket and of an SSE stream, on the p2p port and on the
 * media sidecar, leaves the process up and serving. And one per-IP bucket limits HTTP requests,
 * SSE opens, WebSocket upgrades and every WebSocket message together: 8 sockets × 40
 * `submit_tx` from one address get no more work done than the bucket allows, while another
 * address is served.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { request } from 'node:http'
import { promisify } from 'node:util'
import { newAccount, transfer } from '../../src/client/index.js'
import { errorMessage, http, startNode, startSidecar, stopAllNodes, waitFor, type NodeProcess, type SidecarProcess } from '../helpers/node-process.js'
import { clientTextFrame, RawSocket, upgradeHead } from '../helpers/raw-socket.js'
import { WsClient } from '../helpers/realtime-client.js'

const run = promisify(execFile)
const TOKEN = 'hostile-sockets-token'
/** the per-IP bucket of the rate-limited node: 5 a second, bursts of 10 */
const RPS = 5
/** the address other clients come from: loopback is all of 127/8 on Linux */
const BYSTANDER = '127.0.0.2'

/** The process is alive and answers GET /api/netstats (with `headers`). */
async function assertServing (node: NodeProcess, headers: Record<string, string> = {}): Promise<void> {
  assert.ok(node.isRunning, `the node process is alive\n${node.tail()}`)
  const res = await fetch(`${node.url}/api/netstats`, { headers, signal: AbortSignal.timeout(15_000) })
  assert.equal(res.status, 200, await res.text())
  assert.ok(node.isRunning, `the node process is alive\n${node.tail()}`)
}

/** A GET from another source address than the tests' 127.0.0.1. */
async function getFrom (localAddress: string, node: NodeProcess, path: string): Promise<number> {
  return await new Promise<number>((resolve, reject) => {
    const req = request(`${node.url}${path}`, { localAddress, agent: false, timeout: 15_000 }, (res) => { res.resume(); resolve(res.statusCode ?? 0) })
    req.on('timeout', () => req.destroy(new Error(`no answer to GET ${path} within 15 s`)))
    req.on('error', reject)
    req.end()
  })
}

/** The status line and headers of the answer a raw socket received, and its JSON body. */
function parseAnswer (text: string): { status: number, headers: Map<string, string>, body: unknown } {
  const [head, body] = text.split('\r\n\r\n', 2)
  const [statusLine, ...lines] = head.split('\r\n')
  const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
  let json: unknown
  try { json = JSON.parse(body) } catch { json = undefined }
  return { status: Number(statusLine.split(' ')[1]), headers, body: json }
}

function assertJsonError (text: string, status: number): void {
  const answer = parseAnswer(text)
  assert.equal(answer.status, status, text)
  const body = answer.body as Record<string, unknown> | undefined
  assert.ok(body !== undefined && Object.keys(body).length === 1 && typeof body.error === 'string' && body.error !== '', `a {"error"} body: ${text}`)
}

/**
 * Opens a raw connection, writes `bytes`, waits for `after` in the answer when given, and resets
 * it; then the node must still serve. Returns what the node had answered.
 */
async function resetAt (node: NodeProcess, bytes: string, opts: { after?: string, headers?: Record<string, string> } = {}): Promise<string> {
  const raw = await RawSocket.open(node.port)
  await raw.write(bytes)
  if (opts.after !== undefined) await raw.until(opts.after)
  raw.reset()
  await assertServing(node, opts.headers)
  return raw.text
}

/** A raw socket whose upgrade to /api/ws got its 101 (retried while the per-IP slot is still held by a socket the node is closing). */
async function openedWebSocket (node: NodeProcess, query = ''): Promise<RawSocket> {
  return await waitFor(async () => {
    const raw = await RawSocket.open(node.port)
    await raw.write(upgradeHead(`/api/ws${query}`))
    const text = await raw.until('\r\n\r\n')
    if (text.startsWith('HTTP/1.1 101')) return raw
    raw.reset()
    return undefined
  }, 15_000, { message: 'an upgrade answered 101' })
}

/** The node has seen the reset socket close: with one connection allowed per IP, a new one opens (and is dropped gracefully). */
async function slotFreed (node: NodeProcess): Promise<void> {
  const probe = await openedWebSocket(node)
  await probe.until('"event":"hello"')
  probe.socket.end()
}

describe('hostile sockets: a reset at any stage never takes the node down', { timeout: 180_000 }, () => {
  let pub: NodeProcess
  let priv: NodeProcess
  let p2pPort = 0
  const withToken = { authorization: `Bearer ${TOKEN}` }

  before(async () => {
    // one real-time connection per IP: a new one opens only once the node has let go of the last
    pub = await startNode({ env: { SVC_WS_MAX_CONNECTIONS_PER_IP: '1', SVC_SSE_KEEPALIVE_MS: '100', SVC_WS_MESSAGES_PER_SECOND: '0' } })
    priv = await startNode({ env: { SVC_API_TOKEN: TOKEN, SVC_API_PRIVATE: 'true' }, token: TOKEN })
    const listening = pub.logs.find((l) => l.msg === 'p2p listening')
    p2pPort = Number(/\/tcp\/(\d+)/.exec((listening?.addrs as string[] | undefined)?.[0] ?? '')?.[1])
  })

  after(async () => { await stopAllNodes() })

  test('HTTP: reset mid head, after a full head, while the answer is written, mid body, between pipelined requests', async () => {
    const tx = JSON.stringify(transfer(newAccount(), newAccount().pub, 1))
    await resetAt(pub, 'GET /api/netstats HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Half: ')
    await resetAt(pub, 'GET /api/netstats HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    // the OpenAPI document is large: the node is still writing it when the reset comes
    await resetAt(pub, 'GET /swagger/openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', { after: 'HTTP/1.1 200' })
    await resetAt(pub, 'POST /api/tx HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{"id":"')
    await resetAt(pub, `POST /api/tx HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(tx)}\r\n\r\n${tx}`)
    await resetAt(pub, 'GET /api/netstats HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /swagger/openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', { after: 'HTTP/1.1 200' })
  })

  test('HTTP the parser refuses: a JSON 400 or 431 and the connection dropped; a reset right after the garbage', async () => {
    const garbage = await RawSocket.open(pub.port)
    await garbage.write('NOT HTTP AT ALL\r\n\r\n')
    await garbage.whenClosed()
    assertJsonError(garbage.text, 400)

    const hugeHead = await RawSocket.open(pub.port)
    await hugeHead.write(`GET /api/netstats HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
    await hugeHead.whenClosed()
    assertJsonError(hugeHead.text, 431)

    const resetAfterGarbage = await RawSocket.open(pub.port)
    await resetAfterGarbage.write('\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03')
    resetAfterGarbage.reset()
    await assertServing(pub)
  })

  test('upgrade refusals: a reset after the head and after the refusal, on a private node without token and on a non-WebSocket path', async () => {
    // the packet of the issue: the refusal is written into a socket the client already reset
    await resetAt(priv, upgradeHead('/api/ws'), { headers: withToken })
    assertJsonError(await resetAt(priv, upgradeHead('/api/ws'), { after: '}', headers: withToken }), 401)

    // a plain client: reads the 401 and closes
    const polite = await RawSocket.open(priv.port)
    await polite.write(upgradeHead('/api/ws'))
    await polite.until('}')
    polite.socket.end()
    await polite.whenClosed()
    await assertServing(priv, withToken)

    await resetAt(priv, upgradeHead(`/api/ws?token=${TOKEN}`), { headers: withToken })
    await resetAt(priv, 'GET /api/netstats HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', { after: 'HTTP/1.1 401', headers: withToken })
    await resetAt(pub, upgradeHead('/api/netstats'))
    assertJsonError(await resetAt(pub, upgradeHead('/nowhere'), { after: '}' }), 404)
  })

  test('WebSocket: a reset after the 101, mid frame, with answers and block frames on their way', async () => {
    const afterHello = await openedWebSocket(pub)
    await afterHello.until('"event":"hello"')
    afterHello.reset()
    await slotFreed(pub)
    await assertServing(pub)

    const midFrame = await openedWebSocket(pub)
    const frame = clientTextFrame(JSON.stringify({ op: 'subscribe', topic: 'blocks', pad: 'x'.repeat(500) }))
    await midFrame.write(frame.subarray(0, 200))
    midFrame.reset()
    await slotFreed(pub)

    // subscribed to blocks: the node writes a block frame into the reset socket at the next block
    const subscribed = await openedWebSocket(pub)
    await subscribed.write(clientTextFrame(JSON.stringify({ op: 'subscribe', topic: 'blocks', req: 's' })))
    await subscribed.until('"event":"block"')
    subscribed.reset()
    await slotFreed(pub)

    // the submit_ack is written after the transaction is checked, into a socket already reset
    const submitting = await openedWebSocket(pub)
    await submitting.write(clientTextFrame(JSON.stringify({ op: 'submit_tx', req: 't', tx: transfer(newAccount(), newAccount().pub, 1) })))
    submitting.reset()
    await slotFreed(pub)
    await assertServing(pub)
  })

  test('SSE: a reset on an open stream the node keeps writing to, and right after the request', async () => {
    const stream = await waitFor(async () => {
      const raw = await RawSocket.open(pub.port)
      await raw.write('GET /api/events?topics=blocks HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
      const text = await raw.until('\r\n\r\n')
      if (text.startsWith('HTTP/1.1 200')) return raw
      raw.reset()
      return undefined
    }, 15_000, { message: 'an SSE stream opened' })
    await stream.until(': keep-alive')
    stream.reset()
    await slotFreed(pub)

    const early = await RawSocket.open(pub.port)
    await early.write('GET /api/events?topics=blocks,txs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    early.reset()
    await slotFreed(pub)
    await assertServing(pub)
  })

  test('the p2p port: a reset mid handshake and right after connecting', async () => {
    const port = p2pPort
    assert.ok(port > 0, 'the p2p port is in the "p2p listening" log line')
    const handshake = await RawSocket.open(port)
    await handshake.write('\x13/multistream/1.0.0\n')
    handshake.reset()
    const bare = await RawSocket.open(port)
    bare.reset()
    const garbage = await RawSocket.open(port)
    await garbage.write(Buffer.alloc(4096, 0xff))
    garbage.reset()
    await assertServing(pub)
  })

  test('a flood of connections past the descriptor limit: the excess is dropped, the node serves again once it ends', async () => {
    const held = readdirSync(`/proc/${pub.pid}/fd`).length
    const [soft, hard] = (await run('prlimit', ['--pid', String(pub.pid), '--nofile', '--output=SOFT,HARD', '--noheadings'])).stdout.trim().split(/\s+/)
    await run('prlimit', ['--pid', String(pub.pid), `--nofile=${held + 16}:${hard}`])
    const flood: RawSocket[] = []
    try {
      for (let i = 0; i < 64; i++) flood.push(await RawSocket.open(pub.port))
      // past the limit the node's accepts fail (EMFILE); libuv accepts and closes the excess
      await waitFor(() => flood.some((raw) => raw.closed), 15_000, { message: 'a connection over the descriptor limit dropped' })
      assert.ok(pub.isRunning, pub.tail())
    } finally {
      for (const raw of flood) raw.reset()
      await run('prlimit', ['--pid', String(pub.pid), `--nofile=${soft}:${hard}`])
    }
    await waitFor(async () => (await fetch(`${pub.url}/api/netstats`, { signal: AbortSignal.timeout(5000) })).status === 200, 15_000, { message: 'serving again' })
    await assertServing(pub)
  })

  test('a client\'s reset is not the node\'s error: nothing on stderr, nothing logged at error level', () => {
    for (const node of [pub, priv]) {
      assert.ok(node.isRunning)
      assert.deepEqual(node.rawOutput, [], 'stderr and unstructured output')
      assert.deepEqual(node.logs.filter((l) => (l.level ?? 0) >= 50), [], 'error-level log lines')
    }
  })
})

describe('hostile sockets: the media sidecar', { timeout: 60_000 }, () => {
  let sidecar: SidecarProcess
  let port: number

  before(async () => {
    sidecar = await startSidecar()
    port = Number(new URL(sidecar.url).port)
  })

  after(() => { sidecar.child.kill('SIGKILL') })

  test('a reset mid head, mid body and before the answer leaves it serving', async () => {
    const head = await RawSocket.open(port)
    await head.write('POST /v1/scrub HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty')
    head.reset()
    const body = await RawSocket.open(port)
    await body.write('POST /v1/scrub HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: video/mp4\r\nContent-Length: 100000\r\n\r\n' + 'x'.repeat(1000))
    body.reset()
    const answer = await RawSocket.open(port)
    await answer.write('POST /v1/scrub HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: video/mp4\r\nContent-Length: 1000\r\n\r\n' + 'x'.repeat(1000))
    answer.reset()
    const health = await http(sidecar.url, 'GET', '/v1/health')
    assert.equal(health.status, 200)
    assert.equal(sidecar.child.exitCode, null, sidecar.output.join(''))
  })
})

describe('one per-IP bucket for HTTP, SSE, WebSocket upgrades and WebSocket messages', { timeout: 120_000 }, () => {
  let node: NodeProcess
  const alice = newAccount()
  const bob = newAccount()

  before(async () => {
    node = await startNode({ alloc: [{ pub: alice.pub, amountUt: 100_000_000 }], env: { SVC_RATE_LIMIT_RPS: String(RPS) } })
  })

  after(async () => { await stopAllNodes() })

  /** Waits until this address' bucket is full again (RateLimit-Remaining says how full; the probe takes one). */
  async function fullBucket (): Promise<void> {
    await waitFor(async () => {
      const res = await http(node.url, 'GET', '/api/netstats')
      return Number(res.headers.get('ratelimit-remaining')) >= 2 * RPS - 1
    }, 15_000, { intervalMs: 500, message: 'a full bucket' })
  }

  test('8 WebSockets × 40 submit_tx from one IP: limited by the bucket that limits HTTP; another IP is served', async () => {
    await fullBucket()
    const started = Date.now()
    const sockets = await Promise.all(Array.from({ length: 8 }, async () => await WsClient.open(node.url)))
    const acks = await Promise.all(sockets.map(async (ws, s) => {
      const txs = Array.from({ length: 40 }, () => transfer(alice, bob.pub, 1))
      txs.forEach((tx, i) => ws.send({ op: 'submit_tx', req: `s${s}-${i}`, tx }))
      // refusals are answered at once, accepted ones after the checks: acks come in any order
      const answers = await waitFor(() => {
        const got = ws.received.filter((m) => m.event === 'submit_ack')
        return got.length >= txs.length && got
      }, 30_000, { message: `40 submit_acks on socket ${s}` })
      for (const ack of answers) assert.equal(ack.id, txs[Number(String(ack.req).split('-')[1])].id, 'the answer names the transaction')
      return answers
    }))
    const http429: Array<Awaited<ReturnType<typeof http>>> = []
    let httpServed = 0
    for (const res of await Promise.all(Array.from({ length: 20 }, async () => await http(node.url, 'GET', '/api/netstats')))) {
      if (res.status === 429) http429.push(res)
      else if (res.status === 200) httpServed++
    }
    const elapsedS = (Date.now() - started) / 1000
    for (const ws of sockets) ws.close()

    const all = acks.flat()
    const refused = all.filter((a) => a.code === 429)
    const processed = all.length - refused.length
    for (const a of refused) {
      assert.equal(a.status, 'rejected')
      assert.match(a.error as string, /too many requests from this address/)
    }
    // what one bucket of RPS a second, bursts of 2 × RPS, allows from this address over the whole test
    const allowed = 2 * RPS + RPS * elapsedS + 1
    const admitted = sockets.length + processed + httpServed
    assert.ok(admitted <= allowed, `upgrades, submit_tx and HTTP requests admitted together: ${admitted} (${processed} submit_tx, ${httpServed} HTTP) ≤ ${allowed.toFixed(1)} in ${elapsedS.toFixed(1)} s`)
    assert.ok(refused.length >= all.length - allowed, `${refused.length} of ${all.length} submit_tx refused by the per-IP bucket`)
    assert.ok(http429.length > 0, 'HTTP from the same address is refused too')
    assert.ok(Number(http429[0].headers.get('retry-after')) >= 1, 'with Retry-After')
    assert.match(errorMessage(http429[0]), /too many requests/)
    assert.equal(await getFrom(BYSTANDER, node, '/api/netstats'), 200, 'another address is served meanwhile')
  })

  test('a refused upgrade and a refused SSE open get 429 with Retry-After; a reset on either refusal leaves the node up', async () => {
    /** Drains the bucket, then sends `head` on a raw socket: the answer once it is a refusal. */
    const refusedAfterDrain = async (head: string): Promise<RawSocket> => await waitFor(async () => {
      await Promise.all(Array.from({ length: 3 * RPS }, async () => await http(node.url, 'GET', '/api/netstats')))
      const raw = await RawSocket.open(node.port)
      await raw.write(head)
      const text = await raw.until('\r\n\r\n')
      if (text.startsWith('HTTP/1.1 429')) return raw
      raw.reset()
      return undefined
    }, 20_000, { message: 'a 429 refusal' })

    const upgrade = await refusedAfterDrain(upgradeHead('/api/ws'))
    const upgradeAnswer = parseAnswer(await upgrade.until('}'))
    assert.ok(Number(upgradeAnswer.headers.get('retry-after')) >= 1, upgrade.text)
    assertJsonError(upgrade.text, 429)
    upgrade.reset()

    const sse = await refusedAfterDrain('GET /api/events?topics=blocks HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    const sseAnswer = parseAnswer(await sse.until('}'))
    assert.ok(Number(sseAnswer.headers.get('retry-after')) >= 1, sse.text)
    assertJsonError(sse.text, 429)
    sse.reset()

    assert.equal(await getFrom(BYSTANDER, node, '/api/netstats'), 200)
    assert.ok(node.isRunning, node.tail())
  })
})
