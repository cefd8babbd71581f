/** The HTTP adapter over a KithNode; it also hosts the real-time gateway (src/realtime) on its server. */
export { createApi, type ApiOptions, type ApiServer } from './server.js'
export { STATUS_BY_CODE } from './errors.js'
export { FEATURES } from './routes/chain.js'
export type { OnboardingOptions } from './routes/onboarding.js'
