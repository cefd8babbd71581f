/** The libp2p host's options from a home and its configuration: the node's host and state sync's use the same. */
import type { Logger } from 'pino'
import { seedOf } from '../crypto/index.js'
import type { Home, NodeConfig } from '../node/index.js'
import type { P2POptions } from '../p2p/index.js'
import { NODE_VERSION, PROTOCOL_VERSION } from '../release/index.js'

export function p2pOptions (home: Home, config: NodeConfig, logger: Logger, denyPeers: (() => Set<string>) | undefined): P2POptions {
  return {
    nodeKeySeed: seedOf(home.nodeKey),
    listen: config.p2p_listen,
    peers: config.peers,
    chainId: home.genesis.chain_id,
    nodeVersion: NODE_VERSION,
    protocolVersion: PROTOCOL_VERSION,
    logger: logger.child({ module: 'libp2p' }),
    ...(denyPeers !== undefined ? { denyPeers } : {})
  }
}
