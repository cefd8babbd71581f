/**
 * `--state-sync` on a new home: before the node opens its store, a libp2p host that serves
 * nothing yet dials the configured peers, and StateSync (src/snapshot) builds the store from the
 * snapshot they offer. The host then stops; the node starts on the restored store as on any
 * other, and block sync brings it from the snapshot's height to the head.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { crashIfAt, type Home, type NodeConfig } from '../node/index.js'
import { P2PHost } from '../p2p/index.js'
import { StateSync } from '../snapshot/index.js'
import { p2pOptions } from './p2p-options.js'

export async function stateSyncIfNew (home: Home, config: NodeConfig, logger: Logger, denyPeers: (() => Set<string>) | undefined, signal: AbortSignal): Promise<void> {
  if (!config.state_sync) return
  const log = logger.child({ module: 'state-sync' })
  if (existsSync(join(home.dataDir, 'data.mdb'))) {
    log.info('this home already holds a chain: state sync is for a new one, so the node syncs blocks from its head')
    return
  }
  if (config.peers.length === 0) throw new Error('--state-sync needs a peer to fetch the snapshot from (--peer <multiaddr>)')
  const started = Date.now()
  const host = await P2PHost.create(p2pOptions(home, config, logger, denyPeers), {
    onGossip: () => 'ignore',
    onRequest: async () => { throw new Error('this node is state-syncing and serves nothing yet') }
  })
  try {
    const sync = new StateSync({
      dataDir: home.dataDir,
      genesis: home.genesis,
      trust: config.state_sync_trust_hash !== undefined ? { trustHash: config.state_sync_trust_hash } : {},
      network: {
        peers: () => host.peers().filter((p) => p.connected).map((p) => p.peerId),
        request: async (peer, data, timeoutMs) => await host.request(peer, data, { timeoutMs })
      },
      log,
      signal,
      afterChunk: () => { crashIfAt('state-sync-chunk') }
    })
    log.info({ peers: config.peers.length }, 'state sync: looking for a snapshot')
    const result = await sync.run()
    log.info({ ...result, ms: Date.now() - started }, 'state sync done')
  } finally {
    await host.stop()
  }
}
