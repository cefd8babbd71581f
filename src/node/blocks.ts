/**
 * Blocks at the height being decided: this node's proposals are built here (from the mempool,
 * within a time budget), and every proposed or synced block is checked here against the
 * committed state (header links, time, proposer, the parent's commit certificate, every
 * transaction). Each block built or checked keeps its state writes, so committing it later does
 * not execute it twice.
 */
import type { Logger } from 'pino'
import {
  blockHash as hashBlock, assembleBlock, checkStateless, encodePayload, executeBlock, formatTimestamp, maxBlockTxs, rewardTxId, selectBlockTxs, signTx,
  headerCarriesStateHash, verifyTxSignature, verifyTxSignatureBy, MAX_BLOCK_TXS, type Block, type BlockContext, type CheckedTx, type Genesis, type StateHash, type StateReader,
  type Transaction, type WriteSet
} from '../chain/index.js'
import type { Validator } from '../consensus/index.js'
import type { ContractEngine } from '../contracts/index.js'
import type { KeyPair, VerifyPool } from '../crypto/index.js'
import { KithError } from '../errors/index.js'
import type { Mempool } from '../mempool/index.js'
import type { ChainHead, ChainStore } from '../storage/index.js'
import type { CommitCertificates } from './certificates.js'
import type { Clock } from './clock.js'
import { warmDeploys } from './submission.js'

/** A block this node built or checked, with the state writes that committing it applies. */
export interface ExecutedBlock {
  writes: WriteSet
  stateRoot: string
  /** the state hash after the writes: in the header from the genesis' state_hash_height on, kept by every block */
  stateHash: StateHash
  /** mempool ids the block settles: included or found invalid */
  settled: string[]
}

export interface BlocksDeps {
  store: Pick<ChainStore, 'head' | 'getCommit' | 'stateHashAfter'> & StateReader
  mempool: Pick<Mempool, 'get' | 'take'>
  contracts: ContractEngine
  genesis: Genesis
  validatorKey: KeyPair
  validatorPub: string
  clock: Clock
  certificates: CommitCertificates
  validators: (height: number) => Validator[]
  /** longest a proposer spends building a block (docs/protocol.md § 12) */
  buildBudgetMs: number
  verifyPool?: VerifyPool
  log: Logger
}

/** How far ahead of the local clock a proposed block's time may be. */
export const MAX_BLOCK_TIME_DRIFT_MS = 60_000

export class Blocks {
  /** blocks built or checked at the current height, by hash */
  private readonly executed = new Map<string, ExecutedBlock>()
  /** `${id}|${signature}` of proposed transactions whose signatures the pool verified (preverify) */
  private readonly preverified = new Set<string>()

  constructor (private readonly deps: BlocksDeps) {}

  private head (): ChainHead {
    return this.deps.store.head()
  }

  /** This node's proposal for (height, round), executed. */
  build (height: number, round: number): { block: Block, blockHash: string } {
    const { store, mempool, genesis, clock, validatorPub } = this.deps
    const head = this.head()
    const time = Math.max(clock.now(), head.time + 1)
    const ctx: BlockContext = { height, time, proposer: validatorPub, params: genesis.params, contracts: this.deps.contracts }
    // one slot is kept for the reward where blocks carry one
    const rewarding = genesis.params.block_reward_ut > 0
    const candidates = mempool.take(maxBlockTxs(genesis.params) - (rewarding ? 1 : 0))
    const withReward = candidates.length > 0 && rewarding
    // Every peer re-executes what the proposer executes here, so a block that takes longer than
    // the budget to build would not be checked everywhere within round 0's propose timeout.
    const deadline = performance.now() + this.deps.buildBudgetMs
    const full = (): boolean => performance.now() > deadline
    let selection = selectBlockTxs(store, withReward ? [this.rewardTx(ctx), ...candidates] : candidates, ctx, head.state_root, full)
    // A reward is minted only beside other transactions; if none survived, build without it.
    if (withReward && selection.included.length === 1) selection = selectBlockTxs(store, candidates, ctx, head.state_root, full)
    for (const { tx, error } of selection.rejected) this.deps.log.warn({ txId: tx.id, code: error.code, reason: error.message }, 'dropping transaction that no longer applies')
    const lastCommit = head.height === 0 ? null : (store.getCommit(head.height) ?? null)
    const stateHash = store.stateHashAfter(selection.writes)
    const block = assembleBlock({
      chainId: genesis.chain_id,
      params: genesis.params,
      height,
      time,
      prevHash: head.hash,
      txs: selection.included,
      stateRoot: selection.stateRoot,
      stateHash: stateHash.digest(),
      proposer: validatorPub,
      lastCommit
    })
    const blockHash = hashBlock(block.header)
    this.executed.set(blockHash, {
      writes: selection.writes,
      stateRoot: selection.stateRoot,
      stateHash,
      settled: [...selection.included.map((tx) => tx.id), ...selection.rejected.map(({ tx }) => tx.id)]
    })
    this.deps.log.debug({ height, round, txs: block.txs.length }, 'built block')
    return { block, blockHash }
  }

  private rewardTx (ctx: BlockContext): CheckedTx {
    const tx = signTx({
      id: rewardTxId(ctx.height),
      type: 'BLOCK_REWARD',
      from: this.deps.validatorPub,
      to: '',
      amount: ctx.params.block_reward_ut,
      fee: 0,
      payload: encodePayload({}),
      timestamp: formatTimestamp(ctx.time)
    }, this.deps.validatorKey.secretKey)
    return checkStateless(tx)
  }

  /**
   * Checks a block for the next height against the committed state; throws BLOCK_INVALID (or
   * the rule's error) when it does not apply. `localTime` also refuses a block dated too far
   * ahead of this node's clock (proposals; a synced block is already decided).
   */
  check (block: Block, hash: string, opts: { localTime?: boolean } = {}): ExecutedBlock {
    const cached = this.executed.get(hash)
    if (cached !== undefined) return cached
    const { store, genesis, certificates, validators, mempool } = this.deps
    const head = this.head()
    const { header } = block
    if (hashBlock(header) !== hash) throw new KithError('BLOCK_INVALID', 'block hash does not match its header')
    if (header.height !== head.height + 1) throw new KithError('BLOCK_INVALID', `block height ${header.height} does not follow ${head.height}`)
    if (header.time <= head.time) throw new KithError('BLOCK_INVALID', 'block time does not increase')
    if (opts.localTime === true && header.time > this.deps.clock.now() + MAX_BLOCK_TIME_DRIFT_MS) throw new KithError('BLOCK_INVALID', 'block time is too far in the future')
    if (!validators(header.height).some((v) => v.pub_key === header.proposer)) throw new KithError('BLOCK_INVALID', 'block proposer is not a validator')
    if (head.height === 0) {
      if (block.last_commit !== null) throw new KithError('BLOCK_INVALID', 'the first block carries no last commit')
    } else if (block.last_commit === null || block.last_commit.block_hash !== head.hash || block.last_commit.height !== head.height ||
      !certificates.isValid(block.last_commit, validators(head.height))) {
      throw new KithError('BLOCK_INVALID', 'block does not carry a valid commit certificate for its parent')
    }
    const execution = executeBlock(store, block, {
      params: genesis.params,
      chainId: genesis.chain_id,
      prevHash: head.hash,
      prevStateRoot: head.state_root,
      contracts: this.deps.contracts,
      checkSignature: (tx) => mempool.get(tx.id)?.signature === tx.signature || this.preverified.has(`${tx.id}|${tx.signature}`) || verifyTxSignature(tx)
    })
    const stateHash = store.stateHashAfter(execution.writes)
    if (headerCarriesStateHash(genesis.params, header.height)) {
      if (header.state_hash !== stateHash.digest()) throw new KithError('BLOCK_INVALID', `block ${header.height} state_hash does not match its execution`)
    } else if (header.state_hash !== undefined) {
      throw new KithError('BLOCK_INVALID', `block ${header.height} carries a state_hash before the chain's state_hash_height`)
    }
    const executed = { writes: execution.writes, stateRoot: execution.stateRoot, stateHash, settled: block.txs.map((tx) => tx.id) }
    this.executed.set(hash, executed)
    return executed
  }

  /**
   * Verifies on the worker pool the signatures of those of `txs` this node does not hold (gossip
   * lost them, or dropped them while the node was busy), so that checking the block does not
   * verify them one by one on the event loop, where consensus waits for it.
   */
  async preverify (txs: readonly Transaction[]): Promise<void> {
    // and prepares its deploys off the main thread, so that checking it finds them ready
    await warmDeploys(this.deps.contracts, this.deps.store, txs)
    const pool = this.deps.verifyPool
    if (pool === undefined) return
    const unheld = txs.filter((tx) => this.deps.mempool.get(tx.id)?.signature !== tx.signature && !this.preverified.has(`${tx.id}|${tx.signature}`))
    const results = await Promise.all(unheld.map(async (tx) => await verifyTxSignatureBy(pool.verify, tx)))
    // bounded: a few proposals' worth at most, emptied at every commit
    if (this.preverified.size > 4 * MAX_BLOCK_TXS) this.preverified.clear()
    unheld.forEach((tx, i) => { if (results[i]) this.preverified.add(`${tx.id}|${tx.signature}`) })
  }

  /** Forgets the height's blocks once one of them (or a synced one) is committed. */
  clear (): void {
    this.executed.clear()
    this.preverified.clear()
  }
}
