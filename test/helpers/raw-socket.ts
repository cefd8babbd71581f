/**
 * A raw TCP client for hostile-client tests: writes whatever bytes a test gives it (half a
 * request head, an upgrade head, a piece of a WebSocket frame), keeps what the server answered,
 * and can reset the connection (RST, not FIN) at any point.
 */
import { connect, type Socket } from 'node:net'
import { randomBytes } from 'node:crypto'

export class RawSocket {
  received = Buffer.alloc(0)
  closed = false
  private readonly waiters = new Set<() => void>()

  private constructor (readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk])
      this.wake()
    })
    socket.on('close', () => { this.closed = true; this.wake() })
    // a reset from the server side is an expected outcome here, not a test failure
    socket.on('error', () => {})
  }

  static async open (port: number, host = '127.0.0.1'): Promise<RawSocket> {
    const socket = connect(port, host)
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve)
      socket.once('error', reject)
    })
    return new RawSocket(socket)
  }

  get text (): string {
    return this.received.toString('latin1')
  }

  /** Resolves once the bytes are handed to the kernel, or once the connection is gone (the server may drop it first). */
  async write (data: string | Buffer): Promise<void> {
    if (this.socket.destroyed) return
    await new Promise<void>((resolve) => {
      this.socket.once('close', resolve)
      this.socket.write(data, () => { this.socket.off('close', resolve); resolve() })
    })
  }

  /** Resolves once what the server sent contains `what` (or matches it); rejects on close or timeout. */
  async until (what: string | RegExp, timeoutMs = 10_000): Promise<string> {
    const matches = (): boolean => typeof what === 'string' ? this.text.includes(what) : what.test(this.text)
    const deadline = Date.now() + timeoutMs
    while (!matches()) {
      if (this.closed) throw new Error(`connection closed before ${String(what)}; got ${JSON.stringify(this.text.slice(0, 300))}`)
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`no ${String(what)} within ${timeoutMs} ms; got ${JSON.stringify(this.text.slice(0, 300))}`)
      await new Promise<void>((resolve) => {
        const wake = (): void => { clearTimeout(timer); this.waiters.delete(wake); resolve() }
        const timer = setTimeout(wake, left)
        this.waiters.add(wake)
      })
    }
    return this.text
  }

  /** Resolves once the server has closed the connection. */
  async whenClosed (timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!this.closed) {
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`the server did not close the connection within ${timeoutMs} ms`)
      await new Promise<void>((resolve) => {
        const wake = (): void => { clearTimeout(timer); this.waiters.delete(wake); resolve() }
        const timer = setTimeout(wake, left)
        this.waiters.add(wake)
      })
    }
  }

  /** Drops the connection with a TCP reset: the server's next read or write fails with ECONNRESET or EPIPE. */
  reset (): void {
    if (this.socket.destroyed) return
    // Once the server's FIN has arrived the socket is shutting down on its own; Node's reset
    // then fails inside libuv (EINVAL) yet marks the handle closing, so it is never closed and
    // the test process spins at exit. A connection the server already ended needs no reset.
    if (this.socket.readableEnded || this.socket.writableEnded) this.socket.destroy()
    else this.socket.resetAndDestroy()
  }

  private wake (): void {
    for (const wake of [...this.waiters]) wake()
  }
}

/** An HTTP/1.1 WebSocket upgrade head for `path`. */
export function upgradeHead (path: string, headers: Record<string, string> = {}): string {
  const lines = [
    `GET ${path} HTTP/1.1`,
    'Host: 127.0.0.1',
    'Connection: Upgrade',
    'Upgrade: websocket',
    'Sec-WebSocket-Version: 13',
    `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)
  ]
  return lines.join('\r\n') + '\r\n\r\n'
}

/** A masked client text frame of `payload` (what a browser sends). */
export function clientTextFrame (payload: string): Buffer {
  const data = Buffer.from(payload, 'utf8')
  const mask = randomBytes(4)
  let header: Buffer
  if (data.length < 126) {
    header = Buffer.from([0x81, 0x80 | data.length])
  } else if (data.length < 65536) {
    header = Buffer.alloc(4)
    header[0] = 0x81
    header[1] = 0x80 | 126
    header.writeUInt16BE(data.length, 2)
  } else {
    header = Buffer.alloc(10)
    header[0] = 0x81
    header[1] = 0x80 | 127
    header.writeBigUInt64BE(BigInt(data.length), 2)
  }
  const masked = Buffer.from(data.map((byte, i) => byte ^ mask[i % 4]))
  return Buffer.concat([header, mask, masked])
}
