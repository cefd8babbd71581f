/**
 * Submission: the way into the mempool. A transaction submitted here (POST /api/tx, the
 * WebSocket's submit_tx, relay fees) is checked, answered `accepted` only once it is on disk,
 * and handed to gossip; one that gossip brings is checked alike but held in memory (its own node
 * keeps it on disk). On start-up the persisted mempool is restored.
 */
import type { Logger } from 'pino'
import {
  TransactionSchema, badSignature, checkStateless, checkSubmission, deployToPrepare, sameTx, verifyTxSignatureBy,
  MAX_BLOCK_TXS, type BlockContext, type CheckedTx, type StateReader, type Transaction
} from '../chain/index.js'
import type { ContractEngine } from '../contracts/index.js'
import type { VerifyPool } from '../crypto/index.js'
import { KithError } from '../errors/index.js'
import type { Mempool } from '../mempool/index.js'
import type { ChainStore } from '../storage/index.js'
import { parseOrThrow } from '../validation/index.js'
import type { Clock } from './clock.js'
import type { LagGate } from './lag-gate.js'

export interface SubmitResult {
  id: string
  status: 'accepted'
}

/**
 * A check that only this node can make of a transaction submitted to it (not of gossip or
 * blocks, which every node must judge alike): the feed checks a CREATE_POST against the body
 * published here. Throws a KithError to refuse.
 */
export type SubmissionCheck = (checked: CheckedTx) => void

export interface SubmissionDeps {
  store: Pick<ChainStore, 'getTx' | 'putPending' | 'removePending' | 'pending'> & StateReader
  mempool: Mempool
  contracts: ContractEngine
  clock: Clock
  log: Logger
  /** verifies signatures off the event loop; inline when absent */
  verifyPool?: VerifyPool
  /** sheds admissions while the event loop lags; admits always when absent */
  lagGate?: LagGate
  /** the context a transaction is judged in: the next height, now */
  admissionContext: () => BlockContext
  /** whether the node is fetching blocks it fell behind on */
  isSyncing: () => boolean
  /** hands an accepted transaction to gossip */
  gossip: (tx: Transaction) => void
  /** tells listeners (the WebSocket's pending feed) of every transaction the mempool took */
  admitted: (tx: Transaction) => void
}

/** The admission gate sheds only while at least this many transactions wait (a fifth of a full block). */
const SHED_MIN_PENDING = MAX_BLOCK_TXS / 5

export class Submission {
  private readonly checks: SubmissionCheck[] = []

  constructor (private readonly deps: SubmissionDeps) {}

  /** A transaction as it came (the WebSocket's submit_tx): checked against TransactionSchema, then submitted. */
  async submitTx (raw: unknown): Promise<SubmitResult> {
    return await this.submitParsedTx(parseOrThrow(TransactionSchema, raw, 'TX_MALFORMED'))
  }

  /**
   * A transaction already parsed with TransactionSchema (POST /api/tx parses it at the edge).
   * `signatureValid`: the verdict of an HTTP edge thread that verified the signature already;
   * it stands in for the verify pool at the same point of the checks, so the order of refusals
   * is the same either way.
   */
  async submitParsedTx (tx: Transaction, signatureValid?: boolean): Promise<SubmitResult> {
    const { mempool, store } = this.deps
    const known = mempool.get(tx.id) ?? store.getTx(tx.id)?.tx
    if (known !== undefined) {
      // A byte-identical resubmission (a client retry) is answered as the first one was.
      if (sameTx(known, tx)) return { id: tx.id, status: 'accepted' }
      throw new KithError('TX_DUPLICATE', `duplicate transaction id ${tx.id}`)
    }
    // push back before any signature work: 503 with Retry-After
    this.checkAdmitting()
    mempool.checkRoom(tx)
    try {
      const checked = await this.check(tx, signatureValid)
      for (const check of this.checks) check(checked)
      await this.admit(checked, true)
    } catch (err) {
      // the same transaction may have been admitted while its signature was being checked
      const raced = mempool.get(tx.id)
      if (err instanceof KithError && err.code === 'TX_DUPLICATE' && raced !== undefined && sameTx(raced, tx)) return { id: tx.id, status: 'accepted' }
      throw err
    }
    this.deps.gossip(tx)
    return { id: tx.id, status: 'accepted' }
  }

  /**
   * A transaction another node accepted and gossiped: `false` when this node already has it
   * (pending or committed). Throws what a submission would (a KithError) when it does not apply;
   * a full mempool drops it before any signature work (the sender's node keeps it).
   */
  async admitGossiped (tx: Transaction): Promise<boolean> {
    const { mempool, store } = this.deps
    if (mempool.get(tx.id) !== undefined || store.getTx(tx.id) !== undefined) return false
    mempool.checkRoom(tx)
    await this.admit(await this.check(tx), false)
    return true
  }

  /** Adds a local check to every transaction submitted to this node (POST /api/tx). */
  addCheck (check: SubmissionCheck): void {
    this.checks.push(check)
  }

  /**
   * Throws NODE_BUSY while the event loop lags or the node syncs blocks it fell behind on, and a
   * backlog waits to be committed: consensus gets the thread before new transactions do. Without
   * a backlog there is nothing to protect (a lag at start-up, a slow disk), and the node admits.
   */
  private checkAdmitting (): void {
    const gate = this.deps.lagGate
    // a node catching up on blocks it missed sheds too: it is late to vote and to propose
    if (gate === undefined || this.deps.mempool.size < SHED_MIN_PENDING || (gate.isOpen(Date.now()) && !this.deps.isSyncing())) return
    throw new KithError('NODE_BUSY', 'the node is busy committing blocks; retry later')
  }

  /**
   * The submission checks, with the signature verified on the pool when there is one; then a
   * deploy's module is prepared off the main thread (refusals cached, limited per sender), so the
   * synchronous admission check finds it ready.
   */
  private async check (tx: Transaction, signatureValid?: boolean): Promise<CheckedTx> {
    const checked = signatureValid !== undefined ? checkSubmission(tx, this.deps.clock.now(), () => signatureValid) : await this.checkSigned(tx)
    const code = deployToPrepare(this.deps.store, tx)
    if (code !== undefined) await this.deps.contracts.admitDeploy(code, tx.from)
    return checked
  }

  private async checkSigned (tx: Transaction): Promise<CheckedTx> {
    const { verifyPool: pool, clock } = this.deps
    if (pool === undefined) return checkSubmission(tx, clock.now())
    const checked = checkSubmission(tx, clock.now(), () => true)
    if (!await verifyTxSignatureBy(pool.verify, tx)) throw badSignature()
    return checked
  }

  /**
   * Adds a checked transaction to the mempool and, when `durable`, resolves once it is on disk.
   * A node answers `accepted` only for what it persisted; transactions gossip brings are held in
   * memory (their own node keeps them on disk), which spares every peer a synced write per
   * transaction.
   */
  private async admit (checked: CheckedTx, durable: boolean): Promise<void> {
    const seq = this.deps.mempool.add(checked, this.deps.admissionContext(), undefined, durable)
    if (durable) await this.deps.store.putPending({ seq, tx: checked.tx })
    this.deps.admitted(checked.tx)
  }

  /** Puts the persisted mempool back, dropping (from disk too) what no longer applies. */
  async restore (): Promise<void> {
    const { store, mempool, log } = this.deps
    const invalid: string[] = []
    await warmDeploys(this.deps.contracts, store, store.pending().map(({ tx }) => tx))
    const ctx = this.deps.admissionContext()
    for (const { seq, tx } of store.pending()) {
      try {
        mempool.add(checkStateless(tx), ctx, seq)
      } catch (err) {
        if (!(err instanceof KithError)) throw err
        log.warn({ txId: tx.id, code: err.code, reason: err.message }, 'persisted transaction no longer applies; dropped')
        invalid.push(tx.id)
      }
    }
    await store.removePending(invalid)
    if (mempool.size > 0) log.info({ count: mempool.size }, 'restored mempool')
  }
}

/** Prepares the deploys among `txs` off the main thread; one its rule refuses is refused again when applied. */
export async function warmDeploys (contracts: ContractEngine, state: StateReader, txs: readonly Transaction[]): Promise<void> {
  await contracts.warmDeploys(txs.flatMap((tx) => {
    try {
      return deployToPrepare(state, tx) ?? []
    } catch {
      return []
    }
  }))
}
