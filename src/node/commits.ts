/**
 * Commits: a block consensus decided, or one block sync brought with its certificate, becomes
 * the new head. Commits run one at a time (consensus and sync may both hold the same height);
 * each writes the block, its state writes and the mempool's settled transactions in one store
 * transaction, then rebases the mempool and tells listeners (the feed, metrics, WebSockets).
 */
import type { EventEmitter } from 'node:events'
import type { Logger } from 'pino'
import type { Block, BlockContext, Commit, Transaction } from '../chain/index.js'
import type { Validator } from '../consensus/index.js'
import { KithError } from '../errors/index.js'
import type { Mempool } from '../mempool/index.js'
import type { BlockSummary, ChainStore } from '../storage/index.js'
import type { Blocks } from './blocks.js'
import type { CommitCertificates } from './certificates.js'
import { crashIfAt } from './faults.js'

export interface NodeEvents {
  block: [summary: BlockSummary, txs: Transaction[], commit: Commit]
  tx: [tx: Transaction]
}

export interface CommitsDeps {
  store: Pick<ChainStore, 'head' | 'commitBlock' | 'removePending' | 'getBlockSummary'> & Parameters<Mempool['rebase']>[0]
  mempool: Pick<Mempool, 'isVolatile' | 'rebase'>
  blocks: Pick<Blocks, 'check' | 'clear'>
  certificates: CommitCertificates
  validators: (height: number) => Validator[]
  admissionContext: () => BlockContext
  events: EventEmitter<NodeEvents>
  /** a synced block moved the head: consensus starts the next height */
  afterSyncedCommit: () => void
  /** awaited after each commit, before the next may start (a snapshot pins its view of this height) */
  afterCommit?: (height: number) => Promise<void>
  log: Logger
}

export class Commits {
  /** serialises commits from consensus and from block sync */
  private chain: Promise<void> = Promise.resolve()

  constructor (private readonly deps: CommitsDeps) {}

  /** A block consensus decided: commit it unless block sync already did. */
  async commitDecided (block: Block, hash: string, commit: Commit): Promise<void> {
    await this.commitSerial(block, hash, commit, false)
  }

  /** A block from block sync, with its certificate: checked in full, then committed. */
  async commitSynced (block: Block, hash: string, commit: Commit): Promise<boolean> {
    return await this.commitSerial(block, hash, commit, true)
  }

  /** Resolves once the commit under way (if any) has ended. */
  async settled (): Promise<void> {
    await this.chain
  }

  private async commitSerial (block: Block, hash: string, commit: Commit, fromSync: boolean): Promise<boolean> {
    const { store, mempool, blocks, log } = this.deps
    let committed = false
    const run = this.chain.then(async () => {
      if (block.header.height !== store.head().height + 1) return
      if (fromSync) {
        if (commit.block_hash !== hash || commit.height !== block.header.height || !this.deps.certificates.isValid(commit, this.deps.validators(block.header.height))) {
          throw new KithError('BLOCK_INVALID', `synced block ${block.header.height} lacks a valid commit certificate`)
        }
      }
      const executed = blocks.check(block, hash)
      await store.commitBlock({
        block, hash, commit, writes: executed.writes, stateRoot: executed.stateRoot, stateHash: executed.stateHash, removePending: executed.settled.filter((id) => !mempool.isVolatile(id))
      })
      blocks.clear()
      committed = true
      await this.deps.afterCommit?.(block.header.height)
      const dropped = mempool.rebase(store, executed.settled, this.deps.admissionContext())
      if (dropped.length > 0) {
        for (const { tx, error } of dropped) log.warn({ txId: tx.id, code: error.code, reason: error.message }, 'dropping transaction that no longer applies')
        await store.removePending(dropped.map(({ tx }) => tx.id))
      }
      const summary = store.getBlockSummary(block.header.height) as BlockSummary
      log.debug({ height: summary.height, txs: summary.tx_count, fromSync }, 'block committed')
      this.deps.events.emit('block', summary, block.txs, commit)
      if (fromSync) {
        crashIfAt('after-sync-commit')
        this.deps.afterSyncedCommit()
      }
    })
    this.chain = run.catch(() => {})
    await run
    return committed
  }
}
