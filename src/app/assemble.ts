/**
 * The node's assembly: one place that builds a running kith node from its configuration (the
 * chain node, the verify workers and the admission lag gate, the relay and its fee collector,
 * the media scrubber, the feed, the metrics, the libp2p host and the HTTP API), joins them, and
 * gives them one lifecycle. `start` starts the parts in order; `stop` stops them in the reverse
 * order, each exactly once; a part that fails to start releases every part started before it.
 * The command line (`kith start`) only turns flags and environment into `NodeAppConfig`.
 */
import { readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { Logger } from 'pino'
import { EdgeThreads, createApi, newEdgeSecret, type EdgeMedia, type OnboardingOptions } from '../api/index.js'
import { Contracts, accountFrom, ownsMailbox, type Account } from '../chain/index.js'
import { VerifyPool, keyPairFromSeed } from '../crypto/index.js'
import { explorerSite } from '../explorer/index.js'
import { FeedService, PublishDecoder, joinFeed, type PendingLimits } from '../feed/index.js'
import { DEFAULT_MAX_QUEUE, MediaScrubber, defaultImageWorkers, type MediaEnv } from '../media/index.js'
import { NodeMetrics } from '../metrics/index.js'
import {
  DEFAULT_LAG_GATE, KithNode, LagGate, parseListenAddr, watchChainDisk, watchEventLoop, type EnvSettings, type Home, type NodeConfig
} from '../node/index.js'
import { P2PHost } from '../p2p/index.js'
import type { RealtimeLimits } from '../realtime/index.js'
import { RelayFees, RelayService, sealKeyFromEd25519, type RelayEnv } from '../relay/index.js'
import { p2pOptions } from './p2p-options.js'
import { stateSyncIfNew } from './state-sync.js'

/** Everything a node is built from, read by the caller from flags, files and environment. */
export interface NodeAppConfig {
  /** the home directory as loaded: data dir, genesis, node and validator keys */
  home: Home
  /** the resolved configuration (config.json under flags) */
  config: NodeConfig
  /** what the resource caps allow: signature-verify workers, image workers, the feed's view pairs */
  caps: { verifyWorkers: number, imageWorkers: number | undefined, viewPairs: number | undefined, httpWorkers?: number }
  /** the API's environment settings */
  env: EnvSettings
  relay: RelayEnv
  media: MediaEnv
  realtime: RealtimeLimits
  pendingLimits: PendingLimits
  /** peers refused by the libp2p host (fault injection), when set */
  denyPeers: (() => Set<string>) | undefined
}

export interface NodeAppDeps {
  logger: Logger
}

/** A node with one lifecycle. */
export interface NodeApp {
  /**
   * Starts every part in order and resolves once HTTP listens (logging "p2p listening", then
   * "http listening"). If a part fails, or `signal` aborts, the parts already started are stopped
   * (in reverse order) and the promise rejects.
   */
  start (signal?: AbortSignal): Promise<void>
  /** Stops what has started, in the reverse order of start, each part once; later calls wait for the first. */
  stop (): Promise<void>
}

interface Part { name: string, stop: () => void | Promise<void> }

export function createNode (app: NodeAppConfig, deps: NodeAppDeps): NodeApp {
  const parts: Part[] = []
  const stopping = new AbortController()
  let starting: Promise<void> | undefined
  let stopped: Promise<void> | undefined

  /** Stops the started parts, last first; a part that fails to stop does not keep the others running. */
  const release = async (): Promise<void> => {
    let firstError: unknown
    for (let part = parts.pop(); part !== undefined; part = parts.pop()) {
      try {
        await part.stop()
      } catch (err) {
        deps.logger.error({ err, part: part.name }, 'stopping a part failed')
        firstError ??= err
      }
    }
    if (firstError !== undefined) throw firstError
  }

  const run = async (signal: AbortSignal | undefined): Promise<void> => {
    const { home, config, caps } = app
    const { logger } = deps
    const check = (): void => { signal?.throwIfAborted(); stopping.signal.throwIfAborted() }
    const started = (name: string, stop: () => void | Promise<void>): void => { parts.push({ name, stop }); check() }

    check()
    const verifyPool = new VerifyPool(caps.verifyWorkers)
    started('verify workers', async () => await verifyPool.stop())
    const lagGate = config.admission_max_lag_ms > 0 ? new LagGate({ ...DEFAULT_LAG_GATE, maxLagMs: config.admission_max_lag_ms }) : undefined
    if (lagGate !== undefined) started('event-loop lag watch', watchEventLoop(lagGate))
    await stateSyncIfNew(home, config, logger, app.denyPeers, signal !== undefined ? AbortSignal.any([signal, stopping.signal]) : stopping.signal)
    check()
    const node = await KithNode.open({
      dataDir: home.dataDir,
      genesis: home.genesis,
      validatorKey: home.validatorKey,
      blockIntervalMs: config.block_interval_ms,
      emptyBlocks: config.empty_blocks,
      emptyBlockIntervalMs: config.empty_block_interval_ms,
      pruneKeepBlocks: config.prune_keep_blocks,
      snapshots: { interval: config.snapshot_interval, keep: config.snapshot_keep },
      restoreGuard: config.restore_guard,
      mempool: { maxTxs: config.mempool_max_txs, maxBytes: config.mempool_max_bytes, maxPerSender: config.mempool_max_per_sender },
      logger,
      verifyPool,
      ...(lagGate !== undefined ? { lagGate } : {})
    })
    started('node', async () => await node.stop())
    // the relay identity that paid envelopes name is the node's account key
    const fees = RelayFees.open({ dataDir: home.dataDir, relayKey: home.validatorKey, node, logger })
    started('relay fees', async () => await fees.stop())
    const relay = new RelayService({
      dataDir: home.dataDir,
      ttlMs: app.relay.ttlMs,
      identity: app.relay.disableInboxDelete ? undefined : { isLinked: (ed25519, x25519) => ownsMailbox(node.state, ed25519, x25519) },
      nodeSealKey: sealKeyFromEd25519(home.nodeKey.secretKey),
      requireReadAuth: app.relay.requireReadAuth,
      limits: { maxStoredBytes: app.relay.maxStoredBytes },
      admission: app.relay.admission,
      logger: logger.child({ module: 'relay' }),
      feeCheck: fees.check
    })
    relay.start()
    started('relay', async () => await relay.stop())
    fees.start((id) => relay.hasEnvelope(id))
    // With HTTP edge threads, every publish is decoded and its attachment scrubbed on the edge that
    // took it (the edges share the image workers); on one thread, here.
    const edgeCount = caps.httpWorkers ?? 0
    const scrubber = edgeCount === 0 ? MediaScrubber.start({ env: app.media, logger, ...(caps.imageWorkers !== undefined ? { workers: caps.imageWorkers } : {}) }) : undefined
    if (scrubber !== undefined) started('media scrubber', async () => await scrubber.stop())
    // large publish bodies are decoded on as many threads as signatures are verified on
    const decoder = edgeCount === 0 ? new PublishDecoder({ workers: caps.verifyWorkers, logger }) : undefined
    if (decoder !== undefined) started('publish decode workers', async () => await decoder.stop())
    // bodies are hosted under the node's account key, which CREATE_POST fees credit (as relay fees do)
    const feed = new FeedService({
      dataDir: home.dataDir,
      chain: { state: node.state, scan: (prefix) => node.scanState(prefix) },
      hostingRelay: node.validatorPub,
      ...(scrubber !== undefined ? { scrubber } : {}),
      ...(decoder !== undefined ? { decoder } : {}),
      pendingLimits: app.pendingLimits,
      ...(caps.viewPairs !== undefined ? { maxViewPairs: caps.viewPairs } : {}),
      ...(config.feed_disk_limit_mb !== undefined ? { diskLimitBytes: config.feed_disk_limit_mb * 1024 * 1024 } : {}),
      logger: logger.child({ module: 'feed' })
    })
    // indexes are rebuilt before the node commits anything, then follow every committed block
    await feed.open()
    started('feed', async () => await feed.stop())
    // The feed's two phases: publish (a CREATE_POST submitted here must match the body published
    // here: a submission check), then commit (each committed block updates the feed's indexes).
    joinFeed(feed, node, logger)
    feed.start()
    const metrics = new NodeMetrics({
      height: () => node.head().height,
      round: () => node.round(),
      mempoolTxs: () => node.mempoolSize(),
      mempoolBytes: () => node.mempoolBytes(),
      peers: () => node.peers().filter((p) => p.connected).length,
      mailboxEnvelopes: () => relay.storedEnvelopes,
      mailboxDirs: [join(home.dataDir, 'relay')],
      feedBodyBytes: () => feed.diskUsedBytes,
      feedPosts: () => feed.livePostCount,
      contracts: () => Contracts.count(node.state),
      gasPrice: () => Contracts.gasPrice(node.state),
      contractDeploys: () => node.contractDeployStats()
    })
    node.events.on('block', (summary, txs, commit) => {
      metrics.observeBlock(summary.time, summary.tx_count, commit.round)
      for (const tx of txs) {
        const call = tx.type === 'CALL_CONTRACT' ? Contracts.call(node.state, tx.id) : undefined
        if (call !== undefined) metrics.observeContractCall(call.ok, call.gas_used)
      }
    })
    // Consensus state is restored whole before the network can say anything (restore is
    // synchronous); the node's stop (above) stops what this starts.
    node.start()
    check()
    if (config.chain_disk_limit_mb !== undefined) {
      const chainDisk = watchChainDisk({ file: join(home.dataDir, 'data.mdb'), limitMb: config.chain_disk_limit_mb, logger: logger.child({ module: 'node' }) })
      started('chain disk watch', () => chainDisk.stop())
    }
    const p2p = await P2PHost.create({
      ...p2pOptions(home, config, logger, app.denyPeers),
      metricsRegistry: metrics.registry
    }, node.networkHandlers())
    started('p2p', async () => await p2p.stop())
    node.attachNetwork(p2p)
    node.attachRelay(relay)
    // with edge threads, the API listens privately for them and they hold the public listener
    const edgeSecret = edgeCount > 0 ? newEdgeSecret() : undefined
    const api = createApi({
      node, nodeId: p2p.peerId, env: app.env, logger,
      onboarding: await onboardingOptions(home.dir, config),
      relay: { service: relay, rateLimitPerSender: app.relay.rateLimitPerSender },
      feed,
      metrics,
      realtime: app.realtime,
      explorer: app.env.disableExplorer ? undefined : explorerSite(),
      ...(edgeSecret !== undefined ? { edge: { secret: edgeSecret } } : {})
    })
    started('api', async () => await api.stop())
    const { host, port } = parseListenAddr(config.http_addr)
    let address = await api.listen(edgeSecret !== undefined ? '127.0.0.1' : host, edgeSecret !== undefined ? 0 : port)
    check()
    if (edgeSecret !== undefined) {
      const edges = await EdgeThreads.start({
        count: edgeCount,
        setup: {
          host, port, corePort: address.port, secret: edgeSecret, env: app.env, maxQueuedBytes: app.realtime.maxQueuedBytes, logLevel: config.log_level, calls: api.edgeCalls.kinds,
          chainDir: home.dataDir,
          media: edgeMedia(app.media, caps.imageWorkers, edgeCount)
        },
        logger,
        serve: async (call, ip, edge) => await api.edgeCalls.serve(call, ip, edge),
        debitRead: (ip) => api.edgeCalls.debitRead(ip),
        observe: (o) => metrics.observeHttp(o.method, o.route, o.status, o.seconds)
      })
      // the core's WebSockets get their close frame (1001) through the edges before these stop
      started('http edges', async () => { await api.closeStreams(); await edges.stop() })
      logger.info({ edges: edgeCount, corePort: address.port }, 'http edges listening; the core listens privately for them')
      address = edges.address
    }
    logger.info({ peerId: p2p.peerId, addrs: p2p.multiaddrs() }, 'p2p listening')
    const shownHost = address.family === 'IPv6' ? (address.address === '::' ? 'localhost' : `[${address.address}]`) : address.address
    logger.info({ url: `http://${shownHost}:${address.port}`, port: address.port, home: home.dir }, 'http listening')
  }

  return {
    async start (signal?: AbortSignal): Promise<void> {
      if (starting !== undefined) throw new Error('the node has already been started')
      starting = run(signal).catch(async (err: unknown) => {
        // a port in use, a bad listen address, an abort: release what started, then report
        await release().catch(() => {})
        throw err
      })
      await starting
    },
    async stop (): Promise<void> {
      stopped ??= (async () => {
        stopping.abort(new Error('the node is stopping'))
        await starting?.catch(() => {})
        await release()
      })()
      await stopped
    }
  }
}

/**
 * Each edge's share of the image workers and of their queue: the node's count split over the
 * edges, at least one each (so more edges than image workers means one worker per edge).
 */
function edgeMedia (env: MediaEnv, imageWorkers: number | undefined, edges: number): EdgeMedia {
  const workers = imageWorkers ?? defaultImageWorkers()
  return { env, workers: Math.max(1, Math.floor(workers / edges)), maxQueue: Math.max(1, Math.ceil(DEFAULT_MAX_QUEUE / edges)) }
}

async function onboardingOptions (homeDir: string, config: NodeConfig): Promise<OnboardingOptions> {
  const o = config.onboarding
  let faucet: Account | undefined
  if (o.enabled) {
    const file = JSON.parse(await readFile(resolve(homeDir, o.key_file), 'utf8')) as { seed?: string }
    if (typeof file.seed !== 'string') throw new Error(`onboarding key file ${o.key_file} has no seed`)
    faucet = accountFrom(keyPairFromSeed(Buffer.from(file.seed, 'hex')))
  }
  return { faucet, amountUt: o.amount_ut, perIpIntervalMs: o.per_ip_interval_s * 1000, perKeyIntervalMs: o.per_key_interval_s * 1000, now: Date.now }
}
