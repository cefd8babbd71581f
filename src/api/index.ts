/** The HTTP (and later WebSocket) adapter over a KithNode. */
export { createApi, type ApiOptions, type ApiServer } from './server.js'
export { STATUS_BY_CODE } from './errors.js'
export { FEATURES } from './routes/chain.js'
export type { OnboardingOptions } from './routes/onboarding.js'
