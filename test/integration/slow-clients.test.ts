/**
 * Slow clients (slowloris): many connections trickling a request head never finish it, yet the
 * node keeps serving others, and closes them once the head timeout passes. Slow bodies and idle
 * keep-alive connections are closed by their timeouts too; WebSockets and event streams are not.
 * Timeouts are short here; the bounds asserted are generous multiples of them.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { http, startNode, stopAllNodes, waitFor, type NodeProcess } from '../helpers/node-process.js'
import { SseReader, WsClient } from '../helpers/realtime-client.js'

const HEADERS_TIMEOUT_MS = 4000
const REQUEST_TIMEOUT_MS = 6000
const KEEP_ALIVE_TIMEOUT_MS = 2000
const SLOW_CONNECTIONS = 200
const TRICKLE_EVERY_MS = 300
/** far beyond timeout + checking interval, so a loaded machine does not fail the test */
const CLOSE_BOUND_MS = 30_000

interface SlowConnection {
  socket: Socket
  received: string
  closed: boolean
}

/** Opens a connection that sends `head` and then one more `line` every TRICKLE_EVERY_MS, forever. */
async function trickle (node: NodeProcess, head: string, line: (n: number) => string): Promise<SlowConnection> {
  const socket = connect(node.port, '127.0.0.1')
  const conn: SlowConnection = { socket, received: '', closed: false }
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => { conn.received += chunk })
  socket.on('error', () => {})
  await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject) })
  socket.write(head)
  // started after the head: on a loaded machine the connect can take longer than one interval,
  // and a line queued before the head makes a request the parser refuses (400), not a slow one
  let n = 0
  const timer = setInterval(() => { if (!socket.destroyed) socket.write(line(n++)) }, TRICKLE_EVERY_MS)
  socket.on('close', () => { conn.closed = true; clearInterval(timer) })
  return conn
}

/** node answers an expired request 408 before closing, unless the socket was already unwritable */
function assertTimedOut (conn: SlowConnection, what: string): void {
  assert.ok(conn.closed, `${what} was closed`)
  assert.ok(conn.received === '' || conn.received.startsWith('HTTP/1.1 408'), `${what}: nothing but a 408 was answered, got ${JSON.stringify(conn.received.slice(0, 80))}`)
}

describe('slow clients: header, request and keep-alive timeouts', () => {
  let node: NodeProcess
  const opened: Socket[] = []

  before(async () => {
    node = await startNode({
      env: {
        SVC_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        SVC_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        SVC_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
        SVC_SSE_KEEPALIVE_MS: '500',
        SVC_WS_IDLE_MS: '600000'
      }
    })
  })

  after(async () => {
    for (const socket of opened) socket.destroy()
    await stopAllNodes()
  })

  test('GET /api/limits publishes the timeouts', async () => {
    const res = await http(node.url, 'GET', '/api/limits')
    const limits = (res.json as { http: Record<string, number> }).http
    assert.equal(limits.headers_timeout_s, HEADERS_TIMEOUT_MS / 1000)
    assert.equal(limits.request_timeout_s, REQUEST_TIMEOUT_MS / 1000)
    assert.equal(limits.keep_alive_timeout_s, KEEP_ALIVE_TIMEOUT_MS / 1000)
  })

  test(`${SLOW_CONNECTIONS} half-sent request heads do not stop the node serving others, and are closed after the head timeout`, async () => {
    // long-lived streams opened before the attack must outlive every timeout
    const sse = await SseReader.open(`${node.url}/api/events`)
    assert.equal(sse.status, 200)
    const ws = await WsClient.open(node.url)

    const slow = await Promise.all(Array.from({ length: SLOW_CONNECTIONS }, async () =>
      await trickle(node, 'GET /api/netstats HTTP/1.1\r\nHost: 127.0.0.1\r\n', (n) => `X-Slow-${n}: 1\r\n`)))
    opened.push(...slow.map((c) => c.socket))

    const served = await http(node.url, 'GET', '/api/netstats')
    assert.equal(served.status, 200, 'a normal client is served while the slow ones hang')
    assert.ok(slow.some((c) => !c.closed), 'the slow connections were still open when the normal request was answered')

    await waitFor(() => slow.every((c) => c.closed), CLOSE_BOUND_MS, { intervalMs: 200, message: 'every slow connection closed' })
    slow.forEach((c, i) => assertTimedOut(c, `slow connection ${i}`))
    assert.equal((await http(node.url, 'GET', '/api/netstats')).status, 200, 'still serving afterwards')

    // the event stream still delivers keep-alive comments, the WebSocket still answers
    const comments = sse.comments.length
    await waitFor(() => sse.comments.length > comments, CLOSE_BOUND_MS, { message: 'an SSE keep-alive after the timeouts' })
    ws.send({ op: 'ping', req: 'after-timeouts' })
    await ws.next((m) => m.event === 'pong')
    assert.equal(ws.closed, undefined, 'the WebSocket is open')
    sse.close()
    ws.ws.close()
  })

  test('a body sent too slowly is cut after the request timeout', async () => {
    const slowBody = await trickle(node, 'POST /api/tx HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{', () => ' ')
    opened.push(slowBody.socket)
    assert.equal((await http(node.url, 'GET', '/api/netstats')).status, 200, 'a normal client is served meanwhile')
    await waitFor(() => slowBody.closed, CLOSE_BOUND_MS, { intervalMs: 200, message: 'the slow body connection closed' })
    assertTimedOut(slowBody, 'the slow body')
  })

  test('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
    const socket = connect(node.port, '127.0.0.1')
    opened.push(socket)
    let received = ''
    let closed = false
    socket.setEncoding('utf8').on('data', (chunk: string) => { received += chunk })
    socket.on('close', () => { closed = true })
    socket.on('error', () => {})
    await new Promise<void>((resolve) => socket.once('connect', resolve))
    socket.write('GET /api/netstats HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n')
    await waitFor(() => received.startsWith('HTTP/1.1 200'), 10_000, { message: 'the answer' })
    assert.match(received, new RegExp(`Keep-Alive: timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`, 'i'), 'the client is told the idle timeout')
    await waitFor(() => closed, CLOSE_BOUND_MS, { intervalMs: 200, message: 'the idle connection closed' })
  })
})
