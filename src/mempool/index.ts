/**
 * The mempool: bounded, in admission order, duplicate-free. It keeps an overlay of the
 * committed state with every pending transaction applied, so a transaction is admitted only
 * if it would apply after all those before it: `accepted` means it will fit in a block.
 * Pure bookkeeping; persisting entries is the node's job.
 *
 * Bounded to a few blocks' worth in transactions and in bytes, and per sender, so that under
 * overload the node pushes back (503 with Retry-After, before any signature work: `checkRoom`)
 * instead of growing a backlog that the chain then cannot commit in time, and one sender cannot
 * take the room of everyone else.
 */
import { KithError } from '../errors/index.js'
import {
  MAX_BLOCK_BYTES, MAX_BLOCK_TXS, StateOverlay, tryApplyTx, txSize, type BlockContext, type CheckedTx, type StateReader, type Transaction
} from '../chain/index.js'

export interface MempoolOptions {
  /** transactions it holds at most */
  maxTxs: number
  /** bytes (as blocks count them: txSize) it holds at most */
  maxBytes: number
  /** pending transactions of one sender (`from`) at most */
  maxPerSender: number
}

/** Four full blocks, and a sender's share of one block. */
export const DEFAULT_MEMPOOL_OPTIONS: MempoolOptions = { maxTxs: 4 * MAX_BLOCK_TXS, maxBytes: 4 * MAX_BLOCK_BYTES, maxPerSender: MAX_BLOCK_TXS / 5 }

interface Entry {
  seq: number
  checked: CheckedTx
  size: number
  /** persisted by this node (it answered `accepted` for it, or restored it); false for gossip */
  durable: boolean
}

export class Mempool {
  private readonly entries = new Map<string, Entry>()
  private overlay: StateOverlay
  private nextSeq = 1
  private bytes = 0
  private readonly bySender = new Map<string, number>()

  private readonly opts: MempoolOptions

  constructor (base: StateReader, opts: Partial<MempoolOptions> = {}) {
    this.opts = { ...DEFAULT_MEMPOOL_OPTIONS, ...opts }
    this.overlay = new StateOverlay(base)
  }

  /** The bounds it enforces (GET /api/limits publishes them). */
  get bounds (): Readonly<MempoolOptions> {
    return this.opts
  }

  get size (): number {
    return this.entries.size
  }

  /** Bytes of the pending transactions. */
  get sizeBytes (): number {
    return this.bytes
  }

  get (id: string): Transaction | undefined {
    return this.entries.get(id)?.checked.tx
  }

  /** Throws MEMPOOL_FULL when `tx` would not fit: cheap, so it runs before the signature is checked. */
  checkRoom (tx: Transaction, size = txSize(tx)): void {
    if (this.entries.size >= this.opts.maxTxs || this.bytes + size > this.opts.maxBytes) {
      throw new KithError('MEMPOOL_FULL', `mempool is full (${this.entries.size} transactions, ${this.bytes} bytes pending); retry later`)
    }
    const mine = this.bySender.get(tx.from) ?? 0
    if (mine >= this.opts.maxPerSender) {
      throw new KithError('MEMPOOL_FULL', `sender ${tx.from} already has ${mine} transactions pending, its share of the mempool; retry once some are confirmed`)
    }
  }

  /**
   * Admits a checked transaction or throws the reason it cannot apply. Returns its sequence
   * number. A transaction restored from disk (`seq` given) was accepted before: it is kept even
   * past the bounds, which may have been lowered since.
   */
  add (checked: CheckedTx, ctx: BlockContext, seq?: number, durable = true): number {
    const { tx } = checked
    if (this.entries.has(tx.id)) throw new KithError('TX_DUPLICATE', `duplicate transaction id ${tx.id}`)
    const size = txSize(tx)
    if (seq === undefined) this.checkRoom(tx, size)
    const error = tryApplyTx(this.overlay, checked, ctx)
    if (error !== undefined) throw error
    const assigned = seq ?? this.nextSeq
    this.nextSeq = Math.max(this.nextSeq, assigned + 1)
    this.entries.set(tx.id, { seq: assigned, checked, size, durable })
    this.bytes += size
    this.bySender.set(tx.from, (this.bySender.get(tx.from) ?? 0) + 1)
    return assigned
  }

  /** A transaction held only in memory: gossip brought it and its own node keeps it on disk. */
  isVolatile (id: string): boolean {
    return this.entries.get(id)?.durable === false
  }

  private drop (id: string): Entry | undefined {
    const entry = this.entries.get(id)
    if (entry === undefined) return undefined
    this.entries.delete(id)
    this.bytes -= entry.size
    const from = entry.checked.tx.from
    const left = (this.bySender.get(from) ?? 1) - 1
    if (left === 0) this.bySender.delete(from)
    else this.bySender.set(from, left)
    return entry
  }

  /** The first `max` transactions in admission order. */
  take (max: number): CheckedTx[] {
    const out: CheckedTx[] = []
    for (const entry of this.entries.values()) {
      if (out.length >= max) break
      out.push(entry.checked)
    }
    return out
  }

  /**
   * After a block: drops `ids`, then replays the rest over the new committed state and
   * returns those that no longer apply (they are dropped too).
   */
  rebase (base: StateReader, ids: Iterable<string>, ctx: BlockContext): Array<{ tx: Transaction, error: KithError }> {
    for (const id of ids) this.drop(id)
    this.overlay = new StateOverlay(base)
    const dropped: Array<{ tx: Transaction, error: KithError }> = []
    for (const [id, entry] of this.entries) {
      const error = tryApplyTx(this.overlay, entry.checked, ctx)
      if (error !== undefined) {
        this.drop(id)
        dropped.push({ tx: entry.checked.tx, error })
      }
    }
    return dropped
  }
}
