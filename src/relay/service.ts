/**
 * The relay mailbox: validation, canonical ids, durable storage, signed deletes and reads,
 * the expiry sweep, the legacy node-sealed send, and the pieces of anti-entropy. It emits
 * events; the node wires them to gossip and to the real-time push (docs/relay.md).
 */
import { randomBytes } from 'node:crypto'
import { EventEmitter } from 'node:events'
import { join } from 'node:path'
import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import type { Logger } from 'pino'
import { z } from 'zod'
import { fromBase64, toBase64, toHex } from '../crypto/index.js'
import { KithError } from '../errors/index.js'
import { parseOrThrow, safeParse } from '../validation/index.js'
import {
  Base64TextSchema, DeleteProofSchema, MAX_SEND_PLAINTEXT_BYTES, OwnerProofSchema, PEER_FUTURE_TOLERANCE_MS, SIGNED_TS_TOLERANCE_MS, X25519PubSchema,
  base64DecodedLength, checkPeerEnvelope, deleteText, envelopeFromUpload, verifiedText,
  type DeleteProof, type Envelope, type InboxItem
} from './envelope.js'
import { DEFAULT_ADMISSION, MailboxAdmission, type AdmissionLimits, type Admitted } from './admission.js'
import { INBOX_AUTH_HEADER, ReadNonces, inboxReadText, parseInboxAuthHeader, type InboxReadEndpoint } from './read-auth.js'
import { boxSeal, randomNonce, type SealKey } from './seal.js'
import { BUCKET_SECONDS, RelayStore, bucketOf, type BucketDigest, type BucketIds, type Clock, type RelayLimits } from './store.js'

export const DEFAULT_TTL_DAYS = 7
export const DAY_MS = 86_400_000
/** Inbox page size: default and largest (a larger `limit` is lowered to it). */
export const DEFAULT_PAGE_SIZE = 50
export const MAX_PAGE_SIZE = 500
/** A page stops growing past this many bytes of item JSON, so 500 large envelopes never make one 44 MB answer. */
export const MAX_PAGE_BYTES = 8 * 1024 * 1024
export const DEFAULT_SWEEP_INTERVAL_MS = 10_000
/** Envelopes per sweep transaction: measured longest event-loop pause ~15 ms (docs/relay.md) */
export const DEFAULT_SWEEP_BATCH = 250
/** Most ids `envelopes()` answers at once. */
export const MAX_ENVELOPES_PER_REQUEST = 100

/** Whether an Ed25519 identity owns an X25519 mailbox key: its registered key or a linked device. */
export interface IdentityResolver {
  isLinked(ed25519Pub: string, x25519Pub: string): boolean
}

export interface RelayServiceOptions {
  /** the node's data directory; the store lives in `<dataDir>/relay` */
  dataDir: string
  clock?: Clock
  /** retention, ms (SVC_MAILBOX_TTL_DAYS; default 7 days) */
  ttlMs?: number
  /** undefined: no resolver, signed deletes (and signed reads) answer 503 (SVC_DISABLE_INBOX_DELETE) */
  identity: IdentityResolver | undefined
  /** the node's X25519 key for the legacy POST /relay/send */
  nodeSealKey: SealKey
  /** GET /relay/inbox and /count need the owner's signature (off by default; beyond the spec) */
  requireReadAuth?: boolean
  logger: Logger
  limits?: Partial<RelayLimits>
  /** per client address and per mailbox admission (admission.ts); defaults DEFAULT_ADMISSION */
  admission?: Partial<AdmissionLimits>
  sweepIntervalMs?: number
  sweepBatch?: number
  /** fsync on commit (default true) */
  sync?: boolean
  /** paid envelopes (fee_ut > 0): checks fee_sig and records the claim, or throws (fees.ts) */
  feeCheck?: (envelope: Envelope) => void | Promise<void>
}

/** The real-time push summary (spec "Events": inbox). */
export interface InboxEvent {
  recipient_pub: string
  id: string
  sender_pub: string
  sender_ed25519_pub: string
  sent_at: number
}

export interface RelayEvents {
  /** a new envelope accepted from a client (broadcast or send): gossip it (topic `envelope`) */
  envelope: [Envelope]
  /** a new envelope in a mailbox, from a client or a peer: push it to subscribers of recipient_pub */
  inbox: [InboxEvent]
  /** the owner deleted an envelope on this node: gossip the proof (topic `envelope_delete`) */
  delete: [DeleteProof]
}

/** Outcome of a peer's envelope or delete, in gossip validation terms. */
export type PeerOutcome =
  /** new and stored: forward */
  | { result: 'accepted', id: string }
  /** already known: drop quietly */
  | { result: 'duplicate', id: string }
  /** not storable here (expired, dated in the future, mailbox full, no resolver): drop quietly */
  | { result: 'ignored', reason: string }
  /** provably bad (malformed, id not canonical, bad signature): drop and penalise the sender */
  | { result: 'rejected', reason: string }

export interface InboxQuery {
  since?: number
  after?: string
  limit?: number
}

export interface InboxResult {
  pub: string
  count: number
  has_more: boolean
  items: InboxItem[]
}

export interface BroadcastOptions {
  /** called after validation and before storage, e.g. a per-sender rate limit that throws */
  admit?: (envelope: Envelope) => void
  /** the client's network address, for the admission limits; undefined: none apply (tests, tools) */
  clientIp?: string
}

/** A read's proof of ownership when the node requires signed reads (docs/relay.md). */
export interface ReadAuth {
  /** the Kith-Inbox-Auth header's value */
  header?: string
  /** the request carried the query-parameter proof of earlier versions (ed25519_pub, ts, sig) */
  legacyQuery?: boolean
}

export const RelaySendSchema = z.object({
  recipient_pub: X25519PubSchema.meta({ description: 'recipient X25519 pubkey, hex' }),
  msg_b64: Base64TextSchema
    .meta({ description: `base64 of the plaintext, at most ${MAX_SEND_PLAINTEXT_BYTES} bytes decoded` })
}).meta({ id: 'RelaySendRequest' })

/** SVC_MAILBOX_TTL_DAYS (decimal days, default 7) in ms. */
export function mailboxTtlMs (env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SVC_MAILBOX_TTL_DAYS
  if (raw === undefined || raw.trim() === '') return DEFAULT_TTL_DAYS * DAY_MS
  const days = Number(raw)
  if (!Number.isFinite(days) || days <= 0) throw new Error(`SVC_MAILBOX_TTL_DAYS must be a positive number of days, got "${raw}"`)
  return Math.max(1, Math.round(days * DAY_MS))
}

/** Per-sender envelopes per second on /relay/broadcast (bursts of twice that): room for a fan-out to 16 devices. */
export const DEFAULT_SENDER_RPS = 10

/** A non-negative number from the environment, or `fallback` when unset. */
function envCount (env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]
  const value = raw === undefined || raw.trim() === '' ? fallback : Number(raw)
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got "${raw ?? ''}"`)
  return value
}

/** The relay's SVC_* settings (the node passes them to RelayService and relayRoutes). */
export interface RelayEnv {
  ttlMs: number
  /** SVC_DISABLE_INBOX_DELETE=true: construct RelayService with `identity: undefined` */
  disableInboxDelete: boolean
  /** SVC_RELAY_READ_AUTH=true: signed inbox reads */
  requireReadAuth: boolean
  /** SVC_RELAY_SENDER_RPS (default 10; 0 turns it off) */
  rateLimitPerSender: number
  /** SVC_MAILBOX_MAX_MB: stored envelope bytes of the whole mailbox (unset: no cap) */
  maxStoredBytes: number
  /** SVC_RELAY_CLIENT_MAILBOX_PER_MIN, SVC_RELAY_CLIENT_MAILBOX_MAX, SVC_RELAY_MAILBOX_PER_MIN (0 turns one off) */
  admission: AdmissionLimits
}

export function readRelayEnv (env: NodeJS.ProcessEnv = process.env): RelayEnv {
  const rps = envCount(env, 'SVC_RELAY_SENDER_RPS', DEFAULT_SENDER_RPS)
  const rawMb = env.SVC_MAILBOX_MAX_MB
  const maxMb = rawMb === undefined || rawMb.trim() === '' ? Infinity : Number(rawMb)
  if (Number.isNaN(maxMb) || maxMb <= 0) throw new Error(`SVC_MAILBOX_MAX_MB must be a positive number of MiB, got "${rawMb ?? ''}"`)
  return {
    ttlMs: mailboxTtlMs(env),
    disableInboxDelete: env.SVC_DISABLE_INBOX_DELETE === 'true',
    requireReadAuth: env.SVC_RELAY_READ_AUTH === 'true',
    rateLimitPerSender: rps,
    maxStoredBytes: maxMb === Infinity ? Infinity : Math.floor(maxMb * 2 ** 20),
    admission: {
      clientMailboxPerMin: envCount(env, 'SVC_RELAY_CLIENT_MAILBOX_PER_MIN', DEFAULT_ADMISSION.clientMailboxPerMin),
      clientMailboxMax: Math.floor(envCount(env, 'SVC_RELAY_CLIENT_MAILBOX_MAX', DEFAULT_ADMISSION.clientMailboxMax)),
      mailboxPerMin: envCount(env, 'SVC_RELAY_MAILBOX_PER_MIN', DEFAULT_ADMISSION.mailboxPerMin)
    }
  }
}

export class RelayService extends EventEmitter<RelayEvents> {
  /** the mailbox's store: its tests and benchmarks read it; other folders use the accessors below */
  readonly store: RelayStore
  readonly ttlMs: number
  readonly requireReadAuth: boolean
  readonly admission: MailboxAdmission
  /** the nonces of signed reads, issued by POST /relay/inbox/nonce */
  readonly readNonces = new ReadNonces()
  private readonly clock: Clock
  private readonly identity: IdentityResolver | undefined
  private readonly sealKey: SealKey
  private readonly feeCheck: RelayServiceOptions['feeCheck']
  private readonly log: Logger
  private readonly sweepIntervalMs: number
  private readonly sweepBatch: number
  private timer: NodeJS.Timeout | undefined
  private sweeping: Promise<void> | undefined
  private stopped = false

  constructor (opts: RelayServiceOptions) {
    super()
    this.clock = opts.clock ?? { now: Date.now }
    this.ttlMs = opts.ttlMs ?? DEFAULT_TTL_DAYS * DAY_MS
    this.identity = opts.identity
    this.sealKey = opts.nodeSealKey
    this.feeCheck = opts.feeCheck
    this.requireReadAuth = opts.requireReadAuth ?? false
    this.log = opts.logger.child({ module: 'relay' })
    this.sweepIntervalMs = opts.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS
    this.sweepBatch = opts.sweepBatch ?? DEFAULT_SWEEP_BATCH
    this.admission = new MailboxAdmission({ ...DEFAULT_ADMISSION, ...opts.admission }, this.ttlMs)
    this.store = RelayStore.open(join(opts.dataDir, 'relay'), {
      ttlMs: this.ttlMs,
      clock: this.clock,
      limits: opts.limits,
      sync: opts.sync,
      onMerged: (outcome) => {
        if ('error' in outcome) this.log.error({ err: outcome.error }, 'merging the mailbox log into the mailbox table failed; the store goes on reading both')
        else this.log.info({ envelopes: outcome.envelopes, ms: outcome.ms }, 'mailbox log merged into the mailbox table')
      }
    })
  }

  /** Whether the mailbox holds envelope `id` (the fee collector drops claims whose envelope it refused). */
  hasEnvelope (id: string): boolean {
    return this.store.has(id)
  }

  /** Envelopes held (for /metrics and /api/limits). */
  get storedEnvelopes (): number {
    return this.store.size.envelopes
  }

  /** Bytes the held envelopes count against the mailbox's storage cap. */
  get storedBytes (): number {
    return this.store.storedBytes
  }

  /** The node's X25519 seal key, hex (sender_pub of envelopes from POST /relay/send). */
  get sealPublicKey (): string {
    return toHex(this.sealKey.publicKey)
  }

  /** The node's name in signed read texts: its seal key, which no other node has. */
  get readNodeId (): string {
    return this.sealPublicKey
  }

  get limits (): RelayLimits {
    return this.store.limits
  }

  private nowSeconds (): number {
    return Math.floor(this.clock.now() / 1000)
  }

  /**
   * POST /relay/broadcast: validates the client's sealed envelope, replaces its id and sent_at,
   * stores it durably, then announces it. A known id is answered the same way without a second
   * effect, so a client may retry a broadcast whose answer it lost.
   */
  async broadcast (input: unknown, opts: BroadcastOptions = {}): Promise<{ id: string, status: 'broadcast' }> {
    const envelope = envelopeFromUpload(input, this.nowSeconds())
    // only paid envelopes have a fee to check; the free path skips the extra await
    if (envelope.fee_ut > 0 && this.feeCheck !== undefined) await this.feeCheck(envelope)
    opts.admit?.(envelope)
    await this.storeFromClient(envelope, opts.clientIp)
    return { id: envelope.id, status: 'broadcast' }
  }

  /** Stores a client's envelope within the admission limits; what they took is given back unless it is new and stored. */
  private async storeFromClient (envelope: Envelope, clientIp: string | undefined): Promise<void> {
    const admitted: Admitted | undefined = clientIp === undefined || this.store.has(envelope.id)
      ? undefined
      : this.admission.admitClient(envelope.recipient_pub, clientIp, this.clock.now())
    let stored = false
    try {
      stored = await this.store.put(envelope)
    } finally {
      if (!stored) admitted?.release()
    }
    if (stored) this.announce(envelope)
  }

  /**
   * POST /relay/send (legacy, NOT end-to-end): the node seals the plaintext to the recipient with
   * its own X25519 key. The recipient opens it with nacl.box.open(ciphertext, nonce, sender_pub,
   * own secret key), but the node saw the plaintext and the sender is not authenticated.
   */
  async send (input: unknown, opts: { clientIp?: string } = {}): Promise<{ id: string, recipient_pub: string, status: 'sent' }> {
    if (typeof input === 'object' && input !== null) {
      const msg = (input as { msg_b64?: unknown }).msg_b64
      if (typeof msg === 'string' && base64DecodedLength(msg) > MAX_SEND_PLAINTEXT_BYTES) {
        throw new KithError('BODY_TOO_LARGE', `message of ${base64DecodedLength(msg)} bytes exceeds the limit of ${MAX_SEND_PLAINTEXT_BYTES} bytes`)
      }
    }
    const { recipient_pub: recipient, msg_b64: msg } = parseOrThrow(RelaySendSchema, input)
    const nonce = randomNonce()
    const ciphertext = boxSeal(fromBase64(msg) as Buffer, nonce, Buffer.from(recipient, 'hex'), this.sealKey.secretKey)
    const envelope = envelopeFromUpload({
      sender_pub: this.sealPublicKey,
      recipient_pub: recipient,
      sender_ed25519_pub: '',
      fee_ut: 0,
      fee_sig: null,
      nonce: toBase64(nonce),
      ciphertext: toBase64(ciphertext)
    }, this.nowSeconds())
    await this.storeFromClient(envelope, opts.clientIp)
    return { id: envelope.id, recipient_pub: recipient, status: 'sent' }
  }

  /**
   * An envelope gossiped by a peer or pulled by anti-entropy. It must already be canonical. Its
   * sent_at is kept (every node then pages and buckets it alike) unless it lies more than
   * 5 minutes ahead of this node's clock; an envelope expired here is not stored. Not
   * re-announced for gossip (gossipsub forwards what validation accepts), but pushed to local
   * subscribers.
   */
  async accept (input: unknown): Promise<PeerOutcome> {
    const checked = checkPeerEnvelope(input)
    if (!checked.ok) return { result: 'rejected', reason: checked.reason }
    const envelope = checked.envelope
    const now = this.clock.now()
    if (envelope.sent_at * 1000 > now + PEER_FUTURE_TOLERANCE_MS) return { result: 'ignored', reason: `sent_at ${envelope.sent_at} is ahead of this node's clock` }
    if (this.store.isExpired(envelope.sent_at, now)) return { result: 'ignored', reason: `envelope ${envelope.id} has expired here` }
    if (this.store.has(envelope.id)) return { result: 'duplicate', id: envelope.id }
    const busy = this.admission.refusePeer(envelope.recipient_pub, now)
    if (busy !== undefined) return { result: 'ignored', reason: busy }
    try {
      if (!await this.store.put(envelope)) return { result: 'duplicate', id: envelope.id }
    } catch (err) {
      if (err instanceof KithError && (err.code === 'RELAY_MAILBOX_FULL' || err.code === 'RELAY_STORAGE_FULL')) return { result: 'ignored', reason: err.message }
      throw err
    }
    this.emit('inbox', inboxEvent(envelope))
    return { result: 'accepted', id: envelope.id }
  }

  /** GET /relay/inbox: oldest first by (sent_at, id), from `since` (inclusive). */
  inbox (pubInput: string, query: InboxQuery = {}, auth?: ReadAuth): InboxResult {
    return JSON.parse(this.inboxBody(pubInput, query, auth)) as InboxResult
  }

  /** GET /relay/inbox as the JSON text of an InboxResult, around the stored items' text. */
  inboxBody (pubInput: string, query: InboxQuery = {}, auth?: ReadAuth): string {
    const { pub, page } = this.inboxPage(pubInput, query, auth)
    return `{"pub":"${pub}","count":${page.count},"has_more":${String(page.hasMore)},"items":[${page.json}]}`
  }

  private inboxPage (pubInput: string, query: InboxQuery, auth: ReadAuth | undefined): { pub: string, page: { json: string, count: number, hasMore: boolean } } {
    const pub = this.mailboxKey(pubInput)
    if (this.requireReadAuth) this.authorizeRead('GET /relay/inbox', pub, auth)
    const limit = Math.min(Math.max(1, Math.floor(query.limit ?? DEFAULT_PAGE_SIZE)), MAX_PAGE_SIZE)
    return { pub, page: this.store.inboxJson(pub, { since: query.since, after: query.after?.toLowerCase(), limit, maxBytes: MAX_PAGE_BYTES }) }
  }

  /** Whether an Ed25519 key owns an X25519 mailbox (registered key or linked device); RELAY_UNAVAILABLE without a resolver. */
  ownsMailbox (ed25519Pub: string, x25519Pub: string): boolean {
    return this.requireResolver('mailbox ownership').isLinked(ed25519Pub, x25519Pub)
  }

  /**
   * Stored envelopes of a mailbox as push summaries, oldest first from (since, after): the
   * real-time replay. No read check here; the gateway applies its own (a proven key).
   */
  inboxEvents (pub: string, query: { since?: number, after?: string, limit: number }): { items: InboxEvent[], hasMore: boolean } {
    const page = this.store.inbox(pub, { since: query.since, after: query.after, limit: Math.min(query.limit, MAX_PAGE_SIZE), maxBytes: MAX_PAGE_BYTES })
    return { items: page.items.map(inboxEvent), hasMore: page.hasMore }
  }

  /** GET /relay/inbox/count: live envelopes in the mailbox. */
  count (pubInput: string, auth?: ReadAuth): { pub: string, count: number } {
    const pub = this.mailboxKey(pubInput)
    if (this.requireReadAuth) this.authorizeRead('GET /relay/inbox/count', pub, auth)
    return { pub, count: this.store.count(pub) }
  }

  /**
   * POST /relay/inbox/nonce: a single-use nonce for one signed read of mailbox `pub`, and the
   * node id the read's text names. On a node that does not require signed reads nothing is
   * kept (`required: false`), and a read needs no proof.
   */
  readNonce (pubInput: string, clientIp: string): { pub: string, nonce: string, node: string, expires_at: number, required: boolean } {
    const pub = this.mailboxKey(pubInput)
    const now = this.clock.now()
    const { nonce, expiresAt } = this.requireReadAuth
      ? this.readNonces.mint(pub, clientIp, now)
      : { nonce: randomNonceHex(), expiresAt: now }
    return { pub, nonce, node: this.readNodeId, expires_at: Math.floor(expiresAt / 1000), required: this.requireReadAuth }
  }

  /**
   * DELETE /relay/inbox/{envID}?pub=: `sig` is the Ed25519 signature of `ed25519_pub` over
   * `inbox-delete:<envID>:<pub>:<ts>`; `ts` within ±5 minutes; `ed25519_pub` linked to `pub`.
   * Checks in order: resolver (503), shape (400), timestamp (400), signature (403), link (403),
   * envelope in this mailbox (404; an envelope already deleted by its owner answers 200 again).
   */
  async delete (envIdInput: string, pubInput: string, proofInput: unknown): Promise<{ id: string, status: 'deleted' }> {
    const identity = this.requireResolver('inbox delete')
    const pub = this.mailboxKey(pubInput)
    const proof = parseOrThrow(OwnerProofSchema, proofInput)
    this.checkFresh(proof.ts)
    const id = envIdInput.toLowerCase()
    const text = verifiedText([deleteText(envIdInput, pubInput, proof.ts), deleteText(id, pub, proof.ts)], proof.sig, proof.ed25519_pub)
    if (text === undefined) throw new KithError('RELAY_FORBIDDEN', `sig is not a valid signature by ${proof.ed25519_pub} over inbox-delete:<envID>:<pub>:<ts>`)
    if (!identity.isLinked(proof.ed25519_pub, pub)) throw new KithError('RELAY_FORBIDDEN', `${proof.ed25519_pub} is not linked to mailbox ${pub} in the identity registry`)
    const record: DeleteProof = { id, recipient_pub: pub, sent_at: 0, ed25519_pub: proof.ed25519_pub, sig: proof.sig, ts: proof.ts, text }
    const outcome = await this.store.delete(id, pub, record)
    // A repeated delete (its answer lost) is answered the same way, without a second effect.
    if (outcome === 'already_deleted') return { id, status: 'deleted' }
    if (outcome !== 'deleted') throw new KithError('NOT_FOUND', `no envelope ${id} in mailbox ${pub}`)
    const stored = this.store.tombstone(id)
    if (stored !== undefined) this.emit('delete', stored)
    return { id, status: 'deleted' }
  }

  /**
   * A delete gossiped by a peer or pulled by anti-entropy. The signature and the link are
   * checked; the timestamp is not (the proof may be replayed later, and it can only ever delete
   * what its owner deleted). An unknown id gets a tombstone, so the envelope is refused if it
   * arrives later.
   */
  async acceptDeletion (input: unknown): Promise<PeerOutcome> {
    const parsed = safeParse(DeleteProofSchema, input)
    if (!parsed.success) return { result: 'rejected', reason: `malformed delete proof: ${parsed.error.issues[0]?.message ?? 'invalid'}` }
    const proof = parsed.data
    if (proof.text.toLowerCase() !== deleteText(proof.id, proof.recipient_pub, proof.ts)) return { result: 'rejected', reason: 'the signed text does not name this envelope, mailbox and ts' }
    if (verifiedText([proof.text], proof.sig, proof.ed25519_pub) === undefined) return { result: 'rejected', reason: 'bad signature on the delete proof' }
    if (this.identity === undefined) return { result: 'ignored', reason: 'no identity resolver on this node' }
    // Not provable against the sender: the link may differ in a chain state this node has not reached.
    if (!this.identity.isLinked(proof.ed25519_pub, proof.recipient_pub)) return { result: 'ignored', reason: `${proof.ed25519_pub} is not linked to ${proof.recipient_pub} here` }
    const outcome = await this.store.delete(proof.id, proof.recipient_pub, proof, { tombstoneUnknown: true })
    if (outcome === 'deleted' || outcome === 'tombstoned') return { result: 'accepted', id: proof.id }
    if (outcome === 'already_deleted') return { result: 'duplicate', id: proof.id }
    return { result: 'ignored', reason: `envelope ${proof.id} is expired or belongs to another mailbox` }
  }

  // ---- anti-entropy (docs/relay.md): digests -> differing buckets -> ids -> envelopes ----

  /** Buckets every node holds whole: from the first one entirely inside the retention window to the current one. */
  liveBuckets (): { from: number, to: number } {
    return { from: Math.ceil(this.store.liveFrom() / BUCKET_SECONDS), to: bucketOf(this.nowSeconds()) }
  }

  /** Digests of the non-empty buckets in [from, to], clamped to liveBuckets(). */
  digests (fromBucket: number, toBucket: number): BucketDigest[] {
    const live = this.liveBuckets()
    const from = Math.max(fromBucket, live.from)
    const to = Math.min(toBucket, live.to)
    return from > to ? [] : this.store.digests(from, to)
  }

  /** Buckets in which a peer's digest differs from this node's: ask the peer for their ids. */
  missingFrom (remote: readonly BucketDigest[]): number[] {
    const live = this.liveBuckets()
    const out: number[] = []
    for (const theirs of remote) {
      if (!Number.isInteger(theirs.bucket) || theirs.bucket < live.from || theirs.bucket > live.to) continue
      const ours = this.store.digest(theirs.bucket)
      if (ours.live !== theirs.live || ours.live_xor !== theirs.live_xor || ours.deleted !== theirs.deleted || ours.deleted_xor !== theirs.deleted_xor) {
        out.push(theirs.bucket)
      }
    }
    return out
  }

  /** This node's ids in a bucket, live and deleted, a page at a time. */
  idsInBucket (bucket: number, opts: { after?: string, limit?: number } = {}): BucketIds {
    return this.store.idsInBucket(bucket, { after: opts.after, limit: Math.min(opts.limit ?? 5000, 5000) })
  }

  /** Of a peer's bucket listing, the ids to fetch: envelopes unknown here and deletes not yet applied. */
  wanted (remote: Pick<BucketIds, 'live' | 'deleted'>): string[] {
    const live = remote.live.filter((id) => typeof id === 'string' && !this.store.has(id))
    const deleted = remote.deleted.filter((id) => typeof id === 'string' && this.store.tombstone(id) === undefined)
    return [...live, ...deleted]
  }

  /** Answers a peer's fetch: live envelopes and delete proofs for the ids this node holds (at most 100 ids). */
  envelopes (ids: readonly string[]): { envelopes: Envelope[], deletions: DeleteProof[] } {
    const envelopes: Envelope[] = []
    const deletions: DeleteProof[] = []
    for (const id of ids.slice(0, MAX_ENVELOPES_PER_REQUEST)) {
      if (typeof id !== 'string') continue
      const env = this.store.get(id)
      if (env !== undefined) { envelopes.push(env); continue }
      const proof = this.store.tombstone(id)
      if (proof !== undefined) deletions.push(proof)
    }
    return { envelopes, deletions }
  }

  // ---- lifecycle ----

  /** Starts the expiry sweep (every 10 s by default). */
  start (): void {
    if (this.timer !== undefined) return
    this.stopped = false
    this.timer = setInterval(() => { void this.sweepNow() }, this.sweepIntervalMs)
    this.timer.unref()
  }

  /** Stops the sweep, waits for a running one to end its current batch, and closes the store. */
  async stop (): Promise<void> {
    this.stopped = true
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
    await this.sweeping
    await this.store.close()
  }

  /**
   * Deletes every expired envelope and tombstone, `sweepBatch` per lmdb transaction, yielding
   * to the event loop between batches so requests interleave. Returns how many it deleted.
   */
  async sweepNow (): Promise<number> {
    if (this.sweeping !== undefined) {
      await this.sweeping
      return 0
    }
    let total = 0
    const run = (async () => {
      try {
        for (;;) {
          const n = await this.store.sweepExpired(this.clock.now(), this.sweepBatch)
          total += n
          if (n < this.sweepBatch || this.stopped) break
          await yieldToEventLoop()
        }
        if (total > 0) this.log.debug({ deleted: total }, 'expired envelopes swept')
      } catch (err) {
        this.log.error({ err }, 'mailbox sweep failed')
      }
    })()
    this.sweeping = run
    try {
      await run
    } finally {
      this.sweeping = undefined
    }
    return total
  }

  // ---- helpers ----

  private announce (envelope: Envelope): void {
    this.emit('envelope', envelope)
    this.emit('inbox', inboxEvent(envelope))
  }

  private mailboxKey (pub: string): string {
    return parseOrThrow(X25519PubSchema, pub, 'BAD_REQUEST', 'pub')
  }

  private requireResolver (what: string): IdentityResolver {
    if (this.identity === undefined) throw new KithError('RELAY_UNAVAILABLE', `${what} is turned off on this node: it has no identity resolver (SVC_DISABLE_INBOX_DELETE)`)
    return this.identity
  }

  private checkFresh (ts: number): void {
    if (Math.abs(ts * 1000 - this.clock.now()) > SIGNED_TS_TOLERANCE_MS) {
      throw new KithError('RELAY_STALE_TS', `timestamp ts=${ts} is more than 5 minutes from the node clock (${this.nowSeconds()})`)
    }
  }

  /**
   * Signed reads (requireReadAuth): the Kith-Inbox-Auth header names a nonce this node issued
   * for the mailbox, and `sig` by `ed25519_pub` over `inbox-read:<node>:<endpoint>:<pub>:<nonce>`;
   * the key must own the mailbox. The nonce is spent by the read it proves, so a replay fails.
   */
  private authorizeRead (endpoint: InboxReadEndpoint, pub: string, auth: ReadAuth | undefined): void {
    if (auth?.header === undefined) {
      const how = `POST /relay/inbox/nonce {"pub"} for a nonce, then send the ${INBOX_AUTH_HEADER} header "ed25519_pub=<hex>, nonce=<nonce>, sig=<base64 Ed25519 over inbox-read:<node>:<METHOD path>:<pub>:<nonce>>"`
      throw new KithError('UNAUTHORIZED', auth?.legacyQuery === true
        ? `signed inbox reads no longer take ed25519_pub, ts and sig in the query (a proof there could be replayed): ${how}`
        : `this node requires signed inbox reads: ${how}`)
    }
    const identity = this.requireResolver('signed inbox reading')
    const proof = parseInboxAuthHeader(auth.header)
    this.readNonces.check(proof.nonce, pub, this.clock.now())
    const text = inboxReadText(this.readNodeId, endpoint, pub, proof.nonce)
    if (verifiedText([text], proof.sig, proof.ed25519_pub) === undefined) {
      throw new KithError('RELAY_FORBIDDEN', `sig is not a valid signature by ${proof.ed25519_pub} over "${text}"`)
    }
    if (!identity.isLinked(proof.ed25519_pub, pub)) throw new KithError('RELAY_FORBIDDEN', `${proof.ed25519_pub} is not linked to mailbox ${pub} in the identity registry`)
    this.readNonces.spend(proof.nonce)
  }
}

function randomNonceHex (): string {
  return randomBytes(16).toString('hex')
}

function inboxEvent (env: Envelope): InboxEvent {
  return { recipient_pub: env.recipient_pub, id: env.id, sender_pub: env.sender_pub, sender_ed25519_pub: env.sender_ed25519_pub, sent_at: env.sent_at }
}
