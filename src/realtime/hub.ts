/**
 * Fan-out without I/O: topic keys, the frame an event is serialised to once, and the hub that
 * hands a frame to every subscriber of its keys.
 */
import { resolveAccount } from '../chain/index.js'
import { KithError } from '../errors/index.js'
import type { Topic } from './schemas.js'

/**
 * One push event, serialised once however many sockets receive it: the JSON text, its UTF-8
 * bytes for WebSocket frames and, per SSE id, the text of an SSE event.
 */
export class Frame {
  private bytes: Buffer | undefined
  private frame: Buffer | undefined

  constructor (
    /** event name (`block`, `tx`, `inbox`, …): the SSE `event:` line */
    readonly name: string,
    readonly json: string,
    /** envelope id of an inbox frame: a mailbox replay drops live frames it already replayed */
    readonly envelopeId?: string,
    /** block height of a block frame: the SSE `id:` line */
    readonly height?: number
  ) {}

  static of (event: { event: string, [member: string]: unknown }, extra: { envelopeId?: string, height?: number } = {}): Frame {
    return new Frame(event.event, JSON.stringify(event), extra.envelopeId, extra.height)
  }

  get wsBytes (): Buffer {
    return (this.bytes ??= Buffer.from(this.json, 'utf8'))
  }

  /**
   * The whole WebSocket frame as a server sends it (FIN, text, unmasked): identical for every
   * socket, so fan-out writes one buffer per socket instead of framing each send.
   */
  get wsFrame (): Buffer {
    return (this.frame ??= textFrame(this.wsBytes))
  }

  sseText (): string {
    return `event: ${this.name}\n${this.height !== undefined ? `id: ${this.height}\n` : ''}data: ${this.json}\n\n`
  }
}

/** RFC 6455 frame header for an unmasked, final text frame of `payload`, followed by it. */
export function textFrame (payload: Buffer): Buffer {
  const n = payload.length
  const headerBytes = n < 126 ? 2 : n < 65_536 ? 4 : 10
  const out = Buffer.allocUnsafe(headerBytes + n)
  out[0] = 0x81
  if (n < 126) {
    out[1] = n
  } else if (n < 65_536) {
    out[1] = 126
    out.writeUInt16BE(n, 2)
  } else {
    out[1] = 127
    out.writeBigUInt64BE(BigInt(n), 2)
  }
  payload.copy(out, headerBytes)
  return out
}

export interface Subscriber {
  deliver (frame: Frame): void
}

/** Keys of a topic: what a subscription listens on and what an event is published to. */
export const TopicKeys = {
  blocks: 'blocks',
  allTxs: 'txs',
  txsOf: (pub: string) => `txs:${pub}`,
  mailbox: (x25519: string) => `mailbox:${x25519}`,
  /** typing addressed to `to` by `from`, or by anyone when `from` is '*' */
  typing: (to: string, from: string) => `typing:${to}:${from}`
}

/**
 * The key a subscription listens on. `identity` is the connection's proven Ed25519 key (typing
 * needs it; the caller checks). Throws BAD_REQUEST for an address that is neither form.
 */
export function subscriptionKey (topic: Topic, identity: string | undefined): string {
  switch (topic.topic) {
    case 'blocks': return TopicKeys.blocks
    case 'txs': {
      if (topic.address === undefined) return TopicKeys.allTxs
      const pub = resolveAccount(topic.address)
      if (pub === undefined) throw new KithError('BAD_REQUEST', `address: ${topic.address} is neither an Ed25519 pubkey (64 hex characters) nor a kith address`)
      return TopicKeys.txsOf(pub)
    }
    case 'mailbox': return TopicKeys.mailbox(topic.pub)
    case 'typing': return TopicKeys.typing(identity ?? '', topic.with ?? '*')
  }
}

/** A fan-out larger than one chunk: the rest of its subscribers wait for the next turns. */
interface FanOut {
  frame: Frame
  targets: Subscriber[]
  next: number
  started: number
}

export interface HubOptions {
  /** subscribers handed a frame per event-loop turn; a larger fan-out continues on the next turns */
  chunk?: number
  /** told when a fan-out of more than one chunk has reached every subscriber */
  onFanOut?: (subscribers: number, ms: number) => void
}

/** Subscribers handed frames per event-loop turn: one write each; ~17 µs per write measured on the 2-core VM. */
export const DEFAULT_FANOUT_CHUNK = 1000

/**
 * Subscribers by key, and the fan-out. A frame goes to at most `chunk` subscribers per
 * event-loop turn, so 10,000 sockets do not hold the loop (consensus, HTTP) for the whole
 * fan-out. Frames are handed out strictly in publish order: while a large fan-out is under way,
 * later frames queue behind it, so no subscriber sees events out of order.
 */
export class Hub {
  private readonly topics = new Map<string, Set<Subscriber>>()
  private readonly backlog: FanOut[] = []
  private scheduled = false
  private readonly chunk: number
  private readonly onFanOut: HubOptions['onFanOut']

  constructor (opts: HubOptions = {}) {
    this.chunk = Math.max(1, opts.chunk ?? DEFAULT_FANOUT_CHUNK)
    this.onFanOut = opts.onFanOut
  }

  add (key: string, subscriber: Subscriber): void {
    let set = this.topics.get(key)
    if (set === undefined) this.topics.set(key, set = new Set())
    set.add(subscriber)
  }

  remove (key: string, subscriber: Subscriber): void {
    const set = this.topics.get(key)
    if (set === undefined) return
    set.delete(subscriber)
    if (set.size === 0) this.topics.delete(key)
  }

  has (key: string): boolean {
    return this.topics.has(key)
  }

  /** Subscribers of a key. */
  count (key: string): number {
    return this.topics.get(key)?.size ?? 0
  }

  /** Frames still being handed out (a large fan-out and what queued behind it). */
  get pending (): number {
    return this.backlog.length
  }

  /**
   * Hands `frame` (built only when someone listens) to every subscriber of any of `keys`, once
   * each even when it listens on several: at once when nothing waits and they fit in a chunk,
   * otherwise in order over the next turns. Returns how many it goes to.
   */
  publish (keys: readonly string[], frame: Frame | (() => Frame)): number {
    const sets: Array<Set<Subscriber>> = []
    for (const key of keys) {
      const set = this.topics.get(key)
      if (set !== undefined) sets.push(set)
    }
    if (sets.length === 0) return 0
    const built = typeof frame === 'function' ? frame() : frame
    // a copy: delivering may close a slow consumer, which removes it from the set being walked
    const targets = sets.length === 1 ? [...sets[0]] : [...new Set(sets.flatMap((s) => [...s]))]
    if (this.backlog.length === 0 && targets.length <= this.chunk) {
      for (const subscriber of targets) subscriber.deliver(built)
      return targets.length
    }
    this.backlog.push({ frame: built, targets, next: 0, started: performance.now() })
    // the first chunk goes now; behind a fan-out under way, the scheduled turns take it
    if (this.backlog.length === 1) this.drain()
    return targets.length
  }

  /** Hands out up to one chunk of the backlog, then yields to the event loop if more waits. */
  private drain (): void {
    let budget = this.chunk
    while (budget > 0 && this.backlog.length > 0) {
      const job = this.backlog[0]
      const end = Math.min(job.targets.length, job.next + budget)
      budget -= end - job.next
      for (; job.next < end; job.next++) job.targets[job.next].deliver(job.frame)
      if (job.next === job.targets.length) {
        this.backlog.shift()
        if (job.targets.length > this.chunk) this.onFanOut?.(job.targets.length, performance.now() - job.started)
      }
    }
    if (this.backlog.length > 0 && !this.scheduled) {
      this.scheduled = true
      setImmediate(() => { this.scheduled = false; this.drain() })
    }
  }
}
