/** Blocks: header, hash, transaction root, and the commit certificate of the previous block. */
import { z } from 'zod'
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
  /** the state hash after this block (StateHash.digest), from the genesis' state_hash_height on */
  state_hash?: string
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

/** A sha256 as 64 lowercase hex characters: block, transaction-root and state hashes. */
export const HashSchema = z.string().regex(/^[0-9a-f]{64}$/)
const Hash = HashSchema
const Pubkey = z.string().regex(/^[0-9a-f]{64}$/)
const Height = z.number().int().min(0)

/** A header as it comes from a peer or a snapshot file, before anything checks what it says. */
export const BlockHeaderSchema = z.object({
  chain_id: z.string(),
  height: Height,
  time: z.number().int().min(0),
  prev_hash: Hash,
  tx_root: Hash,
  state_root: Hash,
  proposer: Pubkey,
  last_commit_hash: z.string(),
  state_hash: Hash.optional()
})

export const CommitSchema = z.object({
  height: Height,
  round: z.number().int().min(0).max(1_000_000),
  block_hash: Hash,
  signatures: z.array(z.object({ validator: Pubkey, signature: z.string().min(1).max(200) })).max(10_000)
})

export interface Block {
  header: BlockHeader
  txs: Transaction[]
  /** the commit certificate of block height-1; null at height 1 */
  last_commit: Commit | null
}

export function blockHash (header: BlockHeader): string {
  const fields: Array<string | number> = [
    header.chain_id, header.height, header.time, header.prev_hash, header.tx_root,
    header.state_root, header.proposer, header.last_commit_hash
  ]
  // a ninth element, so a header with it never hashes like one without
  if (header.state_hash !== undefined) fields.push(header.state_hash)
  return sha256Hex(Buffer.from(JSON.stringify(fields), 'utf8'))
}

/** Whether blocks at `height` carry the state hash in their header (the genesis' state_hash_height). */
export function headerCarriesStateHash (params: { state_hash_height?: number }, height: number): boolean {
  return params.state_hash_height !== undefined && height >= params.state_hash_height
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

/**
 * A block on top of its parent: the header's links and roots, and the state hash from the
 * genesis' state_hash_height on. The proposer and any block generator assemble blocks here.
 */
export function assembleBlock (parts: {
  chainId: string
  params: { state_hash_height?: number }
  height: number
  time: number
  prevHash: string
  txs: Transaction[]
  stateRoot: string
  /** StateHash.digest() after the block */
  stateHash: string
  proposer: string
  lastCommit: Commit | null
}): Block {
  return {
    header: {
      chain_id: parts.chainId,
      height: parts.height,
      time: parts.time,
      prev_hash: parts.prevHash,
      tx_root: txRoot(parts.txs),
      state_root: parts.stateRoot,
      proposer: parts.proposer,
      last_commit_hash: commitHash(parts.lastCommit),
      ...(headerCarriesStateHash(parts.params, parts.height) ? { state_hash: parts.stateHash } : {})
    },
    txs: parts.txs,
    last_commit: parts.lastCommit
  }
}
