/**
 * Signed inbox reads (SVC_RELAY_READ_AUTH, docs/relay.md "Signed reads"): the node issues a
 * random nonce for a mailbox, the owner signs `inbox-read:<node>:<METHOD path>:<pub>:<nonce>`
 * and sends it in the `Kith-Inbox-Auth` header, and the nonce is spent by the first read it
 * proves. A proof therefore opens one read, of one mailbox, at one endpoint of one node.
 */
import { randomBytes } from 'node:crypto'
import { KithError } from '../errors/index.js'
import { INBOX_AUTH_HEADER } from '../protocol/index.js'
import { clientAddressKey } from './admission.js'

// The signed text and header are wire format the client shares; they live outside both folders.
export { INBOX_AUTH_HEADER, inboxAuthHeader, inboxReadText, type InboxReadEndpoint } from '../protocol/index.js'

/** A nonce not used within this is forgotten. */
export const READ_NONCE_TTL_MS = 60_000
/** Unused nonces of one mailbox: a newer one retires the oldest, so minting can never lock an owner out. */
export const MAX_READ_NONCES_PER_MAILBOX = 16
/** Unused nonces minted by one client address (an IPv6 /64): past it, 429 until one is used or expires. */
export const MAX_READ_NONCES_PER_CLIENT = 32
/** Unused nonces in all (a few MB at most): past it, 503 until some are used or expire. */
export const MAX_READ_NONCES = 65_536

export interface InboxAuth {
  ed25519_pub: string
  nonce: string
  sig: string
}

/** `ed25519_pub=<hex>, nonce=<hex>, sig=<base64>` (any order; base64 may end in `=`). */
export function parseInboxAuthHeader (value: string): InboxAuth {
  const fields = new Map<string, string>()
  for (const part of value.split(',')) {
    const at = part.indexOf('=')
    if (at > 0) fields.set(part.slice(0, at).trim().toLowerCase(), part.slice(at + 1).trim())
  }
  const field = (name: keyof InboxAuth, pattern: RegExp, what: string): string => {
    const found = fields.get(name)
    if (found === undefined || !pattern.test(found)) {
      throw new KithError('BAD_REQUEST', `${INBOX_AUTH_HEADER}: ${name} must be ${what}; the header is "ed25519_pub=<hex>, nonce=<nonce>, sig=<base64>"`)
    }
    return found
  }
  return {
    ed25519_pub: field('ed25519_pub', /^[0-9a-fA-F]{64}$/, '64 hex characters').toLowerCase(),
    nonce: field('nonce', /^[0-9a-f]{32}$/, 'the 32 hex characters of a nonce from POST /relay/inbox/nonce'),
    sig: field('sig', /^[A-Za-z0-9+/]{86}==$/, 'the standard base64 of a 64-byte Ed25519 signature')
  }
}

interface Issued {
  pub: string
  client: string
  expiresAt: number
}

/** The unused nonces this node issued, bounded per mailbox, per client address and in all. */
export class ReadNonces {
  private readonly issued = new Map<string, Issued>()
  /** nonces in issue order, which is also expiry order; spent ones are skipped when reached */
  private queue: string[] = []
  private head = 0
  private readonly byMailbox = new Map<string, string[]>()
  private readonly byClient = new Map<string, string[]>()

  get size (): number {
    return this.issued.size
  }

  /** A fresh nonce for mailbox `pub`, minted for the client at `clientIp`. */
  mint (pub: string, clientIp: string, now: number): { nonce: string, expiresAt: number } {
    this.expire(now)
    const client = clientAddressKey(clientIp)
    const mine = this.byClient.get(client) ?? []
    if (mine.length >= MAX_READ_NONCES_PER_CLIENT) {
      const retryAfterSeconds = Math.max(1, Math.ceil(((this.issued.get(mine[0])?.expiresAt ?? now) - now) / 1000))
      throw new KithError('RELAY_READ_NONCE_LIMIT',
        `your address holds ${MAX_READ_NONCES_PER_CLIENT} unused inbox read nonces, the most one address may; use them or wait ${retryAfterSeconds} s`, { retryAfterSeconds })
    }
    if (this.issued.size >= MAX_READ_NONCES) {
      throw new KithError('NODE_BUSY', `this node holds ${MAX_READ_NONCES} unused inbox read nonces; try again shortly`)
    }
    const ofMailbox = this.byMailbox.get(pub) ?? []
    if (ofMailbox.length >= MAX_READ_NONCES_PER_MAILBOX) this.forget(ofMailbox[0])
    const nonce = randomBytes(16).toString('hex')
    const expiresAt = now + READ_NONCE_TTL_MS
    this.issued.set(nonce, { pub, client, expiresAt })
    this.queue.push(nonce)
    listAdd(this.byMailbox, pub, nonce)
    listAdd(this.byClient, client, nonce)
    return { nonce, expiresAt }
  }

  /**
   * Checks that `nonce` is unused, unexpired and was issued for mailbox `pub`; spend it with
   * `spend` once the signature is verified (a forged proof does not burn the owner's nonce).
   */
  check (nonce: string, pub: string, now: number): void {
    const found = this.issued.get(nonce)
    if (found === undefined || found.expiresAt <= now) {
      throw new KithError('UNAUTHORIZED', `inbox read nonce ${nonce} is unknown, expired or already used: each nonce proves one read; get a new one with POST /relay/inbox/nonce`)
    }
    if (found.pub !== pub) throw new KithError('RELAY_FORBIDDEN', `inbox read nonce ${nonce} was issued for another mailbox, not ${pub}`)
  }

  spend (nonce: string): void {
    this.forget(nonce)
  }

  private expire (now: number): void {
    while (this.head < this.queue.length) {
      const nonce = this.queue[this.head]
      const found = this.issued.get(nonce)
      if (found !== undefined && found.expiresAt > now) break
      if (found !== undefined) this.forget(nonce)
      this.head++
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head)
      this.head = 0
    }
  }

  private forget (nonce: string): void {
    const found = this.issued.get(nonce)
    if (found === undefined) return
    this.issued.delete(nonce)
    listRemove(this.byMailbox, found.pub, nonce)
    listRemove(this.byClient, found.client, nonce)
  }
}

function listAdd (lists: Map<string, string[]>, key: string, value: string): void {
  const list = lists.get(key)
  if (list === undefined) lists.set(key, [value])
  else list.push(value)
}

function listRemove (lists: Map<string, string[]>, key: string, value: string): void {
  const list = lists.get(key)
  if (list === undefined) return
  const at = list.indexOf(value)
  if (at >= 0) list.splice(at, 1)
  if (list.length === 0) lists.delete(key)
}
