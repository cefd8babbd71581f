/**
 * Real clients of the real-time gateway for tests: a `ws` WebSocket that keeps every message it
 * received and waits for the next one matching a predicate, and an SSE reader over fetch.
 */
import WebSocket from 'ws'
import { sign, toBase64 } from '../../src/crypto/index.js'
import type { KeyPair } from '../../src/crypto/index.js'

export interface Pushed {
  event: string
  [member: string]: unknown
}

export class WsClient {
  readonly received: Pushed[] = []
  closed: { code: number, reason: string } | undefined
  private readonly waiters = new Set<() => void>()
  private cursor = 0

  private constructor (readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.received.push(JSON.parse(String(data)) as Pushed)
      for (const wake of [...this.waiters]) wake()
    })
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() }
      for (const wake of [...this.waiters]) wake()
    })
    ws.on('error', () => {})
  }

  /** Opens a socket to `<baseUrl>/api/ws` (plus `query`) and waits for `hello`. */
  static async open (baseUrl: string, query = ''): Promise<WsClient> {
    const ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/api/ws${query}`)
    const client = new WsClient(ws)
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve())
      ws.once('error', reject)
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode ?? 0}`)))
    })
    await client.next((m) => m.event === 'hello')
    return client
  }

  get hello (): Pushed {
    const hello = this.received.find((m) => m.event === 'hello')
    if (hello === undefined) throw new Error('no hello yet')
    return hello
  }

  send (message: unknown): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message))
  }

  /** The next message (after those already taken by next) that matches; earlier non-matching ones are skipped. */
  async next (match: (m: Pushed) => boolean, timeoutMs = 10_000): Promise<Pushed> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      while (this.cursor < this.received.length) {
        const m = this.received[this.cursor++]
        if (match(m)) return m
      }
      if (this.closed !== undefined) throw new Error(`socket closed (${this.closed.code} ${this.closed.reason}) before a matching message; got ${JSON.stringify(this.received.slice(-5))}`)
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`no matching message within ${timeoutMs} ms; last: ${JSON.stringify(this.received.slice(-5))}`)
      await new Promise<void>((resolve) => {
        const wake = (): void => { clearTimeout(timer); this.waiters.delete(wake); resolve() }
        const timer = setTimeout(wake, left)
        this.waiters.add(wake)
      })
    }
  }

  /** Sends a request with `req` and waits for the answer that echoes it. */
  async request (message: Record<string, unknown>, timeoutMs = 10_000): Promise<Pushed> {
    const req = `r${Math.random().toString(36).slice(2)}`
    this.send({ ...message, req })
    return await this.next((m) => m.req === req, timeoutMs)
  }

  /** Proves `key` with the nonce of `hello`. */
  async auth (key: KeyPair, pub: string): Promise<Pushed> {
    const nonce = this.hello.nonce as string
    const sig = toBase64(sign(Buffer.from(`kith-ws-auth:${nonce}:${pub}`), key.secretKey))
    return await this.request({ op: 'auth', nonce, ed25519_pub: pub, sig })
  }

  async whenClosed (timeoutMs = 10_000): Promise<{ code: number, reason: string }> {
    const deadline = Date.now() + timeoutMs
    while (this.closed === undefined) {
      if (Date.now() > deadline) throw new Error('socket did not close')
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    return this.closed
  }

  close (): void {
    this.ws.close()
  }
}

export interface SseEvent {
  event: string
  id: string | undefined
  data: unknown
}

/** Reads `GET <url>` as server-sent events; keeps events and comment lines. */
export class SseReader {
  readonly events: SseEvent[] = []
  readonly comments: string[] = []
  status = 0
  private readonly abort = new AbortController()
  private done: Promise<void> = Promise.resolve()

  static async open (url: string, headers: Record<string, string> = {}): Promise<SseReader> {
    const reader = new SseReader()
    const res = await fetch(url, { headers, signal: reader.abort.signal })
    reader.status = res.status
    if (res.status !== 200 || res.body === null) return reader
    const body = res.body
    reader.done = (async () => {
      const decoder = new TextDecoder()
      let buffered = ''
      const stream = body.getReader()
      try {
        for (;;) {
          const { value, done } = await stream.read()
          if (done) break
          buffered += decoder.decode(value, { stream: true })
          let end = buffered.indexOf('\n\n')
          while (end >= 0) {
            reader.parse(buffered.slice(0, end))
            buffered = buffered.slice(end + 2)
            end = buffered.indexOf('\n\n')
          }
        }
      } catch {
        // aborted
      }
    })()
    return reader
  }

  private parse (block: string): void {
    let event = 'message'
    let id: string | undefined
    const data: string[] = []
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) this.comments.push(line.slice(1).trim())
      else if (line.startsWith('event: ')) event = line.slice(7)
      else if (line.startsWith('id: ')) id = line.slice(4)
      else if (line.startsWith('data: ')) data.push(line.slice(6))
    }
    if (data.length > 0) this.events.push({ event, id, data: JSON.parse(data.join('\n')) })
  }

  close (): void {
    this.abort.abort()
  }

  async ended (): Promise<void> {
    await this.done
  }
}
