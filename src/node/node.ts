/**
 * KithNode: the node's local view and its write path. It owns the store, the mempool and the
 * consensus driver, and offers the operations the API adapter exposes. Time comes from an
 * injected clock.
 */
import { EventEmitter } from 'node:events'
import type { Logger } from 'pino'
import {
  StateKeys, TransactionSchema, blockHash as hashBlock, checkStateless, checkSubmission, commitHash, encodePayload,
  formatTimestamp, genesisHash, genesisState, rewardTxId, selectBlockTxs, signTx, txRoot,
  type Block, type BlockContext, type CheckedTx, type Commit, type Genesis, type Transaction, type WriteSet
} from '../chain/index.js'
import { SingleValidatorEngine, type ConsensusInput, type Validator } from '../consensus/index.js'
import { sign, toBase64, toHex, type KeyPair } from '../crypto/index.js'
import { KithError } from '../errors.js'
import { Mempool } from '../mempool/index.js'
import { ChainStore, type BlockSummary, type ChainHead, type StoredTx } from '../storage/index.js'
import { parseOrThrow } from '../validation.js'
import { ConsensusDriver } from './consensus-driver.js'

export interface Clock {
  now (): number
}

export const systemClock: Clock = { now: () => Date.now() }

export interface NodeOptions {
  dataDir: string
  genesis: Genesis
  validatorKey: KeyPair
  blockIntervalMs: number
  mempoolMaxTxs: number
  logger: Logger
  clock?: Clock
}

export interface NodeEvents {
  block: [summary: BlockSummary, txs: Transaction[]]
  tx: [tx: Transaction]
}

export interface SubmitResult {
  id: string
  status: 'accepted'
}

export interface TxLookup {
  tx: Transaction
  /** absent while the transaction waits in the mempool */
  block?: { height: number, hash: string, time: number, index: number }
}

interface BuiltBlock {
  writes: WriteSet
  stateRoot: string
  /** mempool ids the block settles: included or found invalid */
  settled: string[]
}

export class KithNode {
  readonly events = new EventEmitter<NodeEvents>()
  readonly genesis: Genesis
  readonly genesisHash: string
  readonly validatorPub: string
  private readonly store: ChainStore
  private readonly mempool: Mempool
  private readonly driver: ConsensusDriver
  private readonly clock: Clock
  private readonly log: Logger
  private readonly built = new Map<string, BuiltBlock>()

  private constructor (private readonly opts: NodeOptions, store: ChainStore) {
    this.genesis = opts.genesis
    this.genesisHash = genesisHash(opts.genesis)
    this.validatorPub = toHex(opts.validatorKey.publicKey)
    this.store = store
    this.clock = opts.clock ?? systemClock
    this.log = opts.logger.child({ module: 'node' })
    this.mempool = new Mempool(store, { maxTxs: opts.mempoolMaxTxs })
    const engine = new SingleValidatorEngine({
      chainId: opts.genesis.chain_id,
      validator: this.validatorPub,
      blockIntervalMs: opts.blockIntervalMs,
      sign: (bytes) => toBase64(sign(bytes, opts.validatorKey.secretKey))
    })
    this.driver = new ConsensusDriver(engine, {
      now: () => this.clock.now(),
      buildBlock: (height, round) => this.buildBlock(height, round),
      commitBlock: async (block, hash, commit) => { await this.commitBlock(block, hash, commit) },
      nextHeightInput: () => this.nextHeightInput()
    }, opts.logger.child({ module: 'consensus' }))
  }

  /** Opens (or creates) the store, restores the persisted mempool. Call start() to produce blocks. */
  static async open (opts: NodeOptions): Promise<KithNode> {
    if (opts.genesis.validators.length !== 1) {
      throw new Error('this node runs a single-validator engine; multi-validator genesis needs the BFT engine')
    }
    const store = ChainStore.open(opts.dataDir)
    const { state, stateRoot } = genesisState(opts.genesis)
    await store.init({
      chainId: opts.genesis.chain_id,
      genesisHash: genesisHash(opts.genesis),
      genesisTime: Date.parse(opts.genesis.genesis_time),
      state: state.data,
      stateRoot
    })
    const node = new KithNode(opts, store)
    await node.restoreMempool()
    return node
  }

  start (): void {
    this.driver.start()
    this.log.info({ height: this.head().height, chainId: this.genesis.chain_id }, 'node started')
  }

  async stop (): Promise<void> {
    await this.driver.stop()
    await this.store.close()
  }

  // ---- write path ----

  async submitTx (raw: unknown): Promise<SubmitResult> {
    const tx = parseOrThrow(TransactionSchema, raw, 'TX_MALFORMED')
    const known = this.mempool.get(tx.id) ?? this.store.getTx(tx.id)?.tx
    if (known !== undefined) {
      // A byte-identical resubmission (a client retry) is answered as the first one was.
      if (sameTx(known, tx)) return { id: tx.id, status: 'accepted' }
      throw new KithError('TX_DUPLICATE', `duplicate transaction id ${tx.id}`)
    }
    const checked = checkSubmission(tx, this.clock.now())
    const seq = this.mempool.add(checked, this.admissionContext())
    await this.store.putPending({ seq, tx })
    this.events.emit('tx', tx)
    return { id: tx.id, status: 'accepted' }
  }

  // ---- reads ----

  head (): ChainHead {
    return this.store.head()
  }

  balance (pubkey: string): number {
    return numberAt(this.store.get(StateKeys.balance(pubkey)))
  }

  supply (): number {
    return numberAt(this.store.get(StateKeys.supply))
  }

  totalTxs (): number {
    return numberAt(this.store.get(StateKeys.totalTxs))
  }

  mempoolSize (): number {
    return this.mempool.size
  }

  validators (): Validator[] {
    return this.genesis.validators
  }

  lookupTx (id: string): TxLookup | undefined {
    const stored: StoredTx | undefined = this.store.getTx(id)
    if (stored !== undefined) {
      const summary = this.store.getBlockSummary(stored.height) as BlockSummary
      return { tx: stored.tx, block: { height: stored.height, hash: summary.hash, time: summary.time, index: stored.index } }
    }
    const pending = this.mempool.get(id)
    return pending === undefined ? undefined : { tx: pending }
  }

  /** Confirmed transactions touching `pubkey`, newest first. */
  addressHistory (pubkey: string, limit: number): { items: TxLookup[], count: number } {
    const { ids, count } = this.store.addressHistory(pubkey, limit)
    const items = ids.map((id) => this.lookupTx(id)).filter((item): item is TxLookup => item !== undefined)
    return { items, count }
  }

  blockSummary (height: number): BlockSummary | undefined {
    return this.store.getBlockSummary(height)
  }

  // ---- consensus host ----

  private admissionContext (): BlockContext {
    return { height: this.head().height + 1, time: this.clock.now(), proposer: '', params: this.genesis.params }
  }

  private nextHeightInput (): ConsensusInput {
    const head = this.head()
    return { type: 'new-height', height: head.height + 1, now: this.clock.now(), prevBlockTime: head.time, validators: this.validators() }
  }

  private buildBlock (height: number, _round: number): { block: Block, blockHash: string } {
    const head = this.head()
    const time = Math.max(this.clock.now(), head.time + 1)
    const ctx: BlockContext = { height, time, proposer: this.validatorPub, params: this.genesis.params }
    const candidates = this.mempool.take(this.genesis.params.max_block_txs - 1)
    const withReward = candidates.length > 0 && this.genesis.params.block_reward_ut > 0
    let selection = selectBlockTxs(this.store, withReward ? [this.rewardTx(ctx), ...candidates] : candidates, ctx, head.state_root)
    // A reward is minted only beside other transactions; if none survived, build without it.
    if (withReward && selection.included.length === 1) selection = selectBlockTxs(this.store, candidates, ctx, head.state_root)
    for (const { tx, error } of selection.rejected) this.log.warn({ txId: tx.id, code: error.code, reason: error.message }, 'dropping transaction that no longer applies')
    const lastCommit = head.height === 0 ? null : (this.store.getCommit(head.height) ?? null)
    const block: Block = {
      header: {
        chain_id: this.genesis.chain_id,
        height,
        time,
        prev_hash: head.hash,
        tx_root: txRoot(selection.included),
        state_root: selection.stateRoot,
        proposer: this.validatorPub,
        last_commit_hash: commitHash(lastCommit)
      },
      txs: selection.included,
      last_commit: lastCommit
    }
    const blockHash = hashBlock(block.header)
    this.built.clear()
    this.built.set(blockHash, {
      writes: selection.writes,
      stateRoot: selection.stateRoot,
      settled: [...selection.included.map((tx) => tx.id), ...selection.rejected.map(({ tx }) => tx.id)]
    })
    return { block, blockHash }
  }

  private rewardTx (ctx: BlockContext): CheckedTx {
    const tx = signTx({
      id: rewardTxId(ctx.height),
      type: 'BLOCK_REWARD',
      from: this.validatorPub,
      to: '',
      amount: ctx.params.block_reward_ut,
      fee: 0,
      payload: encodePayload({}),
      timestamp: formatTimestamp(ctx.time)
    }, this.opts.validatorKey.secretKey)
    return checkStateless(tx)
  }

  private async commitBlock (block: Block, blockHash: string, commit: Commit): Promise<void> {
    const built = this.built.get(blockHash)
    if (built === undefined) throw new Error(`block ${blockHash} was not built by this node`)
    await this.store.commitBlock({
      block, hash: blockHash, commit, writes: built.writes, stateRoot: built.stateRoot, removePending: built.settled
    })
    this.built.delete(blockHash)
    const dropped = this.mempool.rebase(this.store, built.settled, this.admissionContext())
    if (dropped.length > 0) {
      for (const { tx, error } of dropped) this.log.warn({ txId: tx.id, code: error.code, reason: error.message }, 'dropping transaction that no longer applies')
      await this.store.removePending(dropped.map(({ tx }) => tx.id))
    }
    const summary = this.store.getBlockSummary(block.header.height) as BlockSummary
    this.log.debug({ height: summary.height, txs: summary.tx_count }, 'block committed')
    this.events.emit('block', summary, block.txs)
  }

  private async restoreMempool (): Promise<void> {
    const invalid: string[] = []
    const ctx = this.admissionContext()
    for (const { seq, tx } of this.store.pending()) {
      try {
        this.mempool.add(checkStateless(tx), ctx, seq)
      } catch (err) {
        if (!(err instanceof KithError)) throw err
        this.log.warn({ txId: tx.id, code: err.code, reason: err.message }, 'persisted transaction no longer applies; dropped')
        invalid.push(tx.id)
      }
    }
    await this.store.removePending(invalid)
    if (this.mempool.size > 0) this.log.info({ count: this.mempool.size }, 'restored mempool')
  }
}

function numberAt (value: unknown): number {
  return typeof value === 'number' ? value : 0
}

function sameTx (a: Transaction, b: Transaction): boolean {
  return a.signature === b.signature && a.memo === b.memo && a.payload === b.payload && a.timestamp === b.timestamp &&
    a.from === b.from && a.to === b.to && a.amount === b.amount && a.fee === b.fee && a.type === b.type
}
