/**
 * The chain node: home directory, configuration, and KithNode, assembled from rooms with one job
 * each (submission, blocks, commits, the consensus driver, the network's inbound and outbound
 * sides). Readers outside see it as a ChainView.
 */
export * from './config.js'
export * from './home.js'
export * from './node.js'
export { committedReads, type CommittedChain, type CommittedReads, type TxLookup } from './committed.js'
export { PRUNE_HEIGHTS_PER_BATCH } from './pruning.js'
export { crashIfAt, denyListFromEnv } from './faults.js'
export { allocatedBytes, watchChainDisk } from './disk-limit.js'
export { LagGate, watchEventLoop, DEFAULT_LAG_GATE, type LagGateOptions } from './lag-gate.js'
