/**
 * An edge thread's way to the core: a request the edge does not answer itself is forwarded, as
 * it streams in, to the core's private listener on loopback, and the answer streams back; a
 * WebSocket upgrade becomes a spliced pair of sockets. Every forwarded request carries the
 * per-start secret and the client's address, set here over whatever the client sent.
 */
import { Agent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import { connect, type Socket } from 'node:net'
import type { Duplex, Readable, Writable } from 'node:stream'
import type { Logger } from 'pino'
import { ERROR_CODE_HEADER } from '../errors.js'
import { EDGE_CLIENT_IP_HEADER, EDGE_SECRET_HEADER } from './protocol.js'

/** Headers of one hop (RFC 9110 § 7.6.1), which a proxy does not pass on, and the ones only the edge may set. */
const NOT_FORWARDED = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect',
  EDGE_SECRET_HEADER, EDGE_CLIENT_IP_HEADER
])

/** The core trusts X-Forwarded-* only as Koa's proxy mode reads them; the edge passes none of a client's on. */
function forwardable (name: string): boolean {
  return !NOT_FORWARDED.has(name) && !name.startsWith('x-forwarded-')
}

export interface CoreLink {
  /** forwards `req` and streams the core's answer into `res` */
  forward (req: IncomingMessage, res: ServerResponse): void
  /** splices an upgrade request's socket to a fresh connection to the core */
  forwardUpgrade (req: IncomingMessage, socket: Duplex, head: Buffer): void
  close (): void
}

/**
 * Copies a long-lived stream from the core to a client without holding the core back: the core's
 * side is read as fast as it comes, so its own bound on a client's queue never sees the edge's
 * buffers, and a client that reads slower than the stream comes is cut here once `maxQueuedBytes`
 * wait for it (the core's bound, SVC_WS_MAX_QUEUED_BYTES). With backpressure instead, a stalled
 * client would hold the edge's and the core's socket buffers too before the core noticed.
 */
function relayStream (from: Readable, to: Writable, maxQueuedBytes: number, onCut: (queuedBytes: number) => void): void {
  from.on('data', (chunk: Buffer) => {
    if (to.writableLength + chunk.length > maxQueuedBytes) {
      onCut(to.writableLength)
      to.destroy()
      from.destroy()
      return
    }
    to.write(chunk)
  })
  from.on('end', () => to.end())
}

export function coreLink (corePort: number, secret: string, maxQueuedBytes: number, log: Logger): CoreLink {
  const slowConsumer = (queuedBytes: number): void => log.info({ queuedBytes }, 'closed a slow consumer')
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 256 })
  const upgraded = new Set<Socket>()
  const headersFor = (req: IncomingMessage): IncomingHttpHeaders => {
    const headers: IncomingHttpHeaders = {}
    for (const [name, value] of Object.entries(req.headers)) if (forwardable(name)) headers[name] = value
    // a body sent in chunks goes on in chunks: node frames a GET's or HEAD's body only when told to
    if (req.headers['transfer-encoding'] !== undefined) headers['transfer-encoding'] = 'chunked'
    headers[EDGE_SECRET_HEADER] = secret
    headers[EDGE_CLIENT_IP_HEADER] = req.socket.remoteAddress ?? ''
    return headers
  }

  return {
    forward (req, res) {
      const upstream = httpRequest({ host: '127.0.0.1', port: corePort, method: req.method, path: req.url, headers: headersFor(req), agent }, (answer) => {
        // as the core wrote them (names' case, repeats), one hop's headers left out
        const headers: string[] = []
        const raw = answer.rawHeaders
        for (let i = 0; i < raw.length; i += 2) if (forwardable(raw[i].toLowerCase())) headers.push(raw[i], raw[i + 1])
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, headers)
        // an event stream's head goes out at once, before its first event, and the stream is bounded as the core bounds it
        if (/^text\/event-stream/i.test(answer.headers['content-type'] ?? '')) {
          res.flushHeaders()
          relayStream(answer, res, maxQueuedBytes, slowConsumer)
        } else {
          answer.pipe(res)
        }
        answer.on('error', () => res.destroy())
        // the core closing a connection mid-answer (its shutdown cut) leaves the client's incomplete too
        answer.on('close', () => { if (!answer.complete) res.destroy() })
      })
      upstream.on('error', (err: NodeJS.ErrnoException) => {
        if (res.headersSent) { res.destroy(); return }
        log.warn({ code: err.code }, 'forwarding a request to the core failed')
        const body = JSON.stringify({ error: 'the node is not serving requests right now; retry shortly' })
        res.writeHead(503, {
          'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), [ERROR_CODE_HEADER]: 'UNAVAILABLE', 'Retry-After': '1', Connection: 'close'
        })
        res.end(body)
      })
      // a client that goes away takes its forwarded request with it, answered or not
      res.on('close', () => { if (!res.writableFinished) upstream.destroy() })
      req.on('close', () => { if (!req.complete) upstream.destroy() })
      // the head goes out now: a route answers without waiting for a body that may never come (a GET declaring one)
      upstream.flushHeaders()
      req.pipe(upstream)
    },

    forwardUpgrade (req, socket, head) {
      socket.on('error', () => socket.destroy())
      const core = connect(corePort, '127.0.0.1')
      upgraded.add(core)
      // a clean close has passed its last bytes on (relayStream ends the client's side); a failed one cuts the client too
      core.on('close', (hadError) => { upgraded.delete(core); if (hadError) socket.destroy() })
      core.on('error', (err: NodeJS.ErrnoException) => { log.debug({ code: err.code }, 'upgrade to the core failed'); core.destroy() })
      socket.on('close', () => core.destroy())
      const lines = [`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/1.1`]
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i]
        const lower = name.toLowerCase()
        // an upgrade keeps its Connection and Upgrade (the core's WebSocket handshake needs them), and
        // its Transfer-Encoding: the bytes after the head go on as the client framed them
        if (lower === 'connection' || lower === 'upgrade' || lower === 'transfer-encoding' || forwardable(lower)) lines.push(`${name}: ${req.rawHeaders[i + 1]}`)
      }
      lines.push(`${EDGE_SECRET_HEADER}: ${secret}`, `${EDGE_CLIENT_IP_HEADER}: ${req.socket.remoteAddress ?? ''}`)
      core.write(lines.join('\r\n') + '\r\n\r\n')
      if (head.length > 0) core.write(head)
      relayStream(core, socket, maxQueuedBytes, slowConsumer)
      socket.pipe(core)
    },

    close () {
      for (const socket of upgraded) socket.destroy()
      agent.destroy()
    }
  }
}
