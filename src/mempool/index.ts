/**
 * The mempool: bounded, in admission order, duplicate-free. It keeps an overlay of the
 * committed state with every pending transaction applied, so a transaction is admitted only
 * if it would apply after all those before it: `accepted` means it will fit in a block.
 * Pure bookkeeping; persisting entries is the node's job.
 */
import { KithError } from '../errors.js'
import { StateOverlay, tryApplyTx, type BlockContext, type CheckedTx, type StateReader, type Transaction } from '../chain/index.js'

export interface MempoolOptions {
  maxTxs: number
}

export const DEFAULT_MEMPOOL_OPTIONS: MempoolOptions = { maxTxs: 200_000 }

interface Entry {
  seq: number
  checked: CheckedTx
}

export class Mempool {
  private readonly entries = new Map<string, Entry>()
  private overlay: StateOverlay
  private nextSeq = 1

  constructor (base: StateReader, private readonly opts: MempoolOptions = DEFAULT_MEMPOOL_OPTIONS) {
    this.overlay = new StateOverlay(base)
  }

  get size (): number {
    return this.entries.size
  }

  get (id: string): Transaction | undefined {
    return this.entries.get(id)?.checked.tx
  }

  /** Admits a checked transaction or throws the reason it cannot apply. Returns its sequence number. */
  add (checked: CheckedTx, ctx: BlockContext, seq?: number): number {
    if (this.entries.has(checked.tx.id)) throw new KithError('TX_DUPLICATE', `duplicate transaction id ${checked.tx.id}`)
    if (this.entries.size >= this.opts.maxTxs) throw new KithError('MEMPOOL_FULL', 'mempool is full; retry later')
    const error = tryApplyTx(this.overlay, checked, ctx)
    if (error !== undefined) throw error
    const assigned = seq ?? this.nextSeq
    this.nextSeq = Math.max(this.nextSeq, assigned + 1)
    this.entries.set(checked.tx.id, { seq: assigned, checked })
    return assigned
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
    for (const id of ids) this.entries.delete(id)
    this.overlay = new StateOverlay(base)
    const dropped: Array<{ tx: Transaction, error: KithError }> = []
    for (const [id, entry] of this.entries) {
      const error = tryApplyTx(this.overlay, entry.checked, ctx)
      if (error !== undefined) {
        this.entries.delete(id)
        dropped.push({ tx: entry.checked.tx, error })
      }
    }
    return dropped
  }
}
