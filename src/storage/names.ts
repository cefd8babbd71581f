/** The lmdb databases of a chain store, shared by the store and the snapshot reader. */
export const CHAIN_DBS = {
  meta: 'meta',
  state: 'state',
  blocks: 'blocks',
  summaries: 'block_summaries',
  bodies: 'block_bodies',
  addrBlocks: 'addr_blocks',
  addrCount: 'addr_count',
  mempool: 'mempool'
} as const

/**
 * Tables of stores written before block bodies (a record and an id entry per transaction, an
 * address-history entry per transaction): moved into the tables above when such a store opens.
 */
export const LEGACY_CHAIN_DBS = {
  txs: 'txs',
  txIds: 'tx_ids',
  addr: 'addr'
} as const
