/** The node: home directory, configuration, and KithNode, which ties store, mempool and consensus together. */
export * from './config.js'
export * from './home.js'
export * from './node.js'
export { denyListFromEnv } from './faults.js'
export { allocatedBytes, watchChainDisk } from './disk-limit.js'
export { LagGate, watchEventLoop, DEFAULT_LAG_GATE, type LagGateOptions } from './lag-gate.js'
