/**
 * KithNode: the node's local view and its write path. It owns the store, the mempool and the
 * consensus driver, offers the operations the API adapter exposes, and answers the network
 * (gossip and requests) through ./network.ts. Time comes from an injected clock.
 */
import { EventEmitter } from 'node:events'
import type { Logger } from 'pino'
import {
  StateKeys, TransactionSchema, badSignature, sameTx, blockHash as hashBlock, signingBytes, checkStateless, checkSubmission, commitHash, deployToPrepare, encodePayload,
  MAX_BLOCK_TXS, executeBlock, formatTimestamp, genesisHash, genesisState, maxBlockTxs, rewardTxId, selectBlockTxs, signTx, txRoot, verifyTxSignature,
  validatorSetAt, Contracts, type Block, type BlockContext, type CallRecord, type CheckedTx, type Commit, type Genesis, type Transaction,
  type StateReader, type ValidatorSetState, type WriteSet
} from '../chain/index.js'
import {
  DEFAULT_TIMEOUTS, TendermintEngine, proposerFor, type ConsensusInput, type ConsensusRecord, type TimeoutConfig, type Validator
} from '../consensus/index.js'
import { fromBase64, sign, toBase64, toHex, type KeyPair, type VerifyPool } from '../crypto/index.js'
import { KithError } from '../errors.js'
import { Mempool, type MempoolOptions } from '../mempool/index.js'
import { genesisContracts, startContractEngine, type ContractEngine, type DeployStats } from '../contracts/index.js'
import { ChainStore, type BlockSummary, type ChainHead, type StoredBlock, type StoredTx } from '../storage/index.js'
import { parseOrThrow } from '../validation.js'
import { ConsensusDriver } from './consensus-driver.js'
import { crashIfAt } from './faults.js'
import type { LagGate } from './lag-gate.js'
import { NetworkBridge, type NetworkPort, type PeerView } from './network.js'

export interface Clock {
  now (): number
}

export const systemClock: Clock = { now: () => Date.now() }

export interface NodeOptions {
  dataDir: string
  genesis: Genesis
  validatorKey: KeyPair
  blockIntervalMs: number
  /** bounds of the mempool; defaults: DEFAULT_MEMPOOL_OPTIONS */
  mempool?: Partial<MempoolOptions>
  logger: Logger
  clock?: Clock
  timeouts?: TimeoutConfig
  /** verifies submitted signatures off the event loop; inline when absent */
  verifyPool?: VerifyPool
  /** sheds admissions while the event loop lags (lag-gate.ts); admits always when absent */
  lagGate?: LagGate
  /** runs contracts; open() starts the worker-thread VM (src/contracts) when absent */
  contracts?: ContractEngine
}

export interface NodeEvents {
  block: [summary: BlockSummary, txs: Transaction[], commit: Commit]
  tx: [tx: Transaction]
}

/**
 * A check that only this node can make of a transaction submitted to it (not of gossip or
 * blocks, which every node must judge alike): the feed checks a CREATE_POST against the body
 * published here. Throws a KithError to refuse.
 */
export type SubmissionCheck = (checked: CheckedTx) => void

export interface SubmitResult {
  id: string
  status: 'accepted'
}

export interface TxLookup {
  tx: Transaction
  /** absent while the transaction waits in the mempool */
  block?: { height: number, hash: string, time: number, index: number }
  /** what a confirmed CALL_CONTRACT did */
  call?: CallRecord
}

/** A block this node built or checked, with the state writes that committing it applies. */
export interface ExecutedBlock {
  writes: WriteSet
  stateRoot: string
  /** mempool ids the block settles: included or found invalid */
  settled: string[]
}

/** The admission gate sheds only while at least this many transactions wait (a fifth of a full block). */
const SHED_MIN_PENDING = MAX_BLOCK_TXS / 5

/** Share of timeoutPropose(0) a proposer may spend building its block. */
const BUILD_BUDGET_SHARE = 0.25

/** How far ahead of the local clock a proposed block's time may be. */
const MAX_BLOCK_TIME_DRIFT_MS = 60_000

/**
 * What the API, relay fees and other readers may see of a node: its committed chain, read-only,
 * and the door for new transactions. Nothing outside the node writes its store, mempool or
 * consensus; they read through this.
 */
export interface ChainView {
  readonly events: EventEmitter<NodeEvents>
  readonly genesis: Genesis
  readonly genesisHash: string
  /** the committed state, for registry, contract and limit lookups */
  readonly state: StateReader
  readonly mempoolBounds: Readonly<MempoolOptions>
  head: () => ChainHead
  balance: (pubkey: string) => number
  supply: () => number
  totalTxs: () => number
  mempoolSize: () => number
  validators: (height?: number) => Validator[]
  peers: () => PeerView[]
  lookupTx: (id: string) => TxLookup | undefined
  addressHistory: (pubkey: string, limit: number) => { items: TxLookup[], count: number }
  blockSummary: (height: number) => BlockSummary | undefined
  storedBlock: (height: number) => StoredBlock | undefined
  submitTx: (raw: unknown) => Promise<SubmitResult>
  submitParsedTx: (tx: Transaction) => Promise<SubmitResult>
}

export class KithNode implements ChainView {
  readonly events = new EventEmitter<NodeEvents>()
  readonly genesis: Genesis
  readonly genesisHash: string
  readonly validatorPub: string
  /** whether this node's validator key is in the set (otherwise it follows without voting) */
  readonly isValidator: boolean
  readonly clock: Clock
  readonly log: Logger
  readonly store: ChainStore
  readonly mempool: Mempool
  readonly engine: TendermintEngine
  readonly network: NetworkBridge
  private readonly driver: ConsensusDriver
  /** blocks built or checked at the current height, by hash */
  private readonly executed = new Map<string, ExecutedBlock>()
  /** `${id}|${signature}` of proposed transactions whose signatures the pool verified (preverify) */
  private readonly preverified = new Set<string>()
  /** serialises commits from consensus and from block sync */
  private commitChain: Promise<void> = Promise.resolve()
  private readonly submissionChecks: SubmissionCheck[] = []
  /** longest a proposer spends building a block: a quarter of round 0's propose timeout (docs/protocol.md § 12) */
  private readonly buildBudgetMs: number
  private readonly contracts: ContractEngine

  private constructor (private readonly opts: NodeOptions, store: ChainStore, contracts: ContractEngine, private readonly ownsContracts: boolean) {
    this.genesis = opts.genesis
    this.contracts = contracts
    this.genesisHash = genesisHash(opts.genesis)
    this.validatorPub = toHex(opts.validatorKey.publicKey)
    this.store = store
    this.clock = opts.clock ?? systemClock
    this.log = opts.logger.child({ module: 'node' })
    this.mempool = new Mempool(store, opts.mempool)
    this.isValidator = opts.genesis.validators.some((v) => v.pub_key === this.validatorPub) || (opts.genesis.candidates ?? []).includes(this.validatorPub)
    this.engine = new TendermintEngine({
      chainId: opts.genesis.chain_id,
      self: this.isValidator ? this.validatorPub : undefined,
      sign: (bytes) => toBase64(sign(bytes, opts.validatorKey.secretKey)),
      blockIntervalMs: opts.blockIntervalMs,
      ...(opts.timeouts !== undefined ? { timeouts: opts.timeouts } : {})
    })
    this.buildBudgetMs = (opts.timeouts ?? DEFAULT_TIMEOUTS).propose * BUILD_BUDGET_SHARE
    this.network = new NetworkBridge(this, opts.logger.child({ module: 'p2p' }))
    this.driver = new ConsensusDriver(this.engine, {
      now: () => this.clock.now(),
      buildBlock: (height, round) => this.buildBlock(height, round),
      persist: async (record) => { await this.store.putConsensusRecord(record) },
      broadcastProposal: (proposal) => this.network.broadcast('proposal', proposal),
      broadcastVote: (vote) => this.network.broadcast('vote', vote),
      commitBlock: async (block, hash, commit) => { await this.commitDecided(block, hash, commit) },
      nextHeightInput: (restore) => this.nextHeightInput(restore),
      proposalCheck: (height, round) => this.network.proposalCheck(height, round)
    }, opts.logger.child({ module: 'consensus' }))
  }

  /** Opens (or creates) the store, restores the persisted mempool. Call start() to take part in consensus. */
  static async open (opts: NodeOptions): Promise<KithNode> {
    const contracts = opts.contracts ?? await startContractEngine()
    const store = ChainStore.open(opts.dataDir)
    await store.init({
      chainId: opts.genesis.chain_id,
      genesisHash: genesisHash(opts.genesis),
      genesisTime: Date.parse(opts.genesis.genesis_time),
      // only a new store needs it: preparing the genesis contracts costs ~150 ms
      build: () => {
        const { state, stateRoot } = genesisState(opts.genesis, genesisContracts(contracts))
        return { state: state.data, stateRoot }
      }
    })
    const node = new KithNode(opts, store, contracts, opts.contracts === undefined)
    await node.restoreMempool()
    return node
  }

  /** Joins consensus, restoring the persisted consensus record first (before any network input). */
  start (): void {
    this.driver.start(this.restoredRecord())
    this.log.info({ height: this.head().height, chainId: this.genesis.chain_id, validator: this.isValidator }, 'node started')
  }

  /** Connects the node to its peers. Messages that arrive before start() are still checked. */
  attachNetwork (port: NetworkPort): void {
    this.network.attach(port)
  }

  async stop (): Promise<void> {
    this.network.stop()
    await this.driver.stop()
    await this.commitChain
    await this.store.close()
    if (this.ownsContracts) await this.contracts.close()
  }

  // ---- write path ----

  /** A transaction as it came (the WebSocket's submit_tx): checked against TransactionSchema, then submitted. */
  async submitTx (raw: unknown): Promise<SubmitResult> {
    return await this.submitParsedTx(parseOrThrow(TransactionSchema, raw, 'TX_MALFORMED'))
  }

  /** A transaction already parsed with TransactionSchema (POST /api/tx parses it at the edge). */
  async submitParsedTx (tx: Transaction): Promise<SubmitResult> {
    const known = this.mempool.get(tx.id) ?? this.store.getTx(tx.id)?.tx
    if (known !== undefined) {
      // A byte-identical resubmission (a client retry) is answered as the first one was.
      if (sameTx(known, tx)) return { id: tx.id, status: 'accepted' }
      throw new KithError('TX_DUPLICATE', `duplicate transaction id ${tx.id}`)
    }
    // push back before any signature work: 503 with Retry-After
    this.checkAdmitting()
    this.mempool.checkRoom(tx)
    try {
      const checked = await this.checkTx(tx)
      for (const check of this.submissionChecks) check(checked)
      await this.admit(checked)
    } catch (err) {
      // the same transaction may have been admitted while its signature was being checked
      const raced = this.mempool.get(tx.id)
      if (err instanceof KithError && err.code === 'TX_DUPLICATE' && raced !== undefined && sameTx(raced, tx)) return { id: tx.id, status: 'accepted' }
      throw err
    }
    this.network.gossipTx(tx)
    return { id: tx.id, status: 'accepted' }
  }

  /**
   * Throws NODE_BUSY while the event loop lags or the node syncs blocks it fell behind on, and a
   * backlog waits to be committed: consensus gets the thread before new transactions do. Without a backlog there is nothing to protect
   * (a lag at start-up, a slow disk), and the node admits.
   */
  checkAdmitting (): void {
    const gate = this.opts.lagGate
    // a node catching up on blocks it missed sheds too: it is late to vote and to propose
    if (gate === undefined || this.mempool.size < SHED_MIN_PENDING || (gate.isOpen(Date.now()) && !this.network.isSyncing())) return
    throw new KithError('NODE_BUSY', 'the node is busy committing blocks; retry later')
  }

  /** Adds a local check to every transaction submitted to this node (POST /api/tx). */
  addSubmissionCheck (check: SubmissionCheck): void {
    this.submissionChecks.push(check)
  }

  /**
   * The submission checks of POST /api/tx (and of gossip), with the signature verified on the
   * pool when there is one; then a deploy's module is prepared off the main thread (refusals
   * cached, limited per sender), so the synchronous admission check finds it ready.
   */
  async checkTx (tx: Transaction): Promise<CheckedTx> {
    const checked = await this.checkSignedTx(tx)
    const code = deployToPrepare(this.store, tx)
    if (code !== undefined) await this.contracts.admitDeploy(code, tx.from)
    return checked
  }

  private async checkSignedTx (tx: Transaction): Promise<CheckedTx> {
    const pool = this.opts.verifyPool
    if (pool === undefined) return checkSubmission(tx, this.clock.now())
    const checked = checkSubmission(tx, this.clock.now(), () => true)
    const signature = fromBase64(tx.signature)
    if (signature === undefined || !await pool.verify(signingBytes(tx), signature, Buffer.from(tx.from, 'hex'))) throw badSignature()
    return checked
  }

  /**
   * Adds a checked transaction to the mempool and, when `durable`, resolves once it is on disk.
   * A node answers `accepted` only for what it persisted; transactions gossip brings are held in
   * memory (their own node keeps them on disk), which spares every peer a synced write per
   * transaction.
   */
  async admit (checked: CheckedTx, durable = true): Promise<void> {
    const seq = this.mempool.add(checked, this.admissionContext(), undefined, durable)
    if (durable) await this.store.putPending({ seq, tx: checked.tx })
    this.events.emit('tx', checked.tx)
  }

  // ---- reads ----

  get state (): StateReader {
    return this.store
  }

  get mempoolBounds (): Readonly<MempoolOptions> {
    return this.mempool.bounds
  }

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

  /** Deploy admission counters of the contract engine (for /metrics). */
  contractDeployStats (): DeployStats {
    return { ...this.contracts.deployStats }
  }

  mempoolSize (): number {
    return this.mempool.size
  }

  /** The validator set that decides `height` (known for the next two heights; see STAKE). */
  validators (height = this.head().height + 1): Validator[] {
    return validatorSetAt(this.store.get(StateKeys.valset) as unknown as ValidatorSetState, height)
  }

  peers (): PeerView[] {
    return this.network.peers()
  }

  lookupTx (id: string): TxLookup | undefined {
    const stored: StoredTx | undefined = this.store.getTx(id)
    if (stored !== undefined) {
      const summary = this.store.getBlockSummary(stored.height) as BlockSummary
      const call = stored.tx.type === 'CALL_CONTRACT' ? Contracts.call(this.store, id) : undefined
      return { tx: stored.tx, block: { height: stored.height, hash: summary.hash, time: summary.time, index: stored.index }, ...(call !== undefined ? { call } : {}) }
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

  storedBlock (height: number): StoredBlock | undefined {
    return this.store.getBlock(height)
  }

  // ---- blocks: building, checking, committing ----

  admissionContext (): BlockContext {
    return { height: this.head().height + 1, time: this.clock.now(), proposer: '', params: this.genesis.params, contracts: this.contracts }
  }

  private restoredRecord (): ConsensusRecord | undefined {
    const record = this.store.consensusRecord()
    const next = this.head().height + 1
    if (record === undefined || record.height < next) return undefined // older than the chain: expected after a crash
    if (record.height > next) throw new Error(`consensus record is for height ${record.height} but the chain is at ${next - 1}; refusing to start`)
    return record
  }

  private nextHeightInput (restore?: ConsensusRecord): ConsensusInput {
    const head = this.head()
    this.network.onNewHeight(head.height + 1)
    return {
      type: 'new-height',
      height: head.height + 1,
      now: this.clock.now(),
      prevBlockTime: head.time,
      validators: this.validators(head.height + 1),
      ...(restore !== undefined ? { restore } : {})
    }
  }

  private buildBlock (height: number, round: number): { block: Block, blockHash: string } {
    const head = this.head()
    const time = Math.max(this.clock.now(), head.time + 1)
    const ctx: BlockContext = { height, time, proposer: this.validatorPub, params: this.genesis.params, contracts: this.contracts }
    const candidates = this.mempool.take(maxBlockTxs(this.genesis.params) - 1)
    const withReward = candidates.length > 0 && this.genesis.params.block_reward_ut > 0
    // Every peer re-executes what the proposer executes here, so a block that takes longer than
    // the budget to build would not be checked everywhere within round 0's propose timeout.
    const deadline = performance.now() + this.buildBudgetMs
    const full = (): boolean => performance.now() > deadline
    let selection = selectBlockTxs(this.store, withReward ? [this.rewardTx(ctx), ...candidates] : candidates, ctx, head.state_root, full)
    // A reward is minted only beside other transactions; if none survived, build without it.
    if (withReward && selection.included.length === 1) selection = selectBlockTxs(this.store, candidates, ctx, head.state_root, full)
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
    this.executed.set(blockHash, {
      writes: selection.writes,
      stateRoot: selection.stateRoot,
      settled: [...selection.included.map((tx) => tx.id), ...selection.rejected.map(({ tx }) => tx.id)]
    })
    this.log.debug({ height, round, txs: block.txs.length }, 'built block')
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

  /**
   * Checks a block proposed for the next height against the committed state: header links,
   * time, proposer, the previous block's commit certificate, and every transaction. Keeps the
   * resulting writes so that committing it later does not execute it twice.
   */
  checkBlock (block: Block, hash: string, opts: { localTime?: boolean } = {}): ExecutedBlock {
    const cached = this.executed.get(hash)
    if (cached !== undefined) return cached
    const head = this.head()
    const { header } = block
    if (hashBlock(header) !== hash) throw new KithError('BLOCK_INVALID', 'block hash does not match its header')
    if (header.height !== head.height + 1) throw new KithError('BLOCK_INVALID', `block height ${header.height} does not follow ${head.height}`)
    if (header.time <= head.time) throw new KithError('BLOCK_INVALID', 'block time does not increase')
    if (opts.localTime === true && header.time > this.clock.now() + MAX_BLOCK_TIME_DRIFT_MS) throw new KithError('BLOCK_INVALID', 'block time is too far in the future')
    const validators = this.validators(header.height)
    if (!validators.some((v) => v.pub_key === header.proposer)) throw new KithError('BLOCK_INVALID', 'block proposer is not a validator')
    if (head.height === 0) {
      if (block.last_commit !== null) throw new KithError('BLOCK_INVALID', 'the first block carries no last commit')
    } else if (block.last_commit === null || block.last_commit.block_hash !== head.hash || block.last_commit.height !== head.height ||
      !this.network.commitIsValid(block.last_commit, this.validators(head.height))) {
      throw new KithError('BLOCK_INVALID', 'block does not carry a valid commit certificate for its parent')
    }
    const execution = executeBlock(this.store, block, {
      params: this.genesis.params,
      chainId: this.genesis.chain_id,
      prevHash: head.hash,
      prevStateRoot: head.state_root,
      contracts: this.contracts,
      checkSignature: (tx) => this.mempool.get(tx.id)?.signature === tx.signature || this.preverified.has(`${tx.id}|${tx.signature}`) || verifyTxSignature(tx)
    })
    const executed = { writes: execution.writes, stateRoot: execution.stateRoot, settled: block.txs.map((tx) => tx.id) }
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
    await this.warmDeploys(txs)
    const pool = this.opts.verifyPool
    if (pool === undefined) return
    const unheld = txs.filter((tx) => this.mempool.get(tx.id)?.signature !== tx.signature && !this.preverified.has(`${tx.id}|${tx.signature}`))
    const results = await Promise.all(unheld.map(async (tx) => {
      const signature = fromBase64(tx.signature)
      return signature !== undefined && await pool.verify(signingBytes(tx), signature, Buffer.from(tx.from, 'hex'))
    }))
    // bounded: a few proposals' worth at most, emptied at every commit
    if (this.preverified.size > 4 * MAX_BLOCK_TXS) this.preverified.clear()
    unheld.forEach((tx, i) => { if (results[i]) this.preverified.add(`${tx.id}|${tx.signature}`) })
  }

  /** Prepares the deploys among `txs` off the main thread; one its rule refuses is refused again when applied. */
  private async warmDeploys (txs: readonly Transaction[]): Promise<void> {
    await this.contracts.warmDeploys(txs.flatMap((tx) => {
      try {
        return deployToPrepare(this.store, tx) ?? []
      } catch {
        return []
      }
    }))
  }

  /** A block consensus decided: commit it unless block sync already did. */
  private async commitDecided (block: Block, hash: string, commit: Commit): Promise<void> {
    await this.commitSerial(block, hash, commit)
  }

  /** A block from block sync, with its certificate: checked in full, then committed. */
  async commitSynced (block: Block, hash: string, commit: Commit): Promise<boolean> {
    return await this.commitSerial(block, hash, commit, true)
  }

  private async commitSerial (block: Block, hash: string, commit: Commit, fromSync = false): Promise<boolean> {
    let committed = false
    const run = this.commitChain.then(async () => {
      if (block.header.height !== this.head().height + 1) return
      if (fromSync) {
        if (commit.block_hash !== hash || commit.height !== block.header.height || !this.network.commitIsValid(commit, this.validators(block.header.height))) {
          throw new KithError('BLOCK_INVALID', `synced block ${block.header.height} lacks a valid commit certificate`)
        }
      }
      const executed = this.checkBlock(block, hash)
      await this.store.commitBlock({
        block, hash, commit, writes: executed.writes, stateRoot: executed.stateRoot, removePending: executed.settled.filter((id) => !this.mempool.isVolatile(id))
      })
      this.executed.clear()
      this.preverified.clear()
      committed = true
      const dropped = this.mempool.rebase(this.store, executed.settled, this.admissionContext())
      if (dropped.length > 0) {
        for (const { tx, error } of dropped) this.log.warn({ txId: tx.id, code: error.code, reason: error.message }, 'dropping transaction that no longer applies')
        await this.store.removePending(dropped.map(({ tx }) => tx.id))
      }
      const summary = this.store.getBlockSummary(block.header.height) as BlockSummary
      this.log.debug({ height: summary.height, txs: summary.tx_count, fromSync }, 'block committed')
      this.events.emit('block', summary, block.txs, commit)
      if (fromSync) {
        crashIfAt('after-sync-commit')
        this.driver.push(this.nextHeightInput())
      }
    })
    this.commitChain = run.catch(() => {})
    await run
    return committed
  }

  /** Feeds a consensus input that came from the network. */
  pushConsensus (input: ConsensusInput): void {
    this.driver.push(input)
  }

  proposerOf (height: number, round: number): string {
    return proposerFor(this.validators(height), height, round)
  }

  private async restoreMempool (): Promise<void> {
    const invalid: string[] = []
    await this.warmDeploys(this.store.pending().map(({ tx }) => tx))
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

