/**
 * Reads of the committed chain alone: what a block made true, nothing the mempool holds. The
 * node answers them from its store; an HTTP edge thread answers the same from its own read-only
 * view of the store's files (src/api/edge), so both give the same answer for the same height.
 */
import { Contracts, StateKeys, type CallRecord, type Transaction } from '../chain/index.js'
import type { BlockSummary, ChainHead, ChainReader, StoredBlock, StoredHeader } from '../storage/index.js'

export interface TxLookup {
  tx: Transaction
  /** absent while the transaction waits in the mempool */
  block?: { height: number, hash: string, time: number, index: number }
  /** what a confirmed CALL_CONTRACT did */
  call?: CallRecord
}

export type CommittedChain = Pick<ChainReader, 'get' | 'getTx' | 'getBlockSummary' | 'getBlock' | 'getHeader' | 'blockTxIds' | 'addressHistory' | 'head' | 'earliestBody'>

/** The reads of the chain that need only committed blocks: the routes behind /api/tx, /api/address and /api/blocks. */
export interface CommittedReads {
  head: () => ChainHead
  balance: (pubkey: string) => number
  /** a confirmed transaction; undefined when no committed block holds it (the node's ChainView finds a pending one too) */
  lookupTx: (id: string) => TxLookup | undefined
  /** confirmed transactions touching `pubkey`, newest first */
  addressHistory: (pubkey: string, limit: number) => { items: TxLookup[], count: number }
  blockSummary: (height: number) => BlockSummary | undefined
  /** undefined beyond the head and, on a pruned node, below `earliestBlockBody()` */
  storedBlock: (height: number) => StoredBlock | undefined
  /** a block's header and certificates; kept for pruned heights too */
  blockHeader: (height: number) => StoredHeader | undefined
  /** the ids of a block's transactions; undefined beyond the head and below `earliestBlockBody()` */
  blockTxIds: (height: number) => string[] | undefined
  /** the lowest height whose transactions this node holds (1 unless it prunes) */
  earliestBlockBody: () => number
}

export function numberAt (value: unknown): number {
  return typeof value === 'number' ? value : 0
}

export function committedReads (chain: CommittedChain): CommittedReads {
  const lookupTx = (id: string): TxLookup | undefined => {
    const stored = chain.getTx(id)
    if (stored === undefined) return undefined
    const summary = chain.getBlockSummary(stored.height) as BlockSummary
    const call = stored.tx.type === 'CALL_CONTRACT' ? Contracts.call(chain, id) : undefined
    return { tx: stored.tx, block: { height: stored.height, hash: summary.hash, time: summary.time, index: stored.index }, ...(call !== undefined ? { call } : {}) }
  }
  return {
    head: () => chain.head(),
    balance: (pubkey) => numberAt(chain.get(StateKeys.balance(pubkey))),
    lookupTx,
    addressHistory (pubkey, limit) {
      const { ids, count } = chain.addressHistory(pubkey, limit)
      return { items: ids.map(lookupTx).filter((item): item is TxLookup => item !== undefined), count }
    },
    blockSummary: (height) => chain.getBlockSummary(height),
    storedBlock: (height) => chain.getBlock(height),
    blockHeader: (height) => chain.getHeader(height),
    blockTxIds: (height) => chain.blockTxIds(height),
    earliestBlockBody: () => chain.earliestBody()
  }
}
