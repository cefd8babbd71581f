/**
 * Fan-out without I/O: topic keys, the frame an event is serialised to once, and the hub that
 * hands a frame to every subscriber of its keys.
 */
import { resolveAccount } from '../chain/index.js'
import { KithError } from '../errors.js'
import type { Topic } from './schemas.js'

/**
 * One push event, serialised once however many sockets receive it: the JSON text, its UTF-8
 * bytes for WebSocket frames and, per SSE id, the text of an SSE event.
 */
export class Frame {
  private bytes: Buffer | undefined

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

  sseText (): string {
    return `event: ${this.name}\n${this.height !== undefined ? `id: ${this.height}\n` : ''}data: ${this.json}\n\n`
  }
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

/** Subscribers by key. Pure bookkeeping: the gateway decides what to publish where. */
export class Hub {
  private readonly topics = new Map<string, Set<Subscriber>>()

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

  /**
   * Hands `frame` (built only when someone listens) to every subscriber of any of `keys`, once
   * each even when it listens on several. Returns how many received it.
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
    for (const subscriber of targets) subscriber.deliver(built)
    return targets.length
  }
}
