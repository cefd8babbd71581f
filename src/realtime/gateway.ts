/**
 * The real-time gateway's I/O: WebSockets at /api/ws on the API's HTTP server (upgrade checks:
 * token, caps; heartbeats; shutdown with 1001) and the SSE streams of /api/events. It turns the
 * node's and the mailbox's events into frames and publishes them through the hub.
 */
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import type { Logger } from 'pino'
import { WebSocketServer, type WebSocket } from 'ws'
import type { Transaction } from '../chain/index.js'
import { KithError } from '../errors/index.js'
import type { InboxEvent } from '../relay/index.js'
import type { BlockSummary } from '../storage/index.js'
import { Connection, addressRateLimited, type AddressLimiter, type ConnectionContext, type MailboxSource } from './connection.js'
import { blockFrame, inboxFrame, txFrame, txKeys } from './events.js'
import { Hub, TopicKeys, type Frame } from './hub.js'
import type { RealtimeLimits } from './options.js'
import { CLOSE_CODES } from './schemas.js'
import { SSE_HEADERS, SseStream, parseLastEventId, sseTopicKeys } from './sse.js'

export const WS_PATH = '/api/ws'
/** How long closing sockets get to finish their close handshake before they are cut. */
const CLOSE_GRACE_MS = 1000

/** An emitter of one kind of event (a typed EventEmitter fits). */
export interface EventSource<E extends string, A extends unknown[]> {
  on (event: E, listener: (...args: A) => void): unknown
  off (event: E, listener: (...args: A) => void): unknown
}

/** The node as the gateway sees it. */
export interface ChainSource {
  events: EventSource<'block', [BlockSummary, Transaction[]]> & EventSource<'tx', [Transaction]>
  height (): number
  blockSummary (height: number): BlockSummary | undefined
}

export interface RealtimeOptions {
  chain: ChainSource
  mailbox?: MailboxSource & { events: EventSource<'inbox', [InboxEvent]> }
  submit: ConnectionContext['submit']
  describeError: ConnectionContext['describeError']
  limiter: ConnectionContext['limiter']
  /** the API's per-IP bucket: an upgrade takes a token as an HTTP request does, and so does every client message */
  addressLimiter?: AddressLimiter
  /** SVC_API_TOKEN and SVC_API_PRIVATE, decided by the API's access check (one place for HTTP and WebSocket) */
  access: {
    private: boolean
    writesNeedToken: boolean
    /** whether `given` is the node's token (true when the node has none) */
    tokenMatches: (given: string | undefined) => boolean
  }
  limits: RealtimeLimits
  /**
   * The client's address for the per-IP caps: the socket's peer by default; behind the node's
   * HTTP edge threads, the address the edge forwarded (src/api/edge). `undefined` refuses the
   * request with 403: it did not come through the edge.
   */
  clientIp?: (req: IncomingMessage) => string | undefined
  protocolVersion: number
  nodeVersion: string
  logger: Logger
  now?: () => number
}

interface Socket {
  connection: Connection
  ip: string
  /** answered the last protocol ping */
  alive: boolean
}

export class RealtimeGateway {
  readonly hub: Hub
  private readonly ctx: ConnectionContext
  private readonly wss: WebSocketServer
  private readonly sockets = new Map<WebSocket, Socket>()
  private readonly streams = new Set<SseStream>()
  private readonly perIp = new Map<string, number>()
  private readonly log: Logger
  private readonly timers: NodeJS.Timeout[] = []
  private readonly detach: Array<() => void> = []
  private nextId = 0
  private closing = false

  constructor (private readonly opts: RealtimeOptions) {
    this.log = opts.logger.child({ module: 'realtime' })
    this.hub = new Hub({ onFanOut: (subscribers, ms) => this.log.debug({ subscribers, ms: Math.round(ms * 10) / 10 }, 'fan-out done') })
    const now = opts.now ?? Date.now
    this.ctx = {
      hub: this.hub,
      limits: opts.limits,
      submit: opts.submit,
      describeError: opts.describeError,
      limiter: opts.limiter,
      addressLimiter: opts.addressLimiter,
      mailbox: opts.mailbox,
      writesNeedToken: opts.access.writesNeedToken,
      protocolVersion: opts.protocolVersion,
      nodeVersion: opts.nodeVersion,
      now
    }
    // no compression: a deflate context costs ~300 KiB per socket, and events are small
    this.wss = new WebSocketServer({ noServer: true, maxPayload: opts.limits.maxMessageBytes, perMessageDeflate: false, clientTracking: false })
    // a malformed handshake (wrong Upgrade, key or version) is refused with the usual JSON error, not ws's text/html
    this.wss.on('wsClientError', (err: Error, socket: Duplex) => { refuseUpgrade(socket, err.message === 'Invalid HTTP method' ? 405 : 400, `WebSocket handshake refused: ${err.message}`) })
    this.listen(opts.chain.events, 'block', (summary: BlockSummary, txs: Transaction[]) => {
      this.hub.publish([TopicKeys.blocks], () => blockFrame(summary, now()))
      for (const tx of txs) this.hub.publish(txKeys(tx), () => txFrame(tx, summary.height))
    })
    this.listen(opts.chain.events, 'tx', (tx: Transaction) => { this.hub.publish(txKeys(tx), () => txFrame(tx)) })
    if (opts.mailbox !== undefined) {
      this.listen(opts.mailbox.events, 'inbox', (item: InboxEvent) => { this.hub.publish([TopicKeys.mailbox(item.recipient_pub)], () => inboxFrame(item)) })
    }
    if (opts.limits.heartbeatMs > 0) this.every(opts.limits.heartbeatMs, () => this.heartbeat())
    if (opts.limits.sseKeepAliveMs > 0) this.every(opts.limits.sseKeepAliveMs, () => { for (const s of this.streams) s.keepAlive() })
  }

  /** Open WebSockets and SSE streams. */
  get connections (): { websockets: number, sse: number } {
    return { websockets: this.sockets.size, sse: this.streams.size }
  }

  /** Takes the WebSocket upgrades of `server` (which Koa serves). */
  private clientIp (req: IncomingMessage): string | undefined {
    return this.opts.clientIp !== undefined ? this.opts.clientIp(req) : req.socket.remoteAddress ?? ''
  }

  attach (server: Server): void {
    const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => this.upgrade(req, socket, head)
    server.on('upgrade', onUpgrade)
    this.detach.push(() => server.off('upgrade', onUpgrade))
  }

  /**
   * GET /api/events: checks the query, then streams. Throws KithError before anything is written,
   * so the API maps a bad request like any other. Private-mode tokens are checked by the API.
   */
  openEventStream (req: IncomingMessage, res: ServerResponse, query: { topics?: string, last_event_id?: string }): void {
    const keys = sseTopicKeys(query.topics ?? 'blocks')
    const header = req.headers['last-event-id']
    const lastEventId = parseLastEventId(typeof header === 'string' ? header : query.last_event_id)
    if (keys.some((k) => k.startsWith('mailbox:'))) {
      if (this.opts.mailbox === undefined) throw new KithError('RELAY_UNAVAILABLE', 'this node runs no relay mailbox')
      if (this.opts.mailbox.requireReadAuth) throw new KithError('UNAUTHORIZED', 'this node requires a proven key to read a mailbox (SVC_RELAY_READ_AUTH); SSE cannot prove one: use /api/ws with auth')
    }
    // HEAD gets the stream's headers and an end: a stream opened for it would never end, and
    // the client would wait for an answer that never completes
    if (req.method === 'HEAD') {
      res.writeHead(200, SSE_HEADERS)
      res.end()
      return
    }
    const ip = this.clientIp(req)
    if (ip === undefined) throw new KithError('UNAUTHORIZED', 'this listener serves the node\'s HTTP edge threads only')
    this.admit(ip)
    const stream = new SseStream(res, this.opts.limits.maxQueuedBytes, () => {
      for (const key of keys) this.hub.remove(key, stream)
      this.streams.delete(stream)
      this.release(ip)
    })
    this.streams.add(stream)
    stream.start()
    // live first, then the missed blocks: the stream skips a height it already sent
    for (const key of keys) this.hub.add(key, stream)
    if (lastEventId !== undefined && keys.includes(TopicKeys.blocks)) this.replayBlocks(stream, lastEventId)
  }

  private replayBlocks (stream: SseStream, after: number): void {
    const head = this.opts.chain.height()
    const from = Math.max(after + 1, head - this.opts.limits.sseBlockReplay + 1)
    for (let height = from; height <= head && !stream.isEnded; height++) {
      const summary = this.opts.chain.blockSummary(height)
      if (summary !== undefined) stream.deliver(blockFrame(summary))
    }
  }

  /** Closes every socket with 1001 and every stream, stops taking upgrades; resolves once all are gone (or cut). */
  async stop (): Promise<void> {
    this.closing = true
    for (const timer of this.timers) clearInterval(timer)
    for (const undo of this.detach) undo()
    for (const stream of [...this.streams]) stream.end()
    const sockets = [...this.sockets.keys()]
    const closed = sockets.map((ws) => new Promise<void>((resolve) => {
      if (ws.readyState === 3) { resolve(); return }
      ws.once('close', () => resolve())
    }))
    for (const ws of sockets) this.sockets.get(ws)?.connection.close(CLOSE_CODES.GOING_AWAY, 'node shutting down')
    await Promise.all(closed)
    await new Promise<void>((resolve) => this.wss.close(() => resolve()))
  }

  /**
   * An upgrade request, checked in the order of the HTTP middleware (private-mode token, per-IP
   * bucket, then the path), then against the connection caps.
   */
  private upgrade (req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // The HTTP server took its error listener off this socket when it handed the upgrade over:
    // a reset (ECONNRESET, EPIPE) from here on, a refusal's write included, is ours to absorb.
    socket.on('error', (err: NodeJS.ErrnoException) => this.log.debug({ code: err.code, path: req.url }, 'upgrade socket error'))
    const url = new URL(req.url ?? '/', 'http://localhost')
    const given = url.searchParams.get('token') ?? /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1]
    const tokenAccepted = this.opts.access.tokenMatches(given)
    if (this.opts.access.private && !tokenAccepted) { refuseUpgrade(socket, 401, 'this node requires the token: open the WebSocket with ?token=<token>'); return }
    const ip = this.clientIp(req)
    if (ip === undefined) { refuseUpgrade(socket, 403, 'this listener serves the node\'s HTTP edge threads only'); return }
    const rate = this.opts.addressLimiter?.admit(ip)
    if (rate !== undefined && !rate.allowed) {
      refuseUpgrade(socket, 429, addressRateLimited(rate.retryAfterSeconds).message, { 'Retry-After': String(rate.retryAfterSeconds) })
      return
    }
    if (url.pathname !== WS_PATH) { refuseUpgrade(socket, 404, `no WebSocket endpoint at ${url.pathname}; it is ${WS_PATH}`); return }
    if (this.closing) { refuseUpgrade(socket, 503, 'the node is shutting down'); return }
    try {
      this.admit(ip)
    } catch (err) {
      refuseUpgrade(socket, err instanceof KithError && err.code === 'RATE_LIMITED' ? 429 : 503, (err as Error).message, { 'Retry-After': '1' })
      return
    }
    // the slot is held from here; the socket's end gives it back, whether or not the upgrade completes
    socket.once('close', () => this.release(ip))
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, ip, tokenAccepted))
  }

  /** Counts a new connection against the caps, or throws. */
  private admit (ip: string): void {
    const { maxConnections, maxConnectionsPerIp } = this.opts.limits
    if (maxConnections > 0 && this.sockets.size + this.streams.size >= maxConnections) {
      throw new KithError('UNAVAILABLE', `the node serves at most ${maxConnections} real-time connections; retry later`)
    }
    const fromIp = this.perIp.get(ip) ?? 0
    if (maxConnectionsPerIp > 0 && fromIp >= maxConnectionsPerIp) {
      throw new KithError('RATE_LIMITED', `at most ${maxConnectionsPerIp} real-time connections per client address`)
    }
    this.perIp.set(ip, fromIp + 1)
  }

  private release (ip: string): void {
    const left = (this.perIp.get(ip) ?? 1) - 1
    if (left <= 0) this.perIp.delete(ip)
    else this.perIp.set(ip, left)
  }

  private accept (ws: WebSocket, ip: string, tokenAccepted: boolean): void {
    const id = `ws${++this.nextId}`
    const connection = new Connection(this.ctx, {
      send: (frame) => sendFrame(ws, frame),
      get bufferedAmount () { return ws.bufferedAmount },
      close: (code, reason) => {
        if (code === CLOSE_CODES.SLOW_CONSUMER) this.log.info({ id, ip, queuedBytes: ws.bufferedAmount }, 'closed a slow consumer')
        closeSocket(ws, code, reason)
      }
    }, { id, tokenAccepted, ip })
    const entry: Socket = { connection, ip, alive: true }
    this.sockets.set(ws, entry)
    ws.on('message', (data, isBinary) => {
      if (isBinary) connection.onBinary()
      else connection.onMessage(Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data))
    })
    ws.on('pong', () => { entry.alive = true })
    ws.on('error', (err) => this.log.debug({ err, id }, 'websocket error'))
    ws.on('close', () => {
      connection.dispose()
      this.sockets.delete(ws)
    })
    if (this.closing) { connection.close(CLOSE_CODES.GOING_AWAY, 'node shutting down'); return }
    connection.hello()
  }

  /** Cuts sockets that did not answer the previous ping, pings the rest, closes idle ones. */
  private heartbeat (): void {
    const now = this.ctx.now()
    for (const [ws, entry] of this.sockets) {
      if (!entry.alive) { ws.terminate(); continue }
      if (entry.connection.isIdle(now)) { entry.connection.close(CLOSE_CODES.IDLE, 'idle: no subscription and no message'); continue }
      entry.alive = false
      ws.ping()
    }
  }

  private listen<E extends string, A extends unknown[]> (emitter: EventSource<E, A>, event: E, handler: (...args: A) => void): void {
    const safe = (...args: A): void => {
      try {
        handler(...args)
      } catch (err) {
        this.log.error({ err, event }, 'publishing a real-time event failed')
      }
    }
    emitter.on(event, safe)
    this.detach.push(() => emitter.off(event, safe))
  }

  private every (ms: number, fn: () => void): void {
    const timer = setInterval(fn, ms)
    timer.unref()
    this.timers.push(timer)
  }
}

/**
 * Writes the frame's ready-made bytes straight to the socket: one write per socket per event
 * instead of ws's framing and corked two-buffer write (fan-out to 10,000 sockets is this loop).
 * Safe because the server sends no compressed or Blob frames, so ws's sender never queues;
 * should it hold anything, or the socket not be open, ws's own send keeps the order.
 */
function sendFrame (ws: WebSocket, frame: Frame): void {
  if (ws.readyState === 1 && ws._sender._queue.length === 0 && ws._sender._state === 0) ws._socket.write(frame.wsFrame)
  else ws.send(frame.wsBytes, { binary: false })
}

/** Closes with a code; a peer that does not finish the close handshake (it may not be reading at all) is cut after a grace. */
function closeSocket (ws: WebSocket, code: number, reason: string): void {
  if (ws.readyState === 3) return
  ws.close(code, reason)
  setTimeout(() => { if (ws.readyState !== 3) ws.terminate() }, CLOSE_GRACE_MS).unref()
}

/**
 * Answers an upgrade request with an HTTP error and the usual `{"error"}` body, then drops the
 * socket once the answer is written: the server keeps sockets half-open, and a client that never
 * closes its side would otherwise hold this one.
 */
/** How long a refused upgrade's client gets to read the answer before its socket is cut. */
const REFUSAL_LINGER_MS = 2000

function refuseUpgrade (socket: Duplex, status: number, error: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ error })
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')
  // Reads and drops what the client still sends (a request body) until it closes, for at most
  // REFUSAL_LINGER_MS: closing with unread bytes sends a reset, which can overtake the answer.
  socket.resume()
  const cut = setTimeout(() => socket.destroy(), REFUSAL_LINGER_MS)
  cut.unref()
  socket.once('end', () => socket.destroy())
  socket.once('close', () => clearTimeout(cut))
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`)
}
