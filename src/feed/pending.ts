/**
 * Bounds on pending bodies: published here, not (yet) committed by a CREATE_POST. A pending body
 * costs its author nothing until the CREATE_POST is committed, yet holds disk and quota for up to
 * 24 hours, so what one author and one client address may hold at once is bounded (count and
 * bytes), and the author's committed balance must cover the fees of all of them (docs/feed.md).
 */
import { postFee } from '../chain/index.js'

export interface PendingLimits {
  /** pending bodies of one author; 0: no bound */
  maxPerAuthor: number
  /** pending body bytes (post `size`) of one author; 0: no bound */
  maxBytesPerAuthor: number
  /** pending bodies published from one client address; 0: no bound */
  maxPerClient: number
  /** pending body bytes published from one client address; 0: no bound */
  maxBytesPerClient: number
}

const MIB = 1024 * 1024

/**
 * An app publishes and submits the CREATE_POST at once, so an honest author holds one or two
 * bodies for a block or two; 16 leaves room for a thread posted in a burst, and 2 MiB is eight
 * bodies of MaxPostSize. An address may be a NAT shared by many users: four times that.
 */
export const DEFAULT_PENDING_LIMITS: Readonly<PendingLimits> = Object.freeze({
  maxPerAuthor: 16,
  maxBytesPerAuthor: 2 * MIB,
  maxPerClient: 64,
  maxBytesPerClient: 8 * MIB
})

function wholeNumber (env: NodeJS.ProcessEnv, name: string, fallback: number, unit: number): number {
  const raw = (env[name] ?? '').trim()
  if (raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number ≥ 0 (0: no bound), got "${raw}"`)
  return Math.floor(value * unit)
}

/** SVC_FEED_PENDING_PER_AUTHOR, SVC_FEED_PENDING_MB_PER_AUTHOR, SVC_FEED_PENDING_PER_IP, SVC_FEED_PENDING_MB_PER_IP. */
export function readPendingLimits (env: NodeJS.ProcessEnv = process.env): PendingLimits {
  return {
    maxPerAuthor: wholeNumber(env, 'SVC_FEED_PENDING_PER_AUTHOR', DEFAULT_PENDING_LIMITS.maxPerAuthor, 1),
    maxBytesPerAuthor: wholeNumber(env, 'SVC_FEED_PENDING_MB_PER_AUTHOR', DEFAULT_PENDING_LIMITS.maxBytesPerAuthor, MIB),
    maxPerClient: wholeNumber(env, 'SVC_FEED_PENDING_PER_IP', DEFAULT_PENDING_LIMITS.maxPerClient, 1),
    maxBytesPerClient: wholeNumber(env, 'SVC_FEED_PENDING_MB_PER_IP', DEFAULT_PENDING_LIMITS.maxBytesPerClient, MIB)
  }
}

/** What one author or one address holds: bodies, their bytes, and the least fees of their CREATE_POSTs. */
export interface Holding {
  count: number
  bytes: number
  fees: number
}

/** A pending body (or a publish under way) as the bounds count it. */
export interface Claim {
  author: string
  /** the client address it came from; undefined for bodies found on disk at start (addresses are not stored) */
  client: string | undefined
  size: number
}

const NOTHING: Readonly<Holding> = Object.freeze({ count: 0, bytes: 0, fees: 0 })

/** Holdings by author and by client address; a key holding nothing has no entry. */
export class PendingLedger {
  private readonly authors = new Map<string, Holding>()
  private readonly clients = new Map<string, Holding>()

  ofAuthor (author: string): Readonly<Holding> {
    return this.authors.get(author) ?? NOTHING
  }

  ofClient (client: string): Readonly<Holding> {
    return this.clients.get(client) ?? NOTHING
  }

  add (claim: Claim): void {
    change(this.authors, claim.author, claim.size, 1)
    if (claim.client !== undefined) change(this.clients, claim.client, claim.size, 1)
  }

  remove (claim: Claim): void {
    change(this.authors, claim.author, claim.size, -1)
    if (claim.client !== undefined) change(this.clients, claim.client, claim.size, -1)
  }
}

function change (table: Map<string, Holding>, key: string, size: number, sign: 1 | -1): void {
  const held = table.get(key) ?? { count: 0, bytes: 0, fees: 0 }
  held.count += sign
  held.bytes += sign * size
  held.fees += sign * postFee(size)
  if (held.count <= 0) table.delete(key)
  else table.set(key, held)
}
