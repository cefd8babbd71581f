/** The `kith` command line: init, start (and start --dev), testnet, sidecar, update, and the wallet (wallet/). See docs and decisions.md. */
import { readFile, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { join, resolve } from 'node:path'
import { Command, Option } from 'commander'
import { pino } from 'pino'
import { createApi, type OnboardingOptions } from '../api/index.js'
import { explorerSite } from '../explorer/index.js'
import { accountFrom, type Account } from '../client/index.js'
import { P2PHost } from '../p2p/index.js'
import { Contracts, ownsMailbox } from '../chain/index.js'
import { RelayFees, RelayService, readRelayEnv, sealKeyFromEd25519 } from '../relay/index.js'
import { FeedService, readPendingLimits } from '../feed/index.js'
import { MediaScrubber, readMediaEnv } from '../media/index.js'
import { readRealtimeEnv } from '../realtime/index.js'
import { NODE_VERSION, PROTOCOL_VERSION } from '../version.js'
import { stopOnSignals } from './shutdown.js'
import { createTestnet } from './testnet.js'
import { registerSidecarCommand } from './sidecar.js'
import { registerUpdateCommand } from './update.js'
import { registerWalletCommands } from './wallet/index.js'
import { VerifyPool, generateKeyPair, keyPairFromSeed, seedOf, toHex } from '../crypto/index.js'
import { isPubkeyHex } from '../chain/index.js'
import { NodeMetrics } from '../metrics/index.js'
import { followParent, needsRelaunch, relaunch, resourceCaps } from './resource-caps.js'
import { getHeapStatistics } from 'node:v8'
import {
  DEFAULT_LAG_GATE, DEPRECATED_NAMES, LagGate, START_FLAGS, denyListFromEnv, exists, initHome, loadHome, parseListenAddr, readEnv, resolveConfigLayers, watchChainDisk, watchEventLoop,
  KithNode, type NodeConfig
} from '../node/index.js'

const DEV_HOME = '.kith'
/** µT credited to the dev account of `start --dev`: one million T. */
const DEV_ACCOUNT_UT = 1_000_000 * 1_000_000
const SHUTDOWN_GRACE_MS = 10_000

function parseAlloc (value: string, previous: Array<{ pub_key: string, amount_ut: number }> = []): Array<{ pub_key: string, amount_ut: number }> {
  const [pub, amount] = value.split('=')
  const ut = Number(amount)
  if (pub === undefined || !isPubkeyHex(pub) || !Number.isSafeInteger(ut) || ut < 0) {
    throw new Error(`--alloc expects PUBKEY=UT with a 64-character lowercase hex pubkey and a whole number of µT, got "${value}"`)
  }
  return [...previous, { pub_key: pub, amount_ut: ut }]
}

function collect (value: string, previous: string[] = []): string[] {
  return [...previous, value]
}

function flagValues (opts: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [old, { flag }] of Object.entries(DEPRECATED_NAMES)) {
    const name = flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())
    if (opts[name] !== undefined) out[old] = opts[name]
  }
  for (const def of START_FLAGS) {
    const name = def.flag.slice(2).split(' ')[0].replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())
    const raw = opts[name]
    if (raw === undefined) continue
    if (def.kind === 'int' || def.kind === 'number') {
      const n = Number(raw)
      if (!Number.isFinite(n)) throw new Error(`${def.flag.split(' ')[0]} expects a number, got "${String(raw)}"`)
      out[def.key] = n
    } else {
      out[def.key] = raw
    }
  }
  return out
}

async function initDevHome (home: string, alloc: Array<{ pub_key: string, amount_ut: number }>): Promise<void> {
  const dev = generateKeyPair()
  const devPub = toHex(dev.publicKey)
  await initHome(home, {
    chainId: 'kith-dev',
    alloc: [{ pub_key: devPub, amount_ut: DEV_ACCOUNT_UT }, ...alloc],
    config: {
      http_addr: ':8080',
      p2p_listen: ['/ip4/127.0.0.1/tcp/4001'],
      // the dev account doubles as the onboarding faucet, so apps can sign up against a dev node
      onboarding: { enabled: true, key_file: 'dev_account.json', amount_ut: 20_000, per_ip_interval_s: 0, per_key_interval_s: 60 }
    }
  })
  await writeFile(join(home, 'dev_account.json'), JSON.stringify({ type: 'ed25519', pub_key: devPub, seed: toHex(seedOf(dev)) }, null, 2) + '\n', { mode: 0o600 })
  console.log(`initialised dev network in ${home}; dev account ${devPub} holds 1000000 T (key in ${join(home, 'dev_account.json')})`)
}

async function onboardingOptions (home: string, config: NodeConfig): Promise<OnboardingOptions> {
  const o = config.onboarding
  let faucet: Account | undefined
  if (o.enabled) {
    const file = JSON.parse(await readFile(resolve(home, o.key_file), 'utf8')) as { seed?: string }
    if (typeof file.seed !== 'string') throw new Error(`onboarding key file ${o.key_file} has no seed`)
    faucet = accountFrom(keyPairFromSeed(Buffer.from(file.seed, 'hex')))
  }
  return { faucet, amountUt: o.amount_ut, perIpIntervalMs: o.per_ip_interval_s * 1000, perKeyIntervalMs: o.per_key_interval_s * 1000, now: Date.now }
}

async function start (opts: Record<string, unknown>): Promise<void> {
  const dev = opts.dev === true
  const homeArg = opts.home as string | undefined
  if (homeArg === undefined && !dev) throw new Error('start needs --home DIR (or --dev)')
  const home = resolve(homeArg ?? DEV_HOME)
  const alloc = opts.alloc as Array<{ pub_key: string, amount_ut: number }> | undefined
  const created = await exists(join(home, 'genesis.json'))
  // a genesis allocation cannot change an existing chain: say so rather than start without it
  if (alloc !== undefined && !dev) throw new Error('start takes --alloc only with --dev; for another home, give --alloc to bin/kith init when you create it')
  if (alloc !== undefined && created) {
    throw new Error(`--alloc only applies when --dev creates a new home, and ${home} already has a genesis. ` +
      `Fund a key from the dev account instead: bin/kith keys import ${join(home, 'dev_account.json')} --name dev, then bin/kith send <key> <amount> --key dev ` +
      `(or remove ${home} to start a new chain)`)
  }
  if (dev && !created) await initDevHome(home, alloc ?? [])
  const loaded = await loadHome(home)
  const { config, deprecated } = resolveConfigLayers(loaded.fileConfig, flagValues(opts))
  for (const old of deprecated) {
    const { key, flag } = DEPRECATED_NAMES[old]
    console.error(`warning: "${old}" (${flag}) is deprecated; use "${key}" (--${key.replace(/_/g, '-')}) instead`)
  }
  const caps = resourceCaps(config.max_cpu, config.max_ram_mb)
  if (needsRelaunch(caps)) {
    process.exitCode = await relaunch(caps)
    return
  }
  const env = readEnv()
  const logger = pino({ level: config.log_level, base: { pid: process.pid } })
  logger.info({
    maxCpu: config.max_cpu, maxRamMb: config.max_ram_mb, verifyWorkers: caps.verifyWorkers, imageWorkers: caps.imageWorkers, viewPairs: caps.viewPairs,
    uvThreads: process.env.UV_THREADPOOL_SIZE ?? 'default', heapLimitMb: Math.round(getHeapStatistics().heap_size_limit / 2 ** 20)
  }, 'resource caps')

  const verifyPool = new VerifyPool(caps.verifyWorkers)
  const lagGate = config.admission_max_lag_ms > 0 ? new LagGate({ ...DEFAULT_LAG_GATE, maxLagMs: config.admission_max_lag_ms }) : undefined
  const stopLagWatch = lagGate !== undefined ? watchEventLoop(lagGate) : () => {}
  const node = await KithNode.open({
    dataDir: loaded.dataDir,
    genesis: loaded.genesis,
    validatorKey: loaded.validatorKey,
    blockIntervalMs: config.block_interval_ms,
    mempool: { maxTxs: config.mempool_max_txs, maxBytes: config.mempool_max_bytes, maxPerSender: config.mempool_max_per_sender },
    logger,
    verifyPool,
    ...(lagGate !== undefined ? { lagGate } : {})
  })
  const relayEnv = readRelayEnv()
  // the relay identity that paid envelopes name is the node's account key
  const fees = RelayFees.open({ dataDir: loaded.dataDir, relayKey: loaded.validatorKey, node, logger })
  const relay = new RelayService({
    dataDir: loaded.dataDir,
    ttlMs: relayEnv.ttlMs,
    identity: relayEnv.disableInboxDelete ? undefined : { isLinked: (ed25519, x25519) => ownsMailbox(node.store, ed25519, x25519) },
    nodeSealKey: sealKeyFromEd25519(loaded.nodeKey.secretKey),
    requireReadAuth: relayEnv.requireReadAuth,
    limits: { maxStoredBytes: relayEnv.maxStoredBytes },
    admission: relayEnv.admission,
    logger: logger.child({ module: 'relay' }),
    feeCheck: fees.check
  })
  relay.start()
  fees.start((id) => relay.store.has(id))
  const scrubber = MediaScrubber.start({ env: readMediaEnv(), logger, ...(caps.imageWorkers !== undefined ? { workers: caps.imageWorkers } : {}) })
  // bodies are hosted under the node's account key, which CREATE_POST fees credit (as relay fees do)
  const feed = new FeedService({
    dataDir: loaded.dataDir,
    chain: { state: node.store, scan: (prefix) => node.store.scanState(prefix) },
    hostingRelay: node.validatorPub,
    scrubber,
    pendingLimits: readPendingLimits(),
    ...(caps.viewPairs !== undefined ? { maxViewPairs: caps.viewPairs } : {}),
    ...(config.feed_disk_limit_mb !== undefined ? { diskLimitBytes: config.feed_disk_limit_mb * 1024 * 1024 } : {}),
    logger: logger.child({ module: 'feed' })
  })
  // indexes are rebuilt before the node commits anything, then follow every committed block
  await feed.open()
  node.addSubmissionCheck((checked) => feed.checkSubmission(checked))
  node.events.on('block', (_summary, txs) => { feed.applyBlock(txs).catch((err: unknown) => logger.error({ err }, 'feed: applying a block failed')) })
  feed.start()
  const metrics = new NodeMetrics({
    height: () => node.head().height,
    round: () => node.engine.status().round,
    mempoolTxs: () => node.mempool.size,
    mempoolBytes: () => node.mempool.sizeBytes,
    peers: () => node.peers().filter((p) => p.connected).length,
    mailboxEnvelopes: () => relay.store.size.envelopes,
    mailboxDirs: [join(loaded.dataDir, 'relay')],
    feedBodyBytes: () => feed.diskUsedBytes,
    feedPosts: () => feed.index.size,
    contracts: () => Contracts.count(node.store),
    gasPrice: () => Contracts.gasPrice(node.store),
    contractDeploys: () => node.contractDeployStats()
  })
  node.events.on('block', (summary, txs, commit) => {
    metrics.observeBlock(summary.time, summary.tx_count, commit.round)
    for (const tx of txs) {
      const call = tx.type === 'CALL_CONTRACT' ? Contracts.call(node.store, tx.id) : undefined
      if (call !== undefined) metrics.observeContractCall(call.ok, call.gas_used)
    }
  })
  // Consensus state is restored whole before the network can say anything (restore is synchronous).
  node.start()
  const chainDisk = config.chain_disk_limit_mb !== undefined
    ? watchChainDisk({ file: join(loaded.dataDir, 'data.mdb'), limitMb: config.chain_disk_limit_mb, logger: logger.child({ module: 'node' }) })
    : undefined
  let p2p: P2PHost | undefined
  let api: ReturnType<typeof createApi> | undefined
  let address: AddressInfo
  /** Stops what has started, outside in: HTTP, libp2p, the feed and its scrubbers, the mailbox and its fee queue, the node, the verify workers. */
  const release = async (): Promise<void> => {
    chainDisk?.stop()
    stopLagWatch()
    await api?.close()
    await p2p?.stop()
    await feed.close()
    await scrubber.close()
    await relay.close()
    await fees.close()
    await node.stop()
    await verifyPool.close()
  }
  try {
    const denyPeers = denyListFromEnv()
    p2p = await P2PHost.create({
      nodeKeySeed: seedOf(loaded.nodeKey),
      listen: config.p2p_listen,
      peers: config.peers,
      chainId: loaded.genesis.chain_id,
      nodeVersion: NODE_VERSION,
      protocolVersion: PROTOCOL_VERSION,
      logger: logger.child({ module: 'libp2p' }),
      metricsRegistry: metrics.registry,
      ...(denyPeers !== undefined ? { denyPeers } : {})
    }, {
      onGossip: async (topic, data, via) => await node.network.onGossip(topic, data, via),
      onRequest: async (data, from) => await node.network.onRequest(data, from)
    })
    node.attachNetwork(p2p)
    node.network.attachRelay(relay)
    api = createApi({
      node, nodeId: p2p.peerId, env, logger,
      onboarding: await onboardingOptions(home, config),
      relay: { service: relay, rateLimitPerSender: relayEnv.rateLimitPerSender },
      feed,
      metrics,
      // a WebSocket message may carry what a POST body may
      realtime: readRealtimeEnv(process.env, { maxMessageBytes: env.maxBodyBytes }),
      explorer: env.disableExplorer ? undefined : explorerSite()
    })
    const { host, port } = parseListenAddr(config.http_addr)
    address = await api.listen(host, port)
  } catch (err) {
    // A port in use or a bad listen address: release what started, then report.
    await release()
    throw err
  }
  logger.info({ peerId: p2p.peerId, addrs: p2p.multiaddrs() }, 'p2p listening')
  const shownHost = address.family === 'IPv6' ? (address.address === '::' ? 'localhost' : `[${address.address}]`) : address.address
  logger.info({ url: `http://${shownHost}:${address.port}`, port: address.port, home }, 'http listening')

  stopOnSignals(logger, release, SHUTDOWN_GRACE_MS)
  followParent()
}

export function buildProgram (): Command {
  const program = new Command('kith').description('kith node: permissioned chain, encrypted relay mailbox, social feed').showHelpAfterError()

  program.command('init')
    .description('create a home directory: node key, validator key, config and a single-validator genesis')
    .requiredOption('--home <dir>', 'home directory to create')
    .option('--chain-id <id>', 'chain id', 'kith-local')
    .option('--alloc <pubkey=ut>', 'credit an Ed25519 pubkey (hex) with UT micro-tokens at genesis; may repeat', parseAlloc)
    .action(async (opts: { home: string, chainId: string, alloc?: Array<{ pub_key: string, amount_ut: number }> }) => {
      const home = await initHome(resolve(opts.home), { chainId: opts.chainId, alloc: opts.alloc ?? [] })
      console.log(JSON.stringify({
        home: home.dir,
        chain_id: home.genesis.chain_id,
        node_key: toHex(home.nodeKey.publicKey),
        validator_key: toHex(home.validatorKey.publicKey)
      }, null, 2))
    })

  const startCmd = program.command('start')
    .description('run the node until SIGINT/SIGTERM')
    .option('--home <dir>', 'home directory (default ./.kith with --dev)')
    .option('--dev', 'initialise a single-node dev network on first use, then start it')
    .option('--alloc <pubkey=ut>', 'with --dev on first use: extra genesis allocation; may repeat', parseAlloc)
  for (const def of START_FLAGS) {
    const option = new Option(def.flag, def.help)
    if (def.kind === 'list') option.argParser(collect)
    startCmd.addOption(option)
  }
  for (const { key, flag } of Object.values(DEPRECATED_NAMES)) startCmd.addOption(new Option(`${flag} <value>`, `deprecated: use --${key.replace(/_/g, '-')}`).hideHelp())
  startCmd.action(start)

  program.command('testnet')
    .description('write one home per validator, sharing one genesis, for a local network on 127.0.0.1')
    .requiredOption('--validators <n>', 'number of validators')
    .requiredOption('--output <dir>', 'directory for node0 … node{N-1}')
    .option('--base-port <p>', 'node i: HTTP on P+2i, libp2p on P+2i+1', '26000')
    .option('--chain-id <id>', 'chain id', 'kith-testnet')
    .option('--alloc <pubkey=ut>', 'credit an Ed25519 pubkey with UT µT at genesis; may repeat', parseAlloc)
    .action(async (opts: { validators: string, output: string, basePort: string, chainId: string, alloc?: Array<{ pub_key: string, amount_ut: number }> }) => {
      const nodes = await createTestnet({
        validators: Number(opts.validators),
        output: opts.output,
        basePort: Number(opts.basePort),
        chainId: opts.chainId,
        alloc: opts.alloc ?? []
      })
      console.log(JSON.stringify({ chain_id: opts.chainId, nodes }, null, 2))
    })
  registerSidecarCommand(program)
  registerUpdateCommand(program)
  registerWalletCommands(program)
  return program
}

export async function main (argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv)
  } catch (err) {
    console.error(`kith: ${err instanceof Error ? err.message : String(err)}`)
    process.exitCode = 1
  }
}
