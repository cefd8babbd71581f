/**
 * Paid envelopes, the relay's side (docs/relay.md "Paid envelopes"). On upload, `check` verifies
 * that the sender authorised this relay to collect `fee_ut` and can pay it, then records the
 * claim durably before the broadcast is answered. A background loop turns each claim into a
 * RELAY_PROOF transaction signed with the relay's key (the node's account key) and submits it
 * through the node's own submit path; the chain collects each fee at most once
 * (`relayproof:<envelope_id>`), and a claim leaves the queue once the chain has collected it or
 * says it never can.
 *
 * The queue has its own lmdb environment, `<dataDir>/relay-fees`: it is tiny and must not wait
 * behind mailbox traffic, and the mailbox store's environment is private to its files (store*.ts).
 */
import { join } from 'node:path'
import { open, type Database, type RootDatabase } from 'lmdb'
import type { Logger } from 'pino'
import { MIN_FEE, Registry, StateKeys, accountFrom, buildTx, relayFeeText, type Account, type StateReader } from '../chain/index.js'
import { fromBase64, verify, type KeyPair } from '../crypto/index.js'
import { KithError, type ErrorCode } from '../errors/index.js'
import type { Envelope } from './envelope.js'

/** How often the collector looks at the queue. */
export const DEFAULT_COLLECT_INTERVAL_MS = 2000

/** What a sender authorised: the RELAY_PROOF payload. */
export interface FeeClaim {
  envelope_id: string
  fee_ut: number
  fee_sig: string
  sender_ed25519_pub: string
}

interface QueuedClaim extends FeeClaim {
  /** the RELAY_PROOF last submitted for it: while that waits in the mempool, no second one is sent */
  tx_id?: string
}

/** The parts of the node the relay uses (KithNode has them): committed state and the submit path. */
export interface FeeNode {
  /** the committed state (ChainView.state) */
  readonly state: StateReader
  lookupTx (id: string): unknown
  submitTx (tx: unknown): Promise<unknown>
}

export interface RelayFeesOptions {
  /** the queue lives in `<dataDir>/relay-fees` */
  dataDir: string
  /** the relay identity: the node's account key (validator_key.json) */
  relayKey: KeyPair
  node: FeeNode
  logger: Logger
  clock?: { now (): number }
  intervalMs?: number
  /** fsync on commit (default true) */
  sync?: boolean
}

function payloadOf ({ envelope_id, fee_ut, fee_sig, sender_ed25519_pub }: FeeClaim): FeeClaim {
  return { envelope_id, fee_ut, fee_sig, sender_ed25519_pub }
}

/** Submission errors after which a RELAY_PROOF can never apply (a bad or spent fee_sig). */
/** Refusals a later try cannot change: the proof, its envelope or its sender is wrong for good. */
const HOPELESS: ReadonlySet<string> = new Set<ErrorCode>(['TX_INVALID', 'TX_MALFORMED', 'TX_BAD_SIGNATURE', 'TX_BAD_FIELD', 'TX_CONFLICT', 'TX_UNKNOWN_TARGET', 'TX_NOT_ALLOWED'])

export class RelayFees {
  readonly relayPub: string
  private readonly account: Account
  private readonly node: FeeNode
  private readonly log: Logger
  private readonly clock: { now (): number }
  private readonly intervalMs: number
  private readonly root: RootDatabase
  private readonly db: Database<QueuedClaim, string>
  /** the queue in memory (the source for decisions; lmdb is for durability), by envelope id */
  private readonly queue = new Map<string, QueuedClaim>()
  /** µT queued per sender, so one balance cannot back more fees than it holds */
  private readonly owed = new Map<string, number>()
  /** conditions already logged, so a stuck queue logs once, not every pass */
  private readonly warned = new Set<string>()
  private holds: (envelopeId: string) => boolean = () => true
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private stopped = false

  private constructor (opts: RelayFeesOptions) {
    this.account = accountFrom(opts.relayKey)
    this.relayPub = this.account.pub
    this.node = opts.node
    this.log = opts.logger.child({ module: 'relay-fees' })
    this.clock = opts.clock ?? { now: Date.now }
    this.intervalMs = opts.intervalMs ?? DEFAULT_COLLECT_INTERVAL_MS
    this.root = open({ path: join(opts.dataDir, 'relay-fees'), compression: false, noSync: opts.sync === false, mapSize: 2 ** 30 })
    this.db = this.root.openDB({ name: 'claims' })
    for (const { value } of this.db.getRange()) this.remember(value)
  }

  static open (opts: RelayFeesOptions): RelayFees {
    return new RelayFees(opts)
  }

  /** The claims not yet collected (or given up). */
  claims (): FeeClaim[] {
    return [...this.queue.values()].map(payloadOf)
  }

  /**
   * RelayServiceOptions.feeCheck: a paid envelope (`fee_ut > 0`) must carry the sender's
   * signature naming this relay, and the sender must hold the fee beside those still queued
   * from it. Resolves once the claim is on disk, so an answered broadcast's fee survives kill -9.
   */
  readonly check = async (envelope: Envelope): Promise<void> => {
    const { id, fee_ut: fee, fee_sig: sig, sender_ed25519_pub: sender } = envelope
    if (fee === 0) return
    const text = relayFeeText(id, fee, this.relayPub)
    if (sender === '') throw new KithError('RELAY_FEE_REFUSED', `envelope.fee_sig: a paid envelope (fee_ut > 0) needs sender_ed25519_pub, the key that signs "${text}"`)
    const signature = sig === null ? undefined : fromBase64(sig)
    if (signature === undefined || !verify(Buffer.from(text, 'utf8'), signature, Buffer.from(sender, 'hex'))) {
      throw new KithError('RELAY_FEE_REFUSED', `envelope.fee_sig: must be sender_ed25519_pub's Ed25519 signature over "${text}"`)
    }
    // a retried upload: its fee is already collected, or queued (on disk once `flushed` resolves)
    if (this.isCollected(id)) return
    if (this.queue.has(id)) {
      await this.root.flushed
      return
    }
    const balance = this.balance(sender)
    const owed = this.owed.get(sender) ?? 0
    if (balance < owed + fee) {
      throw new KithError('RELAY_FEE_REFUSED', `sender ${sender} holds ${balance} µT, which does not cover fee_ut ${fee}` +
        (owed > 0 ? ` beside ${owed} µT of fees this relay has yet to collect from it` : ''))
    }
    const claim = { envelope_id: id, fee_ut: fee, fee_sig: sig as string, sender_ed25519_pub: sender }
    try {
      await this.save(claim)
    } catch (err) {
      this.forget(claim)
      throw err
    }
  }

  /**
   * Starts the collector. `holds(id)` says whether the relay stored the envelope: a claim for an
   * envelope the mailbox refused after the check (full, rate-limited) is dropped, not charged.
   */
  start (holds: (envelopeId: string) => boolean): void {
    this.holds = holds
    if (this.timer !== undefined) return
    this.stopped = false
    this.timer = setInterval(() => { void this.collect() }, this.intervalMs)
    this.timer.unref()
  }

  async stop (): Promise<void> {
    this.stopped = true
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
    await this.running
    await this.root.flushed
    await this.root.close()
  }

  /** One pass over the queue; a pass already under way is joined, not doubled. */
  async collect (): Promise<void> {
    this.running ??= this.pass().catch((err: unknown) => { this.log.error({ err }, 'relay fee collection failed') })
      .finally(() => { this.running = undefined })
    await this.running
  }

  private async pass (): Promise<void> {
    if (this.queue.size === 0) return
    // RELAY_PROOF applies only from a registered relay that can pay its transaction fee
    if (Registry.relay(this.node.state, this.relayPub) === undefined) {
      this.warnOnce('unregistered', `this node's key ${this.relayPub} is not a registered relay, so ${this.queue.size} paid envelope fee(s) wait uncollected; submit REGISTER_RELAY from it (docs/relay.md)`)
      return
    }
    if (this.balance(this.relayPub) < MIN_FEE) {
      this.warnOnce('unfunded', `the relay account ${this.relayPub} holds less than the ${MIN_FEE} µT fee of a RELAY_PROOF, so ${this.queue.size} fee(s) wait uncollected; fund it`)
      return
    }
    this.warned.clear()
    for (const claim of [...this.queue.values()]) {
      if (this.stopped) return
      await this.collectOne(claim)
    }
  }

  private async collectOne (claim: QueuedClaim): Promise<void> {
    const id = claim.envelope_id
    if (this.isCollected(id)) {
      this.log.info({ envelopeId: id, feeUt: claim.fee_ut, sender: claim.sender_ed25519_pub, txId: claim.tx_id }, 'relay fee collected')
      return await this.drop(claim)
    }
    if (claim.tx_id !== undefined && this.node.lookupTx(claim.tx_id) !== undefined) return // still in the mempool
    if (!this.holds(id)) {
      this.log.warn({ envelopeId: id }, 'relay fee dropped: the mailbox does not hold this envelope (refused after the fee check, or expired before collection)')
      return await this.drop(claim)
    }
    const now = this.clock.now()
    // the envelope id keeps proofs apart from other node-submitted ids (tx-…, reward-…); the time keeps retries apart
    const tx = buildTx(this.account, { type: 'RELAY_PROOF', id: `relayproof-${id}-${now}`, payload: payloadOf(claim), time: now })
    // recorded before submitting: after a crash the node finds it pending rather than sending a second
    await this.save({ ...claim, tx_id: tx.id })
    try {
      await this.node.submitTx(tx)
      this.log.debug({ envelopeId: id, txId: tx.id }, 'RELAY_PROOF submitted')
    } catch (err) {
      if (!(err instanceof KithError)) throw err
      const senderBroke = err.code === 'TX_INSUFFICIENT_FUNDS' && this.balance(claim.sender_ed25519_pub) < claim.fee_ut
      if (!HOPELESS.has(err.code) && !senderBroke) {
        this.log.warn({ envelopeId: id, code: err.code, reason: err.message }, 'RELAY_PROOF not accepted now; retrying later')
        return
      }
      this.log.warn({ envelopeId: id, code: err.code, reason: err.message }, 'relay fee dropped: the chain will never collect it')
      await this.drop(claim)
    }
  }

  private isCollected (envelopeId: string): boolean {
    return this.node.state.get(StateKeys.relayProof(envelopeId)) !== undefined
  }

  private balance (pub: string): number {
    const value = this.node.state.get(StateKeys.balance(pub))
    return typeof value === 'number' ? value : 0
  }

  private remember (claim: QueuedClaim): void {
    const known = this.queue.get(claim.envelope_id)
    if (known === undefined) this.owed.set(claim.sender_ed25519_pub, (this.owed.get(claim.sender_ed25519_pub) ?? 0) + claim.fee_ut)
    this.queue.set(claim.envelope_id, claim)
  }

  private forget (claim: QueuedClaim): void {
    if (!this.queue.delete(claim.envelope_id)) return
    const owed = (this.owed.get(claim.sender_ed25519_pub) ?? 0) - claim.fee_ut
    if (owed > 0) this.owed.set(claim.sender_ed25519_pub, owed)
    else this.owed.delete(claim.sender_ed25519_pub)
  }

  /** Remembered first, so a concurrent upload of the same sender already counts this fee. */
  private async save (claim: QueuedClaim): Promise<void> {
    this.remember(claim)
    await this.db.put(claim.envelope_id, claim)
    await this.root.flushed
  }

  private async drop (claim: QueuedClaim): Promise<void> {
    this.forget(claim)
    await this.db.remove(claim.envelope_id)
  }

  private warnOnce (key: string, message: string): void {
    if (this.warned.has(key)) return
    this.warned.add(key)
    this.log.warn(message)
  }
}
