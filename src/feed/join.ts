/**
 * Where the feed joins a node, in its two phases: publish (a CREATE_POST submitted to this node
 * must match the body published here: a submission check) and commit (every committed block
 * brings the indexes and the body store up to date). The feed sees the node only through
 * `FeedHost`, so it does not import src/node.
 */
import type { Logger } from 'pino'
import type { CheckedTx, Transaction } from '../chain/index.js'
import type { FeedService } from './service.js'

/** What the feed needs of the node it joins: a submission check and the committed blocks. */
export interface FeedHost {
  addSubmissionCheck (check: (checked: CheckedTx) => void): void
  readonly events: { on (event: 'block', listener: (summary: unknown, txs: Transaction[]) => void): unknown }
}

/** Joins `feed` to `node`: phase 1, publish (submission check); phase 2, CREATE_POST commit (applyBlock). */
export function joinFeed (feed: FeedService, node: FeedHost, logger: Logger): void {
  node.addSubmissionCheck((checked) => feed.checkSubmission(checked))
  node.events.on('block', (_summary, txs) => { feed.applyBlock(txs).catch((err: unknown) => logger.error({ err }, 'feed: applying a block failed')) })
}
