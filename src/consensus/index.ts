/**
 * Consensus engines: pure state machines from inputs (heights, timeouts, proposals, votes) to
 * effects (timers, block requests, persistence, broadcasts, commits). The node's driver runs
 * the effects. One validator today; the BFT engine plugs into the same interface.
 */
export * from './types.js'
export * from './votes.js'
export { TendermintEngine, DEFAULT_TIMEOUTS, type TendermintOptions, type TimeoutConfig } from './tendermint.js'
