/**
 * One WebSocket's protocol: parses client messages, answers them, keeps its subscriptions in the
 * hub, and sends frames through a `Sink` with a bounded queue. It knows nothing of the `ws`
 * library (gateway.ts adapts a socket to a Sink), so tests drive it with a fake sink.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { KithError } from '../errors/index.js'
import type { InboxEvent } from '../relay/index.js'
import { parseOrThrow, safeParse } from '../validation/index.js'
import { NonceHandshake } from './auth.js'
import { inboxFrame, typingFrame, typingKeys } from './events.js'
import { Frame, subscriptionKey, type Hub, type Subscriber } from './hub.js'
import type { RealtimeLimits } from './options.js'
import {
  AuthMessageSchema, CLIENT_OPS, CLOSE_CODES, MessageHeadSchema, PingMessageSchema, SubmitTxEnvelopeSchema, SubscribeMessageSchema,
  TypingMessageSchema, UnsubscribeMessageSchema, type ErrorEvent, type HelloEvent, type SubmitAckEvent, type Topic
} from './schemas.js'
import { ReplaySeam } from './seam.js'

/** Where a connection's bytes go: a WebSocket in production, an array in tests. */
export interface Sink {
  send (frame: Frame): void
  /** bytes sent and not yet handed to the kernel */
  readonly bufferedAmount: number
  close (code: number, reason: string): void
}

/** The mailbox as the gateway sees it (RelayService behind an adapter). */
export interface MailboxSource {
  /** SVC_RELAY_READ_AUTH: reading a mailbox needs a key that owns it */
  readonly requireReadAuth: boolean
  /** whether the Ed25519 key owns the X25519 mailbox (registered key or linked device); throws when the node has no resolver */
  ownsMailbox (ed25519Pub: string, x25519Pub: string): boolean
  /** stored envelopes oldest first from (since, after), as in GET /relay/inbox */
  page (pub: string, from: { since?: number, after?: string, limit: number }): { items: InboxEvent[], hasMore: boolean }
}

/** A token bucket per client address; `retryAfterSeconds` says when a refused client may try again. */
export interface AddressLimiter {
  admit (ip: string): { allowed: boolean, retryAfterSeconds: number }
}

/** The per-IP bucket's refusal, worded as the HTTP one. */
export function addressRateLimited (retryAfterSeconds: number): KithError {
  return new KithError('RATE_LIMITED', `too many requests from this address; slow down (retry after ${retryAfterSeconds} s)`)
}

/** What every connection of a gateway shares. */
export interface ConnectionContext {
  hub: Hub
  limits: RealtimeLimits
  /** the node's POST /api/tx path */
  submit (tx: unknown): Promise<{ id: string, status: string }>
  /** the API's one error map: HTTP status and `error` text */
  describeError (err: unknown): { status: number, error: string }
  /** per-connection message rate (a token bucket keyed by connection id) */
  limiter: { take (key: string): boolean }
  /**
   * The API's per-IP bucket (SVC_RATE_LIMIT_RPS), shared with HTTP requests, upgrades and SSE
   * opens: every client message takes a token from it, as an HTTP request does. Absent: no limit.
   */
  addressLimiter?: AddressLimiter
  mailbox: MailboxSource | undefined
  /** token-writes mode: submit_tx needs the token given on the upgrade */
  writesNeedToken: boolean
  protocolVersion: number
  nodeVersion: string
  now (): number
}

/** Stored envelopes read per step of a mailbox replay. */
const REPLAY_PAGE = 200
/** Live inbox frames one subscription holds while its replay runs. */
const REPLAY_MAX_WAITING = 2000
/** Refused messages in a row (over the rate) before the connection is closed. */
const MAX_REFUSALS_IN_A_ROW = 50
/** How long a replay waits for a full send queue to drain before it gives up on the client. */
const REPLAY_DRAIN_DEADLINE_MS = 30_000

export class Connection implements Subscriber {
  readonly handshake: NonceHandshake
  /** subscriber registered in the hub, by key (this connection, or a mailbox replay's front) */
  private readonly subscriptions = new Map<string, Subscriber>()
  private lastActivity: number
  private refusalsInARow = 0
  private closed = false

  constructor (
    private readonly ctx: ConnectionContext,
    private readonly sink: Sink,
    /** `ip`: the client address, the key of the per-IP bucket */
    readonly info: { id: string, tokenAccepted: boolean, ip: string },
    nonce?: string
  ) {
    this.handshake = new NonceHandshake(nonce)
    this.lastActivity = ctx.now()
  }

  get isClosed (): boolean {
    return this.closed
  }

  get subscriptionCount (): number {
    return this.subscriptions.size
  }

  /** The first message: the auth nonce, the caps and what this connection may do. */
  hello (): void {
    const { limits } = this.ctx
    const hello: HelloEvent = {
      event: 'hello',
      nonce: this.handshake.pendingNonce ?? '',
      protocol_version: this.ctx.protocolVersion,
      node_version: this.ctx.nodeVersion,
      limits: {
        max_message_bytes: limits.maxMessageBytes,
        max_subscriptions: limits.maxSubscriptions,
        messages_per_second: limits.messagesPerSecond,
        heartbeat_ms: limits.heartbeatMs,
        idle_ms: limits.idleMs
      },
      mailbox_needs_auth: this.ctx.mailbox?.requireReadAuth ?? false,
      token_accepted: this.info.tokenAccepted
    }
    this.send(hello)
  }

  /** Without subscriptions and silent for the idle timeout. */
  isIdle (now: number): boolean {
    return this.subscriptions.size === 0 && this.ctx.limits.idleMs > 0 && now - this.lastActivity >= this.ctx.limits.idleMs
  }

  /** A frame from the hub (or an answer): sent unless the queue would pass its bound, which closes the slow consumer. */
  deliver (frame: Frame): void {
    if (this.closed) return
    if (this.sink.bufferedAmount + frame.wsBytes.length > this.ctx.limits.maxQueuedBytes) {
      this.close(CLOSE_CODES.SLOW_CONSUMER, 'slow consumer: send queue full; reconnect and refetch')
      return
    }
    this.sink.send(frame)
  }

  /** Leaves every topic and closes the socket with `code`. */
  close (code: number, reason: string): void {
    if (this.closed) return
    this.dispose()
    this.sink.close(code, reason)
  }

  /** The socket is gone: leave every topic. */
  dispose (): void {
    this.closed = true
    for (const [key, subscriber] of this.subscriptions) this.ctx.hub.remove(key, subscriber)
    this.subscriptions.clear()
  }

  /**
   * A text message from the client. Never throws: every failure is answered with an error message.
   * Two limits: the connection's own rate, checked before the message is parsed, and the per-IP
   * bucket every message takes a token from, whatever its op (parsed first, so the refusal names
   * the op and `req`).
   */
  onMessage (data: Buffer | string): void {
    if (this.closed) return
    this.lastActivity = this.ctx.now()
    if (!this.ctx.limiter.take(this.info.id)) {
      this.refuse(null, undefined, undefined, new KithError('RATE_LIMITED', `too many messages: at most ${this.ctx.limits.messagesPerSecond} a second (bursts of twice that); this one was dropped`))
      return
    }
    let message: unknown
    let readable = true
    try {
      message = JSON.parse(typeof data === 'string' ? data : data.toString('utf8'))
    } catch {
      readable = false
    }
    const head = readable ? safeParse(MessageHeadSchema, message) : undefined
    const op = head?.success === true ? head.data.op : null
    const req = head?.success === true && typeof head.data.req === 'string' && head.data.req.length <= 64 ? head.data.req : undefined
    const rate = this.ctx.addressLimiter?.admit(this.info.ip)
    if (rate !== undefined && !rate.allowed) {
      this.refuse(op, req, message, addressRateLimited(rate.retryAfterSeconds))
      return
    }
    this.refusalsInARow = 0
    if (!readable) {
      this.sendError(null, undefined, new KithError('BAD_REQUEST', 'message is not valid JSON'))
      return
    }
    if (op === null) {
      this.sendError(null, undefined, new KithError('BAD_REQUEST', `a message is a JSON object with an "op" string, one of ${CLIENT_OPS.join(', ')}`))
      return
    }
    try {
      this.dispatch(op, req, message)
    } catch (err) {
      this.sendError(op, req, err)
    }
  }

  /**
   * A message dropped by a rate limit: answered in the shape its op answers a failure
   * (`submit_ack` rejected for submit_tx, else `error`); many in a row close the connection (4029).
   */
  private refuse (op: string | null, req: string | undefined, message: unknown, err: KithError): void {
    if (++this.refusalsInARow >= MAX_REFUSALS_IN_A_ROW) {
      this.close(CLOSE_CODES.RATE_LIMITED, 'too many messages over the rate limit')
      return
    }
    if (op === 'submit_tx') {
      const { status, error } = this.ctx.describeError(err)
      this.sendAck(req, submittedId(message), { status: 'rejected', code: status, error })
      return
    }
    this.sendError(op, req, err)
  }

  /** A binary message: the protocol is JSON text only. */
  onBinary (): void {
    this.lastActivity = this.ctx.now()
    this.sendError(null, undefined, new KithError('BAD_REQUEST', 'binary messages are not supported; send JSON text'))
  }

  private dispatch (op: string, req: string | undefined, message: unknown): void {
    switch (op) {
      case 'subscribe': return this.subscribe(req, parseOrThrow(SubscribeMessageSchema, message))
      case 'unsubscribe': return this.unsubscribe(req, parseOrThrow(UnsubscribeMessageSchema, message))
      case 'submit_tx': return void this.submitTx(req, parseOrThrow(SubmitTxEnvelopeSchema, message).tx)
      case 'typing': return this.typing(parseOrThrow(TypingMessageSchema, message))
      case 'ping':
        parseOrThrow(PingMessageSchema, message)
        return this.send({ event: 'pong', ...(req !== undefined ? { req } : {}), time: this.ctx.now() })
      case 'auth': {
        const auth = parseOrThrow(AuthMessageSchema, message)
        const proven = this.handshake.prove(auth.nonce, auth.ed25519_pub, auth.sig)
        return this.send({ event: 'authenticated', ...(req !== undefined ? { req } : {}), ed25519_pub: proven })
      }
      default:
        throw new KithError('BAD_REQUEST', `unknown op "${op}"; expected one of ${CLIENT_OPS.join(', ')}`)
    }
  }

  private subscribe (req: string | undefined, topic: Topic): void {
    const identity = this.handshake.identity
    if (topic.topic === 'typing' && identity === undefined) throw new KithError('UNAUTHORIZED', 'typing subscriptions need a proven key: send auth first')
    if (topic.topic === 'mailbox') this.checkMailboxAccess(topic.pub, identity)
    const key = subscriptionKey(topic, identity)
    if (this.subscriptions.has(key)) throw new KithError('BAD_REQUEST', `already subscribed to ${key}`)
    if (this.subscriptions.size >= this.ctx.limits.maxSubscriptions) throw new KithError('RATE_LIMITED', `at most ${this.ctx.limits.maxSubscriptions} subscriptions per connection`)
    const answer = { event: 'subscribed', ...(req !== undefined ? { req } : {}), topic: topic.topic, key }
    if (topic.topic === 'mailbox' && (topic.since !== undefined || topic.after !== undefined)) {
      this.send(answer)
      void this.replayThenLive(req, key, topic.pub, topic.since ?? 0, topic.after)
      return
    }
    this.ctx.hub.add(key, this)
    this.subscriptions.set(key, this)
    this.send(answer)
  }

  /** Mailbox reads follow SVC_RELAY_READ_AUTH: open by default, otherwise only to a proven key that owns the mailbox. */
  private checkMailboxAccess (pub: string, identity: string | undefined): void {
    const mailbox = this.ctx.mailbox
    if (mailbox === undefined) throw new KithError('RELAY_UNAVAILABLE', 'this node runs no relay mailbox')
    if (!mailbox.requireReadAuth) return
    if (identity === undefined) throw new KithError('UNAUTHORIZED', 'this node requires a proven key to read a mailbox (SVC_RELAY_READ_AUTH): send auth first')
    if (!mailbox.ownsMailbox(identity, pub)) throw new KithError('RELAY_FORBIDDEN', `${identity} is not linked to mailbox ${pub} in the identity registry`)
  }

  /**
   * Listens live first (frames wait in the seam), replays what is stored from (since, after)
   * page by page, then sends the waiting frames the replay did not already send, `caught_up`,
   * and from then on every live frame as it comes.
   */
  private async replayThenLive (req: string | undefined, key: string, pub: string, since: number, after: string | undefined): Promise<void> {
    const mailbox = this.ctx.mailbox as MailboxSource
    const seam = new ReplaySeam(REPLAY_MAX_WAITING)
    const front: Subscriber = {
      deliver: (frame) => {
        const decision = seam.live(frame)
        if (decision === 'send') this.deliver(frame)
        else if (decision === 'overflow') this.close(CLOSE_CODES.SLOW_CONSUMER, 'slow consumer: too many live envelopes during the replay; reconnect with since')
      }
    }
    this.ctx.hub.add(key, front)
    this.subscriptions.set(key, front)
    const stillWanted = (): boolean => !this.closed && this.subscriptions.get(key) === front
    let cursor: { since: number, after: string | undefined } = { since, after }
    try {
      for (;;) {
        const page = mailbox.page(pub, { ...cursor, limit: REPLAY_PAGE })
        for (const item of page.items) {
          if (seam.replay(item.id)) this.deliver(inboxFrame(item, true))
        }
        const last = page.items.at(-1)
        if (!page.hasMore || last === undefined) break
        cursor = { since: last.sent_at, after: last.id }
        if (!await this.drained() || !stillWanted()) return
      }
    } catch (err) {
      if (stillWanted()) {
        this.ctx.hub.remove(key, front)
        this.subscriptions.delete(key)
        this.sendError('subscribe', req, err)
      }
      return
    }
    if (!stillWanted()) return
    const replayed = seam.replayedCount
    for (const frame of seam.finish()) this.deliver(frame)
    this.send({ event: 'caught_up', ...(req !== undefined ? { req } : {}), topic: 'mailbox', pub, replayed })
  }

  /** Waits while the send queue is over half full; false (and the connection closed) when it never drains. */
  private async drained (): Promise<boolean> {
    const deadline = this.ctx.now() + REPLAY_DRAIN_DEADLINE_MS
    while (!this.closed && this.sink.bufferedAmount > this.ctx.limits.maxQueuedBytes / 2) {
      if (this.ctx.now() > deadline) {
        this.close(CLOSE_CODES.SLOW_CONSUMER, 'slow consumer: the mailbox replay could not be sent; reconnect with since')
        return false
      }
      await sleep(10)
    }
    return !this.closed
  }

  private unsubscribe (req: string | undefined, topic: Topic): void {
    const key = subscriptionKey(topic, this.handshake.identity)
    const subscriber = this.subscriptions.get(key)
    if (subscriber === undefined) throw new KithError('NOT_FOUND', `not subscribed to ${key}`)
    this.ctx.hub.remove(key, subscriber)
    this.subscriptions.delete(key)
    this.send({ event: 'unsubscribed', ...(req !== undefined ? { req } : {}), topic: topic.topic, key })
  }

  /** The POST /api/tx path; the outcome, accepted or not, comes back as submit_ack with the transaction's id. */
  private async submitTx (req: string | undefined, tx: unknown): Promise<void> {
    const id = submittedId({ tx })
    const ack = (fields: Omit<SubmitAckEvent, 'event' | 'id'>): void => this.sendAck(req, id, fields)
    if (this.ctx.writesNeedToken && !this.info.tokenAccepted) {
      ack({ status: 'rejected', code: 401, error: 'this node requires the token for submit_tx: open the WebSocket with ?token=<token>' })
      return
    }
    try {
      await this.ctx.submit(tx)
      ack({ status: 'accepted' })
    } catch (err) {
      const { status, error } = this.ctx.describeError(err)
      ack({ status: 'rejected', code: status, error })
    }
  }

  private typing (message: { to: string, state: 'typing' | 'stopped' }): void {
    const from = this.handshake.identity
    if (from === undefined) throw new KithError('UNAUTHORIZED', 'typing is sent as a proven key: send auth first')
    this.ctx.hub.publish(typingKeys(from, message.to), () => typingFrame(from, message.to, message.state))
  }

  private sendAck (req: string | undefined, id: string, fields: Omit<SubmitAckEvent, 'event' | 'id'>): void {
    this.send({ event: 'submit_ack', ...(req !== undefined ? { req } : {}), id, ...fields })
  }

  private send (event: { event: string, [member: string]: unknown }): void {
    this.deliver(Frame.of(event))
  }

  private sendError (op: string | null, req: string | undefined, err: unknown): void {
    const { status, error } = this.ctx.describeError(err)
    const event: ErrorEvent = { event: 'error', op, ...(req !== undefined ? { req } : {}), code: status, error }
    this.send(event)
  }
}

/** The id of the transaction a submit_tx message carries, "" when it has none (what its submit_ack names). */
function submittedId (message: unknown): string {
  const tx = typeof message === 'object' && message !== null ? (message as { tx?: unknown }).tx : undefined
  const id = typeof tx === 'object' && tx !== null ? (tx as { id?: unknown }).id : undefined
  return typeof id === 'string' ? id : ''
}
