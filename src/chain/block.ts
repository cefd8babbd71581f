/** Blocks: header, hash, transaction root, and the commit certificate of the previous block. */
import { sha256, sha256Hex } from '../crypto/index.js'
import { txHash, wholeTx, type Transaction } from './tx.js'

export interface BlockHeader {
  chain_id: string
  height: number
  /** unix ms, strictly increasing */
  time: number
  /** hash of the previous block; the genesis hash for height 1 */
  prev_hash: string
  tx_root: string
  /** root of the state after this block's transactions */
  state_root: string
  /** validator pubkey that proposed the block */
  proposer: string
  /** hash of last_commit (empty string at height 1) */
  last_commit_hash: string
}

export interface CommitSignature {
  validator: string
  /** base64 Ed25519 signature over the precommit sign bytes */
  signature: string
}

/** A +2/3 certificate for one block: the precommits of its validators. */
export interface Commit {
  height: number
  round: number
  block_hash: string
  signatures: CommitSignature[]
}

export interface Block {
  header: BlockHeader
  txs: Transaction[]
  /** the commit certificate of block height-1; null at height 1 */
  last_commit: Commit | null
}

export function blockHash (header: BlockHeader): string {
  return sha256Hex(Buffer.from(JSON.stringify([
    header.chain_id, header.height, header.time, header.prev_hash, header.tx_root,
    header.state_root, header.proposer, header.last_commit_hash
  ]), 'utf8'))
}

export function txRoot (txs: readonly Transaction[]): string {
  return sha256(...txs.map(txHash)).toString('hex')
}

/** The tx root and the block's size in the bounds' measure (txSize), from one serialisation of each transaction. */
export function txRootAndBytes (txs: readonly Transaction[]): { root: string, bytes: number } {
  let bytes = 0
  const leaves = txs.map((tx) => {
    const whole = wholeTx(tx)
    bytes += whole.length
    return sha256(whole)
  })
  return { root: sha256(...leaves).toString('hex'), bytes }
}

export function commitHash (commit: Commit | null): string {
  if (commit === null) return ''
  return sha256Hex(Buffer.from(JSON.stringify([
    commit.height, commit.round, commit.block_hash, commit.signatures.map((s) => [s.validator, s.signature])
  ]), 'utf8'))
}
