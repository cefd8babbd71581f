/**
 * A validator whose store was restored from a snapshot (`kith snapshot import` or `--state-sync`)
 * has lost its record of what it signed: its old store may have voted at a height that is still
 * in progress, and voting again there could sign a second value for the same step (equivocation).
 *
 * So it signs nothing at a height whose previous block is not later than its own start plus the
 * drift a block's time may have (MAX_BLOCK_TIME_DRIFT_MS). Honest validators accept no block time
 * further ahead of their clocks than that, so such a block was made after this process started,
 * that is after the old store was gone, and the old store never reached the height it opens.
 * Meanwhile it follows as a non-validator would. The first height it signs at clears the mark.
 *
 * The wait costs the chain nothing only while the other validators can commit without this one
 * (more than two thirds of the power). When they cannot, waiting would stop the chain for good,
 * so the guard steps aside and says which heights its old store may have signed.
 */
import type { Logger } from 'pino'
import type { Validator } from '../consensus/index.js'
import type { ChainStore } from '../storage/index.js'
import { MAX_BLOCK_TIME_DRIFT_MS } from './blocks.js'
import { restoreGuardMsFromEnv } from './faults.js'

export class RestoreGuard {
  /** prevBlockTime must exceed this for this validator to sign; undefined once it may sign */
  private signsAfter: number | undefined
  private warnedNeeded = false

  constructor (private readonly store: Pick<ChainStore, 'restoredAt' | 'signedSinceRestore'>, private readonly self: string, now: number, private readonly log: Logger) {
    const restoredAt = store.restoredAt()
    if (restoredAt === undefined) return
    this.signsAfter = now + (restoreGuardMsFromEnv() ?? MAX_BLOCK_TIME_DRIFT_MS)
    this.log.warn({ restored_at: restoredAt, signs_after: new Date(this.signsAfter).toISOString() },
      'this store was restored from a snapshot: as a validator it signs nothing until the chain commits a block later than signs_after (its old store may have signed at heights in progress)')
  }

  /** Whether this node must not sign at `height`, whose previous block has time `prevBlockTime`. */
  abstainAt (height: number, prevBlockTime: number, validators: readonly Validator[]): boolean {
    if (this.signsAfter === undefined) return false
    const own = validators.find((v) => v.pub_key === this.self)?.power ?? 0
    if (own === 0) return false
    if (prevBlockTime > this.signsAfter) {
      this.signsAfter = undefined
      this.log.info({ height }, 'restored validator signs again: this height began after it started')
      this.store.signedSinceRestore().catch((err: unknown) => { this.log.warn({ err }, 'could not clear the restore mark; the next start waits again') })
      return false
    }
    const total = validators.reduce((sum, v) => sum + v.power, 0)
    if ((total - own) * 3 > total * 2) return true
    if (!this.warnedNeeded) {
      this.warnedNeeded = true
      this.log.error({ height, restored_at: this.store.restoredAt() },
        'restored validator signs now: the other validators cannot commit without it, so waiting would stop the chain; if its old store signed at this height or later it may sign twice (restore validators as followers first, docs/operating.md)')
    }
    return false
  }
}
