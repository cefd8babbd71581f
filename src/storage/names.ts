/** The lmdb databases of a chain store, shared by the store and the snapshot reader. */
export const CHAIN_DBS = {
  meta: 'meta',
  state: 'state',
  blocks: 'blocks',
  summaries: 'block_summaries',
  txs: 'txs',
  txIds: 'tx_ids',
  addr: 'addr',
  addrCount: 'addr_count',
  mempool: 'mempool'
} as const
