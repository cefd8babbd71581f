// The `ws` package ships no type declarations and @types/ws is not installed; these cover what
// kith's real-time gateway, its tests and its benchmark use (ws 8).
declare module 'ws' {
  import { EventEmitter } from 'node:events'
  import type { IncomingMessage, Server as HttpServer } from 'node:http'
  import type { Duplex } from 'node:stream'

  type RawData = Buffer | ArrayBuffer | Buffer[]

  interface ClientOptions {
    headers?: Record<string, string>
    maxPayload?: number
    perMessageDeflate?: boolean
    handshakeTimeout?: number
  }

  class WebSocket extends EventEmitter {
    static readonly CONNECTING: 0
    static readonly OPEN: 1
    static readonly CLOSING: 2
    static readonly CLOSED: 3
    constructor (address: string | URL, options?: ClientOptions)
    readonly readyState: 0 | 1 | 2 | 3
    /** bytes queued by send() and not yet handed to the kernel */
    readonly bufferedAmount: number
    /** the underlying TCP socket (absent once closed) */
    readonly _socket: Duplex & { pause (): void, resume (): void, setNoDelay? (noDelay?: boolean): void }
    /** ws's frame writer: `_state` 0 and an empty `_queue` mean it writes through at once (no deflate, no Blob) */
    readonly _sender: { readonly _state: number, readonly _queue: unknown[] }
    send (data: string | Buffer, options?: { binary?: boolean, fin?: boolean, compress?: boolean }, cb?: (err?: Error) => void): void
    send (data: string | Buffer, cb?: (err?: Error) => void): void
    ping (data?: Buffer | string, mask?: boolean, cb?: (err?: Error) => void): void
    close (code?: number, reason?: string | Buffer): void
    terminate (): void
    pause (): void
    resume (): void
    on (event: 'message', listener: (data: RawData, isBinary: boolean) => void): this
    on (event: 'close', listener: (code: number, reason: Buffer) => void): this
    on (event: 'error', listener: (err: Error) => void): this
    on (event: 'open' | 'pong' | 'ping', listener: (data?: Buffer) => void): this
    on (event: 'unexpected-response', listener: (req: unknown, res: IncomingMessage) => void): this
    once (event: 'message', listener: (data: RawData, isBinary: boolean) => void): this
    once (event: 'close', listener: (code: number, reason: Buffer) => void): this
    once (event: 'error', listener: (err: Error) => void): this
    once (event: 'open' | 'pong' | 'ping', listener: (data?: Buffer) => void): this
    once (event: 'unexpected-response', listener: (req: unknown, res: IncomingMessage) => void): this
  }

  interface ServerOptions {
    noServer?: boolean
    server?: HttpServer
    maxPayload?: number
    perMessageDeflate?: boolean
    clientTracking?: boolean
    skipUTF8Validation?: boolean
  }

  class WebSocketServer extends EventEmitter {
    constructor (options: ServerOptions)
    handleUpgrade (request: IncomingMessage, socket: Duplex, head: Buffer, callback: (ws: WebSocket, request: IncomingMessage) => void): void
    close (cb?: (err?: Error) => void): void
  }

  export { WebSocket, WebSocketServer, type RawData, type ClientOptions, type ServerOptions }
  export default WebSocket
}
