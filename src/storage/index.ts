/**
 * On-disk store (lmdb). A block, its transactions, its state writes, every index and the
 * removal of its transactions from the persisted mempool are written in one transaction, so
 * after a crash the store is exactly the state after some committed block. Acknowledged
 * writes wait for `flushed` (fsync); lmdb batches concurrent writers into one commit and one
 * sync (group commit). Why lmdb and not datastore-level: docs/architecture.md.
 */
import { join } from 'node:path'
import { open, type Database, type RootDatabase } from 'lmdb'
import { StateHash, stateLanesCache, type Block, type BlockHeader, type Commit, type StateValue, type Transaction, type WriteSet } from '../chain/index.js'
import type { ConsensusRecord, Proposal } from '../consensus/index.js'
import { encodeBlockBody } from './block-body.js'
import { CHAIN_DBS, LEGACY_CHAIN_DBS } from './names.js'
import { ChainReader } from './reader.js'
import type { ChainHead } from './types.js'

export type { BlockSummary, ChainHead, StoredBlock, StoredHeader, StoredTx } from './types.js'
export { ChainReader } from './reader.js'

export { StoreSnapshotReader } from './snapshot-reader.js'

export interface PendingRecord {
  seq: number
  tx: Transaction
}

/** Where a restored store starts: the snapshot's block, its certificate and the state hash its entries add up to. */
export interface SnapshotPoint {
  chainId: string
  genesisHash: string
  header: BlockHeader
  hash: string
  commit: Commit
  stateHash: StateHash
}

export interface BlockCommitInput {
  block: Block
  hash: string
  commit: Commit | null
  writes: WriteSet
  stateRoot: string
  /** the state hash after `writes` (stateHashAfter), when the caller already has it */
  stateHash?: StateHash
  /** ids to remove from the persisted mempool (included or dropped) */
  removePending: string[]
}

export interface GenesisInit {
  chainId: string
  genesisHash: string
  genesisTime: number
  /** the genesis state and its root, asked for only when the store is new */
  build: () => { state: Map<string, StateValue>, stateRoot: string }
}

export interface StoreOptions {
  /** fsync on commit (default true); tests of the crash path keep it on */
  sync?: boolean
}

/** meta 'layout' of a store whose transactions are in block bodies */
const BODIES_LAYOUT = 2
/** Transactions moved per store transaction when an older store's are made into block bodies. */
const LEGACY_BATCH = 50_000

type ProposalKey = [number, number, string]
/** The consensus record as stored: proposals by reference, their blocks stored once each. */
type StoredRecord = Omit<ConsensusRecord, 'proposals'> & { proposals: ProposalKey[] }

export class ChainStore extends ChainReader {
  /**
   * The consensus record lives in its own environment, written synchronously: each record is
   * on disk (fsync) before the vote or proposal it holds leaves the node, and an asynchronous
   * write waits twice for the event loop (to run the transaction, then to hear it is synced),
   * which under overload cost a proposer up to 1.5 s and its round. Its own file and write lock
   * keep it from waiting behind the chain's group commits of mempool writes.
   */
  private readonly consensusRoot: RootDatabase
  private readonly mempool: Database<PendingRecord, string>
  private readonly consensus: Database<StoredRecord, string>
  private readonly proposals: Database<Proposal, ProposalKey>
  private readonly storedProposals = new Set<string>()
  private cachedHead: ChainHead | undefined
  private cachedStateHash: StateHash | undefined
  private readonly lanesCache = stateLanesCache()
  /** meta 'pruned_below', read once: every block read compares with it */
  private cachedPrunedBelow: number | undefined

  private constructor (path: string, opts: StoreOptions) {
    super(open({ path, compression: false, noSync: opts.sync === false, mapSize: 2 ** 34 }))
    this.mempool = this.root.openDB({ name: CHAIN_DBS.mempool })
    this.consensusRoot = open({ path: join(path, 'consensus'), compression: false, noSync: opts.sync === false, overlappingSync: false, mapSize: 2 ** 32 })
    this.consensus = this.consensusRoot.openDB({ name: 'consensus' })
    this.proposals = this.consensusRoot.openDB({ name: 'proposals' })
    this.moveLegacyConsensusRecord()
    this.moveLegacyTransactions()
  }

  /**
   * Stores written before block bodies kept a record and an id entry per transaction and an
   * address-history entry per transaction: they are moved into bodies and per-block address
   * entries, a batch of heights per store transaction, so a crash midway resumes where it stopped.
   */
  private moveLegacyTransactions (): void {
    if (this.meta.get('layout') === BODIES_LAYOUT) return
    const legacyTxs = this.root.openDB<Transaction, [number, number]>({ name: LEGACY_CHAIN_DBS.txs })
    for (;;) {
      let moved = 0
      this.root.transactionSync(() => {
        let height = -1
        let txs: Transaction[] = []
        const flush = (): void => {
          if (txs.length > 0) this.writeBody(height, encodeBlockBody(txs), txs, false)
          txs = []
        }
        for (const { key, value } of legacyTxs.getRange({ start: [0, 0] })) {
          // whole heights only, and at most about LEGACY_BATCH transactions per store transaction
          if (key[0] !== height) {
            flush()
            if (moved >= LEGACY_BATCH) break
            height = key[0]
          }
          txs.push(value)
          legacyTxs.remove(key)
          moved++
        }
        flush()
      })
      if (moved === 0) break
    }
    this.root.transactionSync(() => {
      for (const name of Object.values(LEGACY_CHAIN_DBS)) this.root.openDB({ name }).dropSync()
      this.meta.put('layout', BODIES_LAYOUT)
    })
  }

  /**
   * Stores written before the consensus record had its own environment kept it in the chain's:
   * it is moved, with the proposals it names, so an upgraded validator still knows what it signed.
   */
  private moveLegacyConsensusRecord (): void {
    const legacy = this.root.openDB<StoredRecord, string>({ name: 'consensus' })
    const legacyProposals = this.root.openDB<Proposal, ProposalKey>({ name: 'proposals' })
    const record = legacy.get('record')
    if (record === undefined) return
    this.consensusRoot.transactionSync(() => {
      if (this.consensus.get('record') !== undefined) return
      for (const key of record.proposals) {
        const proposal = legacyProposals.get(key)
        if (proposal !== undefined) this.proposals.put(key, proposal)
      }
      this.consensus.put('record', record)
    })
    this.root.transactionSync(() => {
      legacy.remove('record')
      for (const { key } of legacyProposals.getRange()) legacyProposals.remove(key)
    })
  }

  static open (path: string, opts: StoreOptions = {}): ChainStore {
    return new ChainStore(path, opts)
  }

  /** Writes the genesis state on first use; afterwards checks that the genesis is the same one. */
  async init (genesis: GenesisInit): Promise<void> {
    const stored = this.meta.get('genesis_hash')
    if (stored !== undefined) {
      if (stored !== genesis.genesisHash) {
        throw new Error(`this store belongs to genesis ${String(stored)}, not ${genesis.genesisHash}`)
      }
      // a store written before the state hash was kept gets it once, from a scan of its state
      if (this.meta.get('state_hash') === undefined) await this.meta.put('state_hash', Buffer.from(StateHash.ofEntries(this.scanState('')).bytes()))
      return
    }
    const { state, stateRoot } = genesis.build()
    const stateHash = StateHash.ofEntries(state)
    await this.root.transaction(() => {
      for (const [key, value] of state) this.stateDb.put(key, value)
      this.meta.put('state_hash', Buffer.from(stateHash.bytes()))
      const head: ChainHead = { height: 0, hash: genesis.genesisHash, state_root: stateRoot, time: genesis.genesisTime }
      this.meta.put('head', head)
      this.meta.put('chain_id', genesis.chainId)
      this.meta.put('genesis_hash', genesis.genesisHash)
    })
    await this.root.flushed
  }

  /** The state hash once `writes` are applied to the committed state (a block being built or checked). */
  stateHashAfter (writes: WriteSet): StateHash {
    return this.stateHash().afterWrites(this, writes, this.lanesCache)
  }

  /**
   * The state hash of the committed state (src/chain/state-hash.ts), kept with each block in the
   * block's own transaction. Read-only: `afterWrites` makes a new one.
   */
  stateHash (): StateHash {
    if (this.cachedStateHash !== undefined) return this.cachedStateHash
    const bytes = this.meta.get('state_hash') as Uint8Array | undefined
    if (bytes === undefined) throw new Error('store is not initialised')
    this.cachedStateHash = StateHash.fromBytes(bytes)
    return this.cachedStateHash
  }

  /** The last committed block; cached, since every submission and read asks for it. */
  override head (): ChainHead {
    this.cachedHead ??= super.head()
    return this.cachedHead
  }

  /**
   * The lowest height whose transactions this store holds: 1 unless pruned. Below it only the
   * headers, the commit certificates and the summaries remain (`prune`).
   */
  override earliestBody (): number {
    this.cachedPrunedBelow ??= super.earliestBody()
    return this.cachedPrunedBelow
  }

  /**
   * The snapshot height this store was restored at (import or state sync), until `signedSinceRestore`:
   * a validator on it cannot know what it signed before its old store was lost.
   */
  restoredAt (): number | undefined {
    return this.meta.get('restored_at') as number | undefined
  }

  /** The validator on this restored store has signed at a height its old store cannot have reached. */
  async signedSinceRestore (): Promise<void> {
    await this.meta.remove('restored_at')
  }

  /**
   * Drops the transactions of the oldest blocks, up to `maxHeights` of them and never at or
   * above `keepFrom`: their bodies and their entries in the address histories.
   * Headers, commit certificates, summaries and the state stay, so the chain still verifies
   * from genesis and duplicates are still refused (the state's `txid:` keys). One transaction
   * per call, with the new lower bound: a crash leaves a store pruned up to some height.
   * Returns the new lower bound.
   */
  async prune (keepFrom: number, maxHeights: number): Promise<number> {
    const from = this.earliestBody()
    const to = Math.min(keepFrom, from + maxHeights, this.head().height + 1)
    if (to <= from) return from
    // readers stop at the new bound before its heights lose their transactions, never after
    this.cachedPrunedBelow = to
    try {
      await this.root.transaction(() => {
        const touched = new Set<string>()
        for (let height = from; height < to; height++) {
          for (const tx of this.body(height).txs() ?? []) {
            if (tx.from !== '') touched.add(tx.from)
            if (tx.to !== '') touched.add(tx.to)
          }
        }
        for (const key of this.bodies.getKeys({ start: [from, 0], end: [to, 0] })) this.bodies.remove(key)
        for (const pubkey of touched) {
          for (const { key } of this.addrBlocks.getRange({ start: [pubkey, 0], end: [pubkey, to] })) this.addrBlocks.remove(key)
        }
        this.meta.put('pruned_below', to)
      })
    } catch (err) {
      this.cachedPrunedBelow = from
      throw err
    }
    return to
  }

  /** The certificate that committed block `height`, without reading its transactions. */
  getCommit (height: number): Commit | null | undefined {
    return this.blocks.get(height)?.commit
  }

  /**
   * Writes the block synchronously and resolves once it is synced. An asynchronous transaction
   * would wait for the event loop to run it, a turn that lasts hundreds of milliseconds when
   * the node is overloaded with requests, and the block is on consensus' critical path.
   */
  async commitBlock (input: BlockCommitInput): Promise<void> {
    const { block, hash, commit, writes, stateRoot, removePending } = input
    // the old values are read before the block's writes land: commits are one at a time
    const stateHash = input.stateHash ?? this.stateHashAfter(writes)
    this.root.transactionSync(() => {
      for (const [key, value] of writes) {
        if (value === null) this.stateDb.remove(key)
        else this.stateDb.put(key, value)
      }
      const height = block.header.height
      if (block.txs.length > 0) this.writeBody(height, encodeBlockBody(block.txs), block.txs, true)
      for (const id of removePending) this.mempool.remove(id)
      this.blocks.put(height, { block: { header: block.header, last_commit: block.last_commit }, hash, commit })
      this.summaries.put(block.header.height, {
        height: block.header.height, hash, time: block.header.time, proposer: block.header.proposer, tx_count: block.txs.length, state_hash: stateHash.digest()
      })
      this.meta.put('state_hash', Buffer.from(stateHash.bytes()))
      const head: ChainHead = { height: block.header.height, hash, state_root: stateRoot, time: block.header.time }
      this.meta.put('head', head)
    })
    this.cachedHead = undefined
    this.cachedStateHash = stateHash
    await this.root.flushed
    this.forgetDecided(block.header.height)
  }

  /**
   * A block's transactions: its body, and for each address in it one history entry listing its
   * transactions there (and, for a new block, the address's count). Inside a store transaction.
   */
  private writeBody (height: number, body: readonly Uint8Array[], txs: readonly Transaction[], count: boolean): void {
    body.forEach((record, k) => this.bodies.put([height, k], Buffer.from(record.buffer, record.byteOffset, record.byteLength)))
    const byAddress = new Map<string, string[]>()
    const note = (pubkey: string, id: string): void => {
      if (pubkey === '') return
      const ids = byAddress.get(pubkey)
      if (ids === undefined) byAddress.set(pubkey, [id])
      else ids.push(id)
    }
    for (const tx of txs) {
      note(tx.from, tx.id)
      if (tx.to !== tx.from) note(tx.to, tx.id)
    }
    for (const [pubkey, ids] of byAddress) {
      this.addrBlocks.put([pubkey, height], ids)
      if (count) this.addrCount.put(pubkey, (this.addrCount.get(pubkey) ?? 0) + ids.length)
    }
  }

  /**
   * Consensus state of heights now decided is no longer needed. Not atomic with the block: a
   * record left behind by a crash is for a decided height, which the node ignores at start.
   */
  private forgetDecided (height: number): void {
    this.consensusRoot.transactionSync(() => {
      for (const { key } of this.proposals.getRange({ end: [height + 1, 0, ''] })) this.proposals.remove(key)
      // Here, in transaction order: a record transaction that runs right after this one must
      // write its proposals again, or it would refer to ones just removed.
      this.storedProposals.clear()
      const record = this.consensus.get('record')
      if (record !== undefined && record.height <= height) this.consensus.remove('record')
    })
  }

  /**
   * Persists the consensus record (lock, valid value, own signatures) and resolves once it is
   * synced: the engine's votes leave the node only after this. Blocks inside proposals are
   * written once each, not with every record.
   */
  async putConsensusRecord (record: ConsensusRecord): Promise<void> {
    const refs: ProposalKey[] = record.proposals.map((p) => [p.height, p.round, p.block_hash])
    this.consensusRoot.transactionSync(() => {
      record.proposals.forEach((p, i) => {
        const id = refs[i].join('/')
        if (this.storedProposals.has(id)) return
        this.proposals.put(refs[i], p)
        this.storedProposals.add(id)
      })
      this.consensus.put('record', { ...record, proposals: refs })
    })
  }

  consensusRecord (): ConsensusRecord | undefined {
    const stored = this.consensus.get('record')
    if (stored === undefined) return undefined
    const proposals: Proposal[] = []
    for (const key of stored.proposals) {
      const p = this.proposals.get(key)
      if (p === undefined) throw new Error(`consensus record refers to proposal ${key.join('/')} that is not stored; refusing to start`)
      proposals.push(p)
    }
    return { ...stored, proposals }
  }

  /** Persists a mempool entry; resolves once it is synced to disk. */
  async putPending (record: PendingRecord): Promise<void> {
    await this.mempool.put(record.tx.id, record)
    await this.root.flushed
  }

  async removePending (ids: string[]): Promise<void> {
    if (ids.length === 0) return
    await this.root.transaction(() => { for (const id of ids) this.mempool.remove(id) })
  }

  /** Persisted mempool, in admission order. */
  pending (): PendingRecord[] {
    const records: PendingRecord[] = []
    for (const { value } of this.mempool.getRange()) records.push(value)
    return records.sort((a, b) => a.seq - b.seq)
  }

  /**
   * Fills this new store from a verified snapshot: its state entries (a store transaction per
   * batch), then, in one last transaction, the head at the snapshot's block with the block's
   * header and certificate. The block's transactions and every earlier height are not held
   * (earliestBody is the height after it). The caller builds the store aside and moves it into
   * place once this resolves, so a crash never leaves a node on half a snapshot.
   */
  async restoreSnapshot (batches: AsyncIterable<Array<[string, StateValue]>>, at: SnapshotPoint): Promise<void> {
    if (this.meta.get('head') !== undefined) throw new Error('a snapshot is restored into a new store only')
    for await (const batch of batches) {
      await this.root.transaction(() => { for (const [key, value] of batch) this.stateDb.put(key, value) })
    }
    const { header } = at
    await this.root.transaction(() => {
      this.blocks.put(header.height, { block: { header, last_commit: null }, hash: at.hash, commit: at.commit })
      this.meta.put('state_hash', Buffer.from(at.stateHash.bytes()))
      this.meta.put('pruned_below', header.height + 1)
      this.meta.put('restored_at', header.height)
      const head: ChainHead = { height: header.height, hash: at.hash, state_root: header.state_root, time: header.time }
      this.meta.put('head', head)
      this.meta.put('chain_id', at.chainId)
      this.meta.put('genesis_hash', at.genesisHash)
    })
    await this.root.flushed
  }

  override async close (): Promise<void> {
    await Promise.all([this.root.flushed, this.consensusRoot.flushed])
    await Promise.all([this.root.close(), this.consensusRoot.close()])
  }
}
