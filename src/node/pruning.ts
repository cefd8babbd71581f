/**
 * `--prune-keep-blocks N`: keeps the transactions of the newest N blocks and drops older ones,
 * behind the commit path. Each batch is one store transaction of a few blocks (at most a few
 * thousand deletions), so a node that starts pruning a long chain catches up batch by batch
 * without holding the event loop; consensus commits go on in between.
 */
import type { Logger } from 'pino'
import type { ChainStore } from '../storage/index.js'

/** Heights per store transaction: at most 8 × 2,500 transactions, tens of milliseconds. */
export const PRUNE_HEIGHTS_PER_BATCH = 8

export class Pruner {
  private running: Promise<void> | undefined
  private stopped = false

  constructor (
    private readonly store: Pick<ChainStore, 'prune' | 'earliestBody' | 'head'>,
    private readonly keepBlocks: number,
    private readonly log: Logger
  ) {}

  /** After a commit: starts pruning up to the new bound unless a run is under way (it will get there). */
  afterCommit (): void {
    if (this.keepBlocks === 0 || this.running !== undefined || this.stopped || this.behind() <= 0) return
    this.running = this.run().finally(() => { this.running = undefined })
  }

  /** Waits for the batch in progress; no batch starts afterwards. */
  async stop (): Promise<void> {
    this.stopped = true
    await this.running
  }

  private keepFrom (): number {
    return this.store.head().height - this.keepBlocks + 1
  }

  private behind (): number {
    return this.keepFrom() - this.store.earliestBody()
  }

  private async run (): Promise<void> {
    try {
      while (!this.stopped && this.behind() > 0) {
        await this.store.prune(this.keepFrom(), PRUNE_HEIGHTS_PER_BATCH)
        // the commit path and requests get the thread between batches
        await new Promise((resolve) => setImmediate(resolve))
      }
    } catch (err) {
      // a failed prune loses nothing: the bodies stay and the next commit tries again
      this.log.error({ err }, 'pruning old blocks failed; they are kept')
    }
  }
}
