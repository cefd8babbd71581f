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
 * so the guard steps aside and says which heights its old store may have signed. It cannot see
 * other validators waiting too (restored at the same time): when nothing is committed for twice
 * the margin, it says so, and `--restore-guard false` is the operator's way out.
 */
import type { Logger } from 'pino'
import type { Validator } from '../consensus/index.js'
import type { ChainStore } from '../storage/index.js'
import { MAX_BLOCK_TIME_DRIFT_MS } from './blocks.js'

export interface RestoreGuardOptions {
  /** false: the operator's `--restore-guard false`; the mark is cleared and the validator signs at once */
  enabled?: boolean
  /** the wait past the start; default the block-time drift (tests shorten it) */
  marginMs?: number
}

export class RestoreGuard {
  /** prevBlockTime must exceed this for this validator to sign; undefined once it may sign */
  private signsAfter: number | undefined
  private warnedNeeded = false
  private stuckTimer: NodeJS.Timeout | undefined

  constructor (
    private readonly store: Pick<ChainStore, 'restoredAt' | 'signedSinceRestore'>,
    private readonly self: string,
    now: number,
    private readonly log: Logger,
    opts: RestoreGuardOptions = {}
  ) {
    const restoredAt = store.restoredAt()
    if (restoredAt === undefined) return
    if (opts.enabled === false) {
      this.log.warn({ restored_at: restoredAt }, 'this store was restored from a snapshot and --restore-guard is false: as a validator it signs at once')
      this.store.signedSinceRestore().catch((err: unknown) => { this.log.warn({ err }, 'could not clear the restore mark') })
      return
    }
    this.signsAfter = now + (opts.marginMs ?? MAX_BLOCK_TIME_DRIFT_MS)
    this.log.warn({ restored_at: restoredAt, signs_after: new Date(this.signsAfter).toISOString() },
      'this store was restored from a snapshot: as a validator it signs nothing until the chain commits a block later than signs_after (its old store may have signed at heights in progress)')
    // The others may not commit without it after all (other validators restored at once, or down):
    // then only the operator can tell whether its old store signed, and the log says so.
    const waitedMs = 2 * (this.signsAfter - now)
    this.stuckTimer = setTimeout(() => {
      if (this.signsAfter === undefined) return
      this.log.error({ restored_at: restoredAt, waited_s: Math.round(waitedMs / 1000) },
        'restored validator still waits: the chain has committed no block later than signs_after. If it cannot commit without this validator (others restored too, or down), restart it with --restore-guard false once sure its old store signed nothing past restored_at')
    }, waitedMs)
    this.stuckTimer.unref()
  }

  stop (): void {
    clearTimeout(this.stuckTimer)
  }

  /** Whether this node must not sign at `height`, whose previous block has time `prevBlockTime`. */
  abstainAt (height: number, prevBlockTime: number, validators: readonly Validator[]): boolean {
    if (this.signsAfter === undefined) return false
    const own = validators.find((v) => v.pub_key === this.self)?.power ?? 0
    if (own === 0) return false
    if (prevBlockTime > this.signsAfter) {
      this.signsAfter = undefined
      clearTimeout(this.stuckTimer)
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
