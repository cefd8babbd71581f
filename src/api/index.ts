/** The HTTP adapter over a node's ChainView; it also hosts the real-time gateway (src/realtime) on its server. */
export { createApi, type ApiOptions, type ApiServer } from './server.js'
export { EdgeThreads, newEdgeSecret, type EdgeThreadsOptions } from './edge/edge-threads.js'
export type { EdgeMedia } from './edge/protocol.js'
export { STATUS_BY_CODE } from './errors.js'
export { FEATURES } from './routes/chain.js'
export type { OnboardingOptions } from './routes/onboarding.js'
/** The wire types of the API's answers (what its zod schemas infer), for the explorer's page; type-only, so nothing here reaches the browser. */
export type {
  AddressSummary, AddressTx, BlockSummary, NetStats, NetworkInfo, NodeVersion, Peers, TxDetail, Validators
} from './schemas.js'
export type { ContractInfo, ContractList, ContractLog, ContractLogs, ContractStateValue, WellKnownContracts } from './routes/contracts.js'
export type { Devices, Identity } from './routes/identity.js'
export type { Limits } from './limits.js'
