/**
 * KithNode: the chain node's local view and its write path, assembled from rooms with one job
 * each: Submission (the way into the mempool), Blocks (building and checking the block being
 * decided), Commits (making a decided or synced block the head), the ConsensusDriver (running
 * the pure Tendermint engine's effects), and the network's two sides (NetworkInbound, Outbound).
 * It owns the store and the mempool; the rooms get only what they need of them. Readers (the
 * API, relay fees, the feed) see it as a ChainView. Time comes from an injected clock.
 */
import { EventEmitter } from 'node:events'
import type { Logger } from 'pino'
import {
  StateKeys, genesisHash, genesisState, validatorSetAt,
  type BlockContext, type Genesis, type StateReader, type Transaction, type ValidatorSetState
} from '../chain/index.js'
import {
  DEFAULT_TIMEOUTS, TendermintEngine, proposerFor, type ConsensusInput, type ConsensusRecord, type TimeoutConfig, type Validator
} from '../consensus/index.js'
import { genesisContracts, startContractEngine, type ContractEngine, type DeployStats } from '../contracts/index.js'
import { sign, toBase64, toHex, type KeyPair, type VerifyPool } from '../crypto/index.js'
import { Mempool, type MempoolOptions } from '../mempool/index.js'
import type { RelayService } from '../relay/index.js'
import { ChainStore, type BlockSummary, type ChainHead, type StoredBlock, type StoredHeader } from '../storage/index.js'
import { Blocks } from './blocks.js'
import { committedReads, numberAt, type CommittedReads, type TxLookup } from './committed.js'
import { CommitCertificates } from './certificates.js'
import { systemClock, type Clock } from './clock.js'
import { Commits, type NodeEvents } from './commits.js'
import { ConsensusDriver } from './consensus-driver.js'
import { NetworkInbound, type GossipTopic, type Validation } from './inbound.js'
import type { LagGate } from './lag-gate.js'
import { Outbound, type NetworkPort, type PeerView } from './outbound.js'
import { Submission, type SubmissionCheck, type SubmitResult } from './submission.js'
import { restoreGuardMsFromEnv, snapshotAnswerAsLiar, snapshotChunkBytesFromEnv } from './faults.js'
import { RestoreGuard } from './restore-guard.js'
import { Pruner } from './pruning.js'
import { SnapshotService } from '../snapshot/index.js'

export type { Clock, NetworkPort, NodeEvents, PeerView, SubmissionCheck, SubmitResult }
export { systemClock }

export interface NodeOptions {
  dataDir: string
  genesis: Genesis
  validatorKey: KeyPair
  blockIntervalMs: number
  /** false: no block while nothing waits, but for a heartbeat every `emptyBlockIntervalMs` (0: none); default true */
  emptyBlocks?: boolean
  emptyBlockIntervalMs?: number
  /** keep the transactions of the newest N blocks, drop older ones (pruning.ts); 0 or absent: keep all */
  pruneKeepBlocks?: number
  /** bounds of the mempool; defaults: DEFAULT_MEMPOOL_OPTIONS */
  mempool?: Partial<MempoolOptions>
  /** take a snapshot every `interval` blocks, keep the newest `keep`, offer them to peers (src/snapshot); absent or interval 0: none */
  snapshots?: { interval: number, keep: number }
  /** false: a validator restored from a snapshot signs at once (default true: src/node/restore-guard.ts) */
  restoreGuard?: boolean
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

/** What the p2p host calls with what arrives from peers. */
export interface NetworkHandlers {
  onGossip: (topic: GossipTopic, data: Uint8Array, via: string) => Promise<Validation>
  onRequest: (data: Uint8Array, from: string) => Promise<Uint8Array>
}

/** Share of timeoutPropose(0) a proposer may spend building its block. */
const BUILD_BUDGET_SHARE = 0.25

/**
 * What the API, relay fees and other readers may see of a node: its committed chain, read-only,
 * and the door for new transactions. Nothing outside the node writes its store, mempool or
 * consensus; they read through this.
 */
export interface ChainView extends CommittedReads {
  readonly events: EventEmitter<NodeEvents>
  readonly genesis: Genesis
  readonly genesisHash: string
  /** the committed state, for registry, contract and limit lookups */
  readonly state: StateReader
  readonly mempoolBounds: Readonly<MempoolOptions>
  supply: () => number
  totalTxs: () => number
  mempoolSize: () => number
  validators: (height?: number) => Validator[]
  peers: () => PeerView[]
  /** the digest of the committed state's hash (docs/protocol.md § 5.4) */
  stateHash: () => string
  submitTx: (raw: unknown) => Promise<SubmitResult>
  submitParsedTx: (tx: Transaction, signatureValid?: boolean) => Promise<SubmitResult>
}

export class KithNode implements ChainView {
  readonly events = new EventEmitter<NodeEvents>()
  readonly genesis: Genesis
  readonly genesisHash: string
  readonly validatorPub: string
  /** whether this node's validator key is in the set (otherwise it follows without voting) */
  readonly isValidator: boolean
  private readonly clock: Clock
  private readonly log: Logger
  private readonly store: ChainStore
  private readonly committed: CommittedReads
  private readonly mempool: Mempool
  private readonly engine: TendermintEngine
  private readonly submission: Submission
  private readonly blocks: Blocks
  private readonly commits: Commits
  private readonly driver: ConsensusDriver
  private readonly inbound: NetworkInbound
  private readonly outbound: Outbound
  private readonly emptyBlocks: boolean
  private readonly pruner: Pruner
  private readonly restoreGuard: RestoreGuard
  /** the height a `txs-available` was last pushed for */
  private txsSignalledFor = 0

  private constructor (
    opts: NodeOptions,
    store: ChainStore,
    private readonly contracts: ContractEngine,
    private readonly ownsContracts: boolean,
    private readonly snapshots: SnapshotService | undefined
  ) {
    this.genesis = opts.genesis
    this.genesisHash = genesisHash(opts.genesis)
    this.validatorPub = toHex(opts.validatorKey.publicKey)
    this.store = store
    this.committed = committedReads(store)
    this.clock = opts.clock ?? systemClock
    this.emptyBlocks = opts.emptyBlocks ?? true
    this.log = opts.logger.child({ module: 'node' })
    this.pruner = new Pruner(store, opts.pruneKeepBlocks ?? 0, this.log)
    const guardMargin = restoreGuardMsFromEnv()
    this.restoreGuard = new RestoreGuard(store, this.validatorPub, this.clock.now(), this.log, {
      enabled: opts.restoreGuard ?? true,
      ...(guardMargin !== undefined ? { marginMs: guardMargin } : {})
    })
    this.events.on('block', () => { this.pruner.afterCommit() })
    this.mempool = new Mempool(store, opts.mempool)
    this.isValidator = opts.genesis.validators.some((v) => v.pub_key === this.validatorPub) || (opts.genesis.candidates ?? []).includes(this.validatorPub)
    this.engine = new TendermintEngine({
      chainId: opts.genesis.chain_id,
      self: this.isValidator ? this.validatorPub : undefined,
      sign: (bytes) => toBase64(sign(bytes, opts.validatorKey.secretKey)),
      blockIntervalMs: opts.blockIntervalMs,
      emptyBlocks: opts.emptyBlocks ?? true,
      emptyBlockIntervalMs: opts.emptyBlockIntervalMs ?? 0,
      ...(opts.timeouts !== undefined ? { timeouts: opts.timeouts } : {})
    })
    const validators = (height: number): Validator[] => this.validators(height)
    const admissionContext = (): BlockContext => this.admissionContext()
    const certificates = new CommitCertificates(opts.genesis.chain_id)
    const p2pLog = opts.logger.child({ module: 'p2p' })
    this.outbound = new Outbound(p2pLog)
    this.submission = new Submission({
      store, mempool: this.mempool, contracts, clock: this.clock, log: this.log, admissionContext,
      isSyncing: () => this.inbound.isSyncing(),
      gossip: (tx) => this.outbound.gossipTx(tx),
      admitted: (tx) => { this.events.emit('tx', tx); this.signalTxs() },
      ...(opts.verifyPool !== undefined ? { verifyPool: opts.verifyPool } : {}),
      ...(opts.lagGate !== undefined ? { lagGate: opts.lagGate } : {})
    })
    this.blocks = new Blocks({
      store, mempool: this.mempool, contracts, genesis: opts.genesis, validatorKey: opts.validatorKey, validatorPub: this.validatorPub,
      clock: this.clock, certificates, validators, log: this.log,
      buildBudgetMs: (opts.timeouts ?? DEFAULT_TIMEOUTS).propose * BUILD_BUDGET_SHARE,
      ...(opts.verifyPool !== undefined ? { verifyPool: opts.verifyPool } : {})
    })
    this.commits = new Commits({
      store, mempool: this.mempool, blocks: this.blocks, certificates, validators, admissionContext, events: this.events, log: this.log,
      afterSyncedCommit: () => this.driver.push(this.nextHeightInput()),
      ...(snapshots !== undefined ? { afterCommit: async (height: number) => { await snapshots.afterCommit(height) } } : {})
    })
    this.driver = new ConsensusDriver(this.engine, {
      now: () => this.clock.now(),
      buildBlock: (height, round) => this.blocks.build(height, round),
      persist: async (record) => { await this.store.putConsensusRecord(record) },
      broadcastProposal: (proposal) => this.outbound.broadcast('proposal', proposal),
      broadcastVote: (vote) => this.outbound.broadcast('vote', vote),
      commitBlock: async (block, hash, commit) => { await this.commits.commitDecided(block, hash, commit) },
      nextHeightInput: (restore) => this.nextHeightInput(restore),
      proposalCheck: (height, round) => this.inbound.proposalCheck(height, round)
    }, opts.logger.child({ module: 'consensus' }))
    this.inbound = new NetworkInbound({
      chainId: opts.genesis.chain_id,
      now: () => this.clock.now(),
      headHeight: () => this.head().height,
      consensus: this.engine,
      validators,
      proposerOf: (height, round) => proposerFor(this.validators(height), height, round),
      storedBlock: (height) => this.storedBlock(height),
      pendingTx: (id) => this.mempool.get(id),
      admitGossiped: async (tx) => await this.submission.admitGossiped(tx),
      preverify: async (txs) => { await this.blocks.preverify(txs) },
      checkBlock: (block, hash, checkOpts) => this.blocks.check(block, hash, checkOpts),
      commitSynced: async (block, hash, commit) => await this.commits.commitSynced(block, hash, commit),
      pushConsensus: (input) => this.driver.push(input),
      ...(snapshots !== undefined ? { answerSnapshot: async (request: unknown, from: string) => snapshotAnswerAsLiar(request, await snapshots.answer(request, from)) } : {})
    }, this.outbound, p2pLog)
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
    // a snapshot is checked against the state hash in its block's header: none before headers carry one
    const interval = opts.snapshots?.interval ?? 0
    const firstHeight = opts.genesis.params.state_hash_height
    const snapshots = interval > 0 && firstHeight !== undefined
      ? await SnapshotService.open({ dataDir: opts.dataDir, interval, firstHeight, keep: opts.snapshots?.keep ?? 2, chunkBytes: snapshotChunkBytesFromEnv(), log: opts.logger.child({ module: 'snapshot' }) })
      : undefined
    const node = new KithNode(opts, store, contracts, opts.contracts === undefined, snapshots)
    await node.submission.restore()
    return node
  }

  /** Joins consensus, restoring the persisted consensus record first (before any network input). */
  start (): void {
    this.driver.start(this.restoredRecord())
    // a chain that was not pruned before (or an idle one) catches up now, not at its next block
    this.pruner.afterCommit()
    this.log.info({ height: this.head().height, chainId: this.genesis.chain_id, validator: this.isValidator }, 'node started')
  }

  /** What the p2p host calls with gossip and requests; messages that arrive before start() are still checked. */
  networkHandlers (): NetworkHandlers {
    return {
      onGossip: async (topic, data, via) => await this.inbound.onGossip(topic, data, via),
      onRequest: async (data, from) => await this.inbound.onRequest(data, from)
    }
  }

  /** Connects the node to its peers. */
  attachNetwork (port: NetworkPort): void {
    this.outbound.attach(port)
    this.inbound.start()
  }

  /** Connects the mailbox: its envelopes and deletions go to gossip; peers' come back to it. */
  attachRelay (relay: RelayService): void {
    this.inbound.attachRelay(relay)
  }

  async stop (): Promise<void> {
    this.inbound.stop()
    this.outbound.stop()
    this.restoreGuard.stop()
    await this.driver.stop()
    await this.commits.settled()
    await this.snapshots?.stop()
    await this.pruner.stop()
    await this.store.close()
    if (this.ownsContracts) await this.contracts.close()
  }

  // ---- write path ----

  /** A transaction as it came (the WebSocket's submit_tx): checked against TransactionSchema, then submitted. */
  async submitTx (raw: unknown): Promise<SubmitResult> {
    return await this.submission.submitTx(raw)
  }

  /** A transaction already parsed with TransactionSchema (POST /api/tx parses it at the edge). */
  async submitParsedTx (tx: Transaction, signatureValid?: boolean): Promise<SubmitResult> {
    return await this.submission.submitParsedTx(tx, signatureValid)
  }

  /** Adds a local check to every transaction submitted to this node (POST /api/tx). */
  addSubmissionCheck (check: SubmissionCheck): void {
    this.submission.addCheck(check)
  }

  // ---- reads ----

  get state (): StateReader {
    return this.store
  }

  get mempoolBounds (): Readonly<MempoolOptions> {
    return this.mempool.bounds
  }

  head (): ChainHead {
    return this.committed.head()
  }

  balance (pubkey: string): number {
    return this.committed.balance(pubkey)
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

  /** Bytes the mempool's transactions take (for /metrics). */
  mempoolBytes (): number {
    return this.mempool.sizeBytes
  }

  /** The round consensus is in at the next height (for /metrics). */
  round (): number {
    return this.engine.status().round
  }

  /** Committed state entries under `prefix` (the feed rebuilds its indexes from them). */
  scanState (prefix: string): ReturnType<ChainStore['scanState']> {
    return this.store.scanState(prefix)
  }

  /** The validator set that decides `height` (known for the next two heights; see STAKE). */
  validators (height = this.head().height + 1): Validator[] {
    return validatorSetAt(this.store.get(StateKeys.valset) as unknown as ValidatorSetState, height)
  }

  peers (): PeerView[] {
    return this.outbound.peers()
  }

  /** A transaction confirmed or, failing that, waiting in the mempool. */
  lookupTx (id: string): TxLookup | undefined {
    const committed = this.committed.lookupTx(id)
    if (committed !== undefined) return committed
    const pending = this.mempool.get(id)
    return pending === undefined ? undefined : { tx: pending }
  }

  addressHistory (pubkey: string, limit: number): { items: TxLookup[], count: number } {
    return this.committed.addressHistory(pubkey, limit)
  }

  blockSummary (height: number): BlockSummary | undefined {
    return this.committed.blockSummary(height)
  }

  storedBlock (height: number): StoredBlock | undefined {
    return this.committed.storedBlock(height)
  }

  blockHeader (height: number): StoredHeader | undefined {
    return this.committed.blockHeader(height)
  }

  blockTxIds (height: number): string[] | undefined {
    return this.committed.blockTxIds(height)
  }

  stateHash (): string {
    return this.store.stateHash().digest()
  }

  earliestBlockBody (): number {
    return this.committed.earliestBlockBody()
  }

  // ---- consensus heights ----

  private admissionContext (): BlockContext {
    return { height: this.head().height + 1, time: this.clock.now(), proposer: '', params: this.genesis.params, contracts: this.contracts }
  }

  private restoredRecord (): ConsensusRecord | undefined {
    const record = this.store.consensusRecord()
    const next = this.head().height + 1
    if (record === undefined || record.height < next) return undefined // older than the chain: expected after a crash
    if (record.height > next) throw new Error(`consensus record is for height ${record.height} but the chain is at ${next - 1}; refusing to start`)
    return record
  }

  /**
   * Tells a waiting height (empty blocks off) that a transaction arrived: once per height, so a
   * stream of submissions costs the engine one input, not one each.
   */
  private signalTxs (): void {
    const next = this.head().height + 1
    if (this.emptyBlocks || this.txsSignalledFor === next) return
    this.txsSignalledFor = next
    this.driver.push({ type: 'txs-available', height: next })
  }

  private nextHeightInput (restore?: ConsensusRecord): ConsensusInput {
    const head = this.head()
    this.inbound.onNewHeight(head.height + 1)
    const validators = this.validators(head.height + 1)
    return {
      type: 'new-height',
      height: head.height + 1,
      now: this.clock.now(),
      prevBlockTime: head.time,
      validators,
      txsPending: this.mempool.size > 0,
      ...(this.restoreGuard.abstainAt(head.height + 1, head.time, validators) ? { abstain: true } : {}),
      ...(restore !== undefined ? { restore } : {})
    }
  }
}

