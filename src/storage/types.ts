/** Records of the chain store that its readers share (the store and the snapshot reader). */
import type { Block, Commit, Transaction } from '../chain/index.js'

export interface ChainHead {
  height: number
  hash: string
  state_root: string
  /** block time, unix ms; genesis time at height 0 */
  time: number
}

export interface StoredBlock {
  block: Block
  hash: string
  /** the certificate that committed this block (the next block carries it as last_commit) */
  commit: Commit | null
}

/** What the store keeps of every block, pruned or not: all but its transactions. */
export type StoredHeader = Omit<StoredBlock, 'block'> & { block: Omit<Block, 'txs'> }

export interface BlockSummary {
  height: number
  hash: string
  time: number
  proposer: string
  tx_count: number
  /** the state hash after this block (StateHash.digest); absent in blocks stored before it was kept */
  state_hash?: string
}

export interface StoredTx {
  tx: Transaction
  height: number
  index: number
}
