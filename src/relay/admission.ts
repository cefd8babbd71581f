/**
 * Who may put how much into a mailbox (docs/relay.md, "Admission"). Envelopes are not signed and
 * `sender_pub` is whatever the client writes, so a limit keyed by the sender alone is no limit.
 * These are keyed by what a client cannot invent: the mailbox it writes to and its network
 * address. The node that takes an envelope from a client applies the client limits; a node that
 * receives it from a peer (gossip, anti-entropy) has no client address and bounds the mailbox
 * alone.
 */
import { isIPv6 } from 'node:net'
import { KithError } from '../errors/index.js'

export interface AdmissionLimits {
  /** envelopes a minute from one client address into one mailbox; a minute's worth may come at once (0: off) */
  clientMailboxPerMin: number
  /** envelopes one client address may store into one mailbox within one retention time (0: off) */
  clientMailboxMax: number
  /** envelopes a minute into one mailbox from all client addresses together, and again from all peers together (0: off) */
  mailboxPerMin: number
}

/**
 * A real conversation sends a few messages a minute to each of the recipient's device
 * mailboxes, and a fan-out to 16 devices is one envelope per mailbox: untouched by these. One
 * address can hold at most a tenth of a stranger's 10,000-envelope mailbox, and reaches even
 * that only after (1,000 − 20) × 3 s ≈ 49 minutes.
 */
export const DEFAULT_ADMISSION: AdmissionLimits = { clientMailboxPerMin: 20, clientMailboxMax: 1_000, mailboxPerMin: 600 }

/** What admission took for one envelope: given back when the envelope is not stored after all. */
export interface Admitted {
  release: () => void
}

const NOTHING_TAKEN: Admitted = { release: () => {} }

/**
 * Forgets stale entries of a map a few at a time, going round it, so no call pays for a scan of
 * a million keys: each use visits two, and the map grows by at most one key per use, so stale
 * keys never outnumber live ones for long.
 */
class SweepCursor<V> {
  private entries: Iterator<[string, V]> | undefined

  constructor (private readonly map: Map<string, V>, private readonly isStale: (value: V) => boolean) {}

  step (visits = 2): void {
    for (let i = 0; i < visits; i++) {
      this.entries ??= this.map.entries()
      const next = this.entries.next()
      if (next.done === true) {
        this.entries = undefined
        return
      }
      // deleting the entry just visited is safe for a Map's iterator
      if (this.isStale(next.value[1])) this.map.delete(next.value[0])
    }
  }
}

/**
 * Token buckets of one minute's allowance each, refilled continuously. A bucket left alone for a
 * minute is full again and forgotten, so the map holds only keys used in the last minute.
 */
class MinuteBuckets {
  private readonly buckets = new Map<string, { tokens: number, at: number }>()
  private now = 0
  private readonly sweep = new SweepCursor(this.buckets, (bucket) => bucket.tokens + (this.now - bucket.at) * this.perMinute / 60_000 >= this.perMinute)

  constructor (private readonly perMinute: number) {}

  /** Takes one token; answers 0, or the seconds until one will be there. */
  take (key: string, now: number): number {
    if (this.perMinute <= 0) return 0
    this.now = now
    this.sweep.step()
    const perMs = this.perMinute / 60_000
    const bucket = this.buckets.get(key) ?? { tokens: this.perMinute, at: now }
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * perMs)
    bucket.at = now
    this.buckets.set(key, bucket)
    if (bucket.tokens < 1) return Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000))
    bucket.tokens -= 1
    return 0
  }
}

/**
 * Arrival times per key within a sliding window (the retention time): how many envelopes one
 * address stored into one mailbox that may still be there. An owner's delete does not give the
 * sender room back; expiry does. Memory: one entry per envelope stored from a client, dropped
 * as the window passes it.
 */
class ArrivalWindow {
  private readonly arrivals = new Map<string, number[]>()
  private now = 0
  private readonly sweep = new SweepCursor(this.arrivals, (times) => times.length === 0 || times[times.length - 1] + this.windowMs <= this.now)

  constructor (private readonly windowMs: number) {}

  /** Arrivals of `key` still inside the window, and when the oldest leaves it. */
  count (key: string, now: number): { count: number, oldestLeavesAt: number } {
    this.now = now
    this.sweep.step()
    const times = this.live(key, now)
    return { count: times?.length ?? 0, oldestLeavesAt: times === undefined ? now : times[0] + this.windowMs }
  }

  add (key: string, now: number): () => void {
    let times = this.arrivals.get(key)
    if (times === undefined) {
      times = [now]
      this.arrivals.set(key, times)
    } else {
      times.push(now)
    }
    return () => {
      const at = times.lastIndexOf(now)
      if (at >= 0) times.splice(at, 1)
      if (times.length === 0 && this.arrivals.get(key) === times) this.arrivals.delete(key)
    }
  }

  private live (key: string, now: number): number[] | undefined {
    const times = this.arrivals.get(key)
    if (times === undefined) return undefined
    let gone = 0
    while (gone < times.length && times[gone] + this.windowMs <= now) gone++
    if (gone > 0) times.splice(0, gone)
    if (times.length > 0) return times
    this.arrivals.delete(key)
    return undefined
  }
}

/**
 * The key of a client address: an IPv4 address as it is (also when it arrives IPv4-mapped), an
 * IPv6 address by its /64 prefix, the block one subscriber is usually given, so that walking
 * through the addresses of one's own prefix buys nothing.
 */
export function clientAddressKey (ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  if (mapped !== null) return mapped[1]
  const bare = ip.split('%')[0]
  if (!isIPv6(bare)) return ip
  const groupsOf = (part: string): string[] => part === '' ? [] : part.split(':').flatMap((g) => g.includes('.') ? ['0', '0'] : [g])
  const [head, tail] = bare.split('::')
  const front = groupsOf(head)
  const groups = tail === undefined ? front : [...front, ...new Array<string>(8 - front.length - groupsOf(tail).length).fill('0'), ...groupsOf(tail)]
  return `${groups.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`
}

function refuse (code: 'RELAY_CLIENT_QUOTA' | 'RELAY_RECIPIENT_BUSY', retryAfterSeconds: number, message: string): KithError {
  return new KithError(code, `${message}; retry in ${retryAfterSeconds} s`, { retryAfterSeconds })
}

/** The admission limits of one node's mailbox (see the file's comment). */
export class MailboxAdmission {
  private readonly clientMailboxRate: MinuteBuckets
  private readonly mailboxFromClients: MinuteBuckets
  private readonly mailboxFromPeers: MinuteBuckets
  private readonly stored: ArrivalWindow

  constructor (readonly limits: AdmissionLimits, retentionMs: number) {
    this.clientMailboxRate = new MinuteBuckets(limits.clientMailboxPerMin)
    this.mailboxFromClients = new MinuteBuckets(limits.mailboxPerMin)
    this.mailboxFromPeers = new MinuteBuckets(limits.mailboxPerMin)
    this.stored = new ArrivalWindow(retentionMs)
  }

  /**
   * An envelope from a client at `clientIp` for mailbox `recipient`, or a 429 naming the limit.
   * The client's own limits are checked first, so a refused client does not spend the
   * mailbox's allowance that others share.
   */
  admitClient (recipient: string, clientIp: string, now: number): Admitted {
    const key = `${clientAddressKey(clientIp)} ${recipient}`
    const max = this.limits.clientMailboxMax
    if (max > 0) {
      const held = this.stored.count(key, now)
      if (held.count >= max) {
        throw refuse('RELAY_CLIENT_QUOTA', Math.max(1, Math.ceil((held.oldestLeavesAt - now) / 1000)),
          `your address already stored ${max} envelopes in mailbox ${recipient} within the retention time, the most one address may (SVC_RELAY_CLIENT_MAILBOX_MAX)`)
      }
    }
    const clientWait = this.clientMailboxRate.take(key, now)
    if (clientWait > 0) {
      throw refuse('RELAY_CLIENT_QUOTA', clientWait,
        `too many envelopes from your address into mailbox ${recipient}: at most ${this.limits.clientMailboxPerMin} a minute (SVC_RELAY_CLIENT_MAILBOX_PER_MIN)`)
    }
    const mailboxWait = this.mailboxFromClients.take(recipient, now)
    if (mailboxWait > 0) {
      throw refuse('RELAY_RECIPIENT_BUSY', mailboxWait,
        `mailbox ${recipient} takes at most ${this.limits.mailboxPerMin} envelopes a minute from all senders together (SVC_RELAY_MAILBOX_PER_MIN), and has had them`)
    }
    return max > 0 ? { release: this.stored.add(key, now) } : NOTHING_TAKEN
  }

  /** An envelope from a peer: the reason to ignore it, or undefined. Anti-entropy brings an ignored one again later. */
  refusePeer (recipient: string, now: number): string | undefined {
    if (this.mailboxFromPeers.take(recipient, now) === 0) return undefined
    return `mailbox ${recipient} takes at most ${this.limits.mailboxPerMin} envelopes a minute from peers (SVC_RELAY_MAILBOX_PER_MIN)`
  }
}
