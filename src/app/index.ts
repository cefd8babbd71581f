/**
 * The application: the node's assembly, above api, p2p, relay, feed and node and below the
 * command line. `createNode(config, deps)` builds a node with one lifecycle (start, stop).
 */
export { createNode, type NodeApp, type NodeAppConfig, type NodeAppDeps } from './assemble.js'
export { ENV_SETTINGS, layeredEnv, readServiceSettings, unknownConfigKeys, type EnvSetting, type ServiceSettings, type SettingSource } from './settings.js'
