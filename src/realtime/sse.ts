/**
 * The legacy server-sent event stream (GET /api/events): the WebSocket's push events under the
 * same names, one way. Block events carry their height as the SSE id, so a client that
 * reconnects with `Last-Event-ID` gets the blocks it missed.
 */
import type { ServerResponse } from 'node:http'
import { resolveAccount } from '../chain/index.js'
import { KithError } from '../errors/index.js'
import { TopicKeys, type Frame, type Subscriber } from './hub.js'

/** `?topics=` of /api/events: comma-separated `blocks`, `txs`, `txs:<pubkey or address>`, `mailbox:<x25519 hex>`. */
export function sseTopicKeys (topics: string): string[] {
  const keys = new Set<string>()
  for (const raw of topics.split(',').map((t) => t.trim()).filter((t) => t !== '')) {
    const [name, arg] = raw.split(/:(.*)/s, 2)
    if (name === 'blocks' && arg === undefined) keys.add(TopicKeys.blocks)
    else if (name === 'txs' && arg === undefined) keys.add(TopicKeys.allTxs)
    else if (name === 'txs' && arg !== undefined) {
      const pub = resolveAccount(arg)
      if (pub === undefined) throw new KithError('BAD_REQUEST', `topics: ${arg} is neither an Ed25519 pubkey nor a kith address`)
      keys.add(TopicKeys.txsOf(pub))
    } else if (name === 'mailbox' && arg !== undefined && /^[0-9a-fA-F]{64}$/.test(arg)) keys.add(TopicKeys.mailbox(arg.toLowerCase()))
    else throw new KithError('BAD_REQUEST', `topics: unknown topic "${raw}"; expected blocks, txs, txs:<pubkey or address> or mailbox:<x25519 pubkey>`)
  }
  if (keys.size === 0) throw new KithError('BAD_REQUEST', 'topics: name at least one of blocks, txs, txs:<pubkey or address>, mailbox:<x25519 pubkey>')
  return [...keys]
}

/** `Last-Event-ID` (header, or `last_event_id` for clients that cannot set it): a block height. */
export function parseLastEventId (value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined
  const height = Number(value)
  if (!Number.isSafeInteger(height) || height < 0) throw new KithError('BAD_REQUEST', `Last-Event-ID: ${value} is not a block height`)
  return height
}

/** One open SSE response. Writes are bounded like a WebSocket's queue: a reader that falls behind is cut. */
/** The headers of an event stream (also the whole answer to HEAD). */
export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no'
} as const

export class SseStream implements Subscriber {
  private lastHeight = -1
  private ended = false

  constructor (private readonly res: ServerResponse, private readonly maxQueuedBytes: number, private readonly onEnd: () => void) {
    res.once('close', () => this.finish())
    // a write racing the client's reset (write after end, a destroyed socket) ends the stream, never the process
    res.on('error', () => this.finish())
  }

  get isEnded (): boolean {
    return this.ended
  }

  start (): void {
    this.res.writeHead(200, SSE_HEADERS)
    this.write('retry: 3000\n: connected\n\n')
  }

  deliver (frame: Frame): void {
    // a replayed block may also come live: the height orders block events, so repeats are skipped
    if (frame.height !== undefined) {
      if (frame.height <= this.lastHeight) return
      this.lastHeight = frame.height
    }
    this.write(frame.sseText())
  }

  keepAlive (): void {
    this.write(': keep-alive\n\n')
  }

  end (): void {
    if (this.ended) return
    this.res.end()
    this.finish()
  }

  private write (text: string): void {
    if (this.ended) return
    if (this.res.destroyed || this.res.writableEnded) { this.finish(); return }
    if (this.res.writableLength + text.length > this.maxQueuedBytes) {
      // the reader does not keep up: cut it rather than buffer without bound; it resumes with Last-Event-ID
      this.res.destroy()
      this.finish()
      return
    }
    this.res.write(text)
  }

  private finish (): void {
    if (this.ended) return
    this.ended = true
    this.onEnd()
  }
}
