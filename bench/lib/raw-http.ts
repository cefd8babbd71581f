/**
 * A load client for HTTP/1.1 over raw sockets: one request in flight per keep-alive connection
 * (no pipelining), each request written as one buffer, each answer parsed only as far as its
 * status and its end (Content-Length).
 *
 * Why not node:http's client: on these 2-core machines it spends 35-60 µs of CPU per request,
 * more than the bare Koa app it measures, so the bare runs measured the client (~29,000 req/s)
 * and not Koa (~56,000 req/s from this client, which spends 10-13 µs). A benchmark whose
 * baseline is bound by its own load generator flatters every ratio taken against it
 * (docs/benchmarks.md, 2026-11-22).
 */
import net from 'node:net'

export interface RawAnswer {
  status: number
  body: Buffer
  /** seconds of a Retry-After header, when the answer has one */
  retryAfter?: number
}

const HEADER_END = Buffer.from('\r\n\r\n')
const REQUEST_TIMEOUT_MS = 30_000

export class RawHttpConnection {
  private socket: net.Socket | undefined
  private received: Buffer | undefined
  private waiting: { resolve: (a: RawAnswer) => void, reject: (err: Error) => void } | undefined

  /** `localAddress`: the source address to connect from (e.g. 127.0.0.x, so a server that keys on the client address sees several clients) */
  constructor (private readonly port: number, private readonly host = '127.0.0.1', private readonly localAddress?: string) {}

  /** Sends one request and resolves with its answer; a connection lost on the way rejects, and the next request reconnects. */
  request (method: string, urlPath: string, body?: Buffer): Promise<RawAnswer> {
    if (this.waiting !== undefined) return Promise.reject(new Error('a request is already in flight on this connection'))
    if (this.socket === undefined) this.connect()
    const head = body === undefined
      ? `${method} ${urlPath} HTTP/1.1\r\nHost: ${this.host}\r\n\r\n`
      : `${method} ${urlPath} HTTP/1.1\r\nHost: ${this.host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`
    const bytes = body === undefined ? Buffer.from(head, 'latin1') : Buffer.concat([Buffer.from(head, 'latin1'), body])
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject }
      this.socket?.write(bytes)
    })
  }

  /** Drops the connection; the next request opens a new one. */
  close (): void {
    this.socket?.destroy()
    this.socket = undefined
  }

  private connect (): void {
    this.received = undefined
    const socket = net.connect({ port: this.port, host: this.host, ...(this.localAddress !== undefined ? { localAddress: this.localAddress } : {}) })
    socket.setNoDelay(true)
    socket.setTimeout(REQUEST_TIMEOUT_MS, () => socket.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)))
    // events of a connection already replaced must not touch the request on the new one
    socket.on('data', (chunk: Buffer) => { if (this.socket === socket) this.onData(chunk) })
    socket.on('error', (err) => { if (this.socket === socket) this.fail(err) })
    socket.on('close', () => {
      if (this.socket !== socket) return
      this.socket = undefined
      this.fail(new Error('connection closed by the server'))
    })
    this.socket = socket
  }

  private onData (chunk: Buffer): void {
    const buf = this.received === undefined ? chunk : Buffer.concat([this.received, chunk])
    const headerEnd = buf.indexOf(HEADER_END)
    if (headerEnd < 0) { this.received = buf; return }
    const head = buf.toString('latin1', 0, headerEnd).toLowerCase()
    const length = /\r\ncontent-length: *(\d+)/.exec(head)?.[1]
    if (length === undefined) {
      this.close()
      this.fail(new Error(`answer without Content-Length (this client reads no other framing): ${head.slice(0, 200)}`))
      return
    }
    const end = headerEnd + HEADER_END.length + Number(length)
    if (buf.length < end) { this.received = buf; return }
    this.received = undefined
    // the server closes after this answer: the next request opens a new connection
    if (head.includes('\r\nconnection: close')) this.close()
    const waiting = this.waiting
    this.waiting = undefined
    const retryAfter = /\r\nretry-after: *(\d+)/.exec(head)?.[1]
    waiting?.resolve({
      status: Number(head.slice(9, 12)),
      body: buf.subarray(headerEnd + HEADER_END.length, end),
      ...(retryAfter !== undefined ? { retryAfter: Number(retryAfter) } : {})
    })
  }

  private fail (err: Error): void {
    const waiting = this.waiting
    this.waiting = undefined
    this.received = undefined
    waiting?.reject(err)
  }
}
