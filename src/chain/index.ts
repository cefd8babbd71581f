/**
 * The chain: transactions, blocks, genesis and the pure state transition. Nothing in here does
 * I/O; the node feeds it state readers and stores the write sets it returns.
 */
export * from './address.js'
export * from './amount.js'
export * from './block.js'
export * from './canonical-json.js'
export * from './genesis.js'
export * from './ledger.js'
export * from './limits.js'
export * from './state.js'
export * from './transition.js'
export * from './tx.js'
export * from './validators.js'
export { TX_RULES, relayFeeText, deployFee, deployToPrepare } from './rules/index.js'
export { MAX_NICKNAME_CHARS, MAX_DEVICE_NAME_CHARS, MAX_DEVICES } from './rules/identity.js'
export * from './registry.js'
export * from './posts.js'
export * from './contracts.js'
export type { BlockContext, CreatePostPayload, TxRule } from './rules/index.js'

// Accounts and the generic transaction builder, shared by the client (which re-exports them) and the relay's fee collector.
export * from './build.js'
