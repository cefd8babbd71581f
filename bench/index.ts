/**
 * `npm run bench`: the node's throughput benchmark (bench/throughput.ts) beside the physical
 * limits measured in the same run (openssl and libsodium Ed25519 verify/s on one core, and a
 * transaction's wire check by schema and by hand), then
 * the storage benchmark (bench/storage.ts) when it is present. Prints markdown to stdout,
 * progress to stderr. Exits 0 on success.
 *
 * Then the 4-validator network benchmark (bench/network.ts) unless --no-network, the same four
 * over an emulated WAN (bench/wan.ts: network namespaces, 0/50/100 ms RTT, 1 % loss; root only,
 * skipped with the reason otherwise) unless --no-wan, and the relay
 * mailbox benchmark (bench/relay.ts: broadcast rate and inbox latency over 1,000,000 stored
 * envelopes beside a bare Koa handler) unless --no-relay, and the media scrubbing benchmark
 * (bench/media.ts: one 12 MP JPEG through MediaScrubber beside vipsthumbnail) unless --no-media.
 *
 * Flags: --quick (one short run, no profile, no storage, short network phases), --no-profile,
 *        --no-storage, --duration-ms N, --concurrency 16,64,256, --http-workers 0,1 (the node's
 *        HTTP edge threads, each concurrency run with each), --json FILE (raw results);
 *        network: --no-network, --network-concurrency 64,256,512, --network-rate 500,1000,
 *        --network-duration-ms N, --network-profile (node 0 under --cpu-prof);
 *        relay: --no-relay; media: --no-media.
 *
 * Then the chain reads benchmark (bench/chain-reads.ts: GET /api/tx/{id}, /api/address/{pubkey}
 * and /api/blocks/{height} over committed transfers, with and without an HTTP edge thread, alone
 * and beside clients submitting transfers) unless --no-chain-reads.
 *
 * Then the feed benchmark (bench/feed.ts: listing latency over 10,000 and 1,000,000 posts beside a
 * bare Koa floor, and the event loop while photos are published and scrubbed) unless --no-feed;
 * --quick runs it at 10,000 posts with short phases, --no-profile skips its profiled run.
 *
 * Then the real-time benchmark (bench/realtime.ts: 10,000 WebSocket subscribers of blocks in
 * child processes, commit-to-receipt latency, memory per idle connection, and inbox-event latency
 * at 1,000 broadcasts/s) unless --no-realtime; --quick runs 1,000 subscribers briefly.
 *
 * Then the contract VM benchmark (bench/contracts-vm.ts: metering overhead of the same work loop
 * metered and unmetered, registry calls per second in the VM) and the registry on a node
 * (bench/contracts.ts: `register` calls confirmed per second) unless --no-contracts.
 *
 * Then the pruning benchmark (bench/pruning.ts: disk use of a 1,000,000-block chain before and
 * after `--prune-keep-blocks 100000`, and the time pruning takes) unless --no-pruning; --quick
 * runs 100,000 blocks.
 *
 * Then the state hash benchmark (bench/state-hash.ts: µs per committed transaction to keep the
 * LtHash of the state, beside the chained state root) unless --no-state-hash.
 *
 * Then the block commit benchmark (bench/commit.ts: µs per transaction of ChainStore.commitBlock
 * for blocks of 1,400 transfers, and reads of what it wrote) unless --no-commit.
 *
 * Then the snapshot benchmark (bench/snapshot.ts: import, export and start of a node on a
 * snapshot of 100,000 and 1,000,000 accounts, a new node joining by state sync from a peer that
 * offers it, and joining by replay) unless --no-snapshot; --quick runs 100,000.
 */
import { existsSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { TransactionSchema, accountFrom, buildTx, plainTransaction } from '../src/chain/index.js'
import { generateKeyPair, sign, verify } from '../src/crypto/index.js'
import { opensslEd25519Speed, type OpensslResult } from './lib/openssl.js'
import { machineInfo } from './lib/proc.js'
import { DEFAULT_NETWORK_CONFIG, QUICK_NETWORK_CONFIG, formatNetwork, runNetworkBench, type NetworkBenchConfig, type NetworkBenchResult } from './network.js'
import { QUICK_MEDIA_CONFIG, formatMediaBench, runMediaBench, type MediaBenchResult } from './media.js'
import { QUICK_FEED_CONFIG, formatFeedBench, runFeedBench, type FeedBenchConfig, type FeedBenchResult } from './feed.js'
import { QUICK_COMMIT_CONFIG, formatCommitBench, runCommitBench, type CommitBenchResult } from './commit.js'
import { QUICK_CHAIN_READS_CONFIG, formatChainReads, runChainReadsBench, type ChainReadsResult } from './chain-reads.js'
import { QUICK_RELAY_CONFIG, formatRelayBench, runRelayBench, type RelayBenchResult } from './relay.js'
import { QUICK_REALTIME_CONFIG, formatRealtimeBench, runRealtimeBench, type RealtimeBenchResult } from './realtime.js'
import { formatThroughput, runThroughputBench, type ThroughputConfig } from './throughput.js'
import { formatContractsBench, runContractsBench, type ContractsBenchResult } from './contracts-vm.js'
import { QUICK_PRUNING_CONFIG, formatPruningBench, runPruningBench, type PruningBenchResult } from './pruning.js'
import { formatStateHashBench, runStateHashBench, type StateHashBenchResult } from './state-hash.js'
import { QUICK_REPLAY_BLOCKS, QUICK_SNAPSHOT_ACCOUNTS, formatSnapshotBench, runSnapshotBench, type SnapshotBenchResult } from './snapshot.js'
import { DEFAULT_REGISTRY_CONFIG, QUICK_REGISTRY_CONFIG, formatRegistryBench, runRegistryBench, type RateResult } from './contracts.js'
import { QUICK_WAN_CONFIG, formatWanBench, runWanBench, type WanBenchResult } from './wan.js'

const log = (line: string): void => { console.error(line) }

function flag (name: string): string | undefined {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}

/**
 * libsodium (sodium-native) Ed25519 verifies per CPU second of this thread (what the node uses);
 * divided by CPU time, not wall time, like `openssl speed`, so other load does not lower it.
 */
function sodiumVerifyPerSec (seconds = 1): number {
  const { publicKey, secretKey } = generateKeyPair()
  const msgs = Array.from({ length: 64 }, (_, i) => Buffer.from(JSON.stringify({ id: `bench-${i}`, type: 'TRANSFER', pad: 'x'.repeat(300) })))
  const sigs = msgs.map((m) => sign(m, secretKey))
  const cpu0 = process.cpuUsage()
  const end = performance.now() + seconds * 1000
  let n = 0
  while (performance.now() < end) {
    for (let i = 0; i < msgs.length; i++) if (!verify(msgs[i], sigs[i], publicKey)) throw new Error('verify failed')
    n += msgs.length
  }
  const cpu = process.cpuUsage(cpu0)
  return n / ((cpu.user + cpu.system) / 1e6)
}

/**
 * CPU µs per transaction of the wire check of 20,000 distinct signed TRANSFERs, by
 * TransactionSchema (zod) and by the hand check tried first (plainTransaction), best of 3 passes.
 */
function txCheckUs (): { schemaUs: number, plainUs: number } {
  const from = accountFrom(generateKeyPair())
  const to = accountFrom(generateKeyPair())
  const txs: unknown[] = Array.from({ length: 20_000 }, (_, i) => JSON.parse(JSON.stringify(buildTx(from, { type: 'TRANSFER', to: to.pub, amount: 1 + i }))))
  const timed = (check: (raw: unknown) => unknown): number => {
    let bestUs = Infinity
    for (let pass = 0; pass < 3; pass++) {
      const cpu0 = process.cpuUsage()
      for (const raw of txs) if (check(raw) === undefined) throw new Error('a valid transaction was refused')
      const cpu = process.cpuUsage(cpu0)
      bestUs = Math.min(bestUs, (cpu.user + cpu.system) / txs.length)
    }
    return bestUs
  }
  return { schemaUs: timed((raw) => TransactionSchema.safeParse(raw).data), plainUs: timed(plainTransaction) }
}

function fmt (x: number): string {
  return Math.round(x).toLocaleString('en-US')
}

async function main (): Promise<void> {
  const quick = process.argv.includes('--quick')
  const machine = machineInfo()
  const out: string[] = []
  out.push('# kith benchmarks', '',
    `- date: ${machine.date}`,
    `- machine: ${machine.nproc} cores, ${machine.cpuModel}, ${machine.memTotal} RAM, ${machine.kernel}`,
    `- node: ${process.version}; load average at start: ${machine.loadavg}`, '')

  log('openssl speed -seconds 3 ed25519...')
  const openssl: OpensslResult = await opensslEd25519Speed(3)
  log('libsodium verify rate...')
  const sodium = sodiumVerifyPerSec(1)
  log('transaction wire check, schema and by hand...')
  const txCheck = txCheckUs()

  const config: Partial<ThroughputConfig> = {}
  if (quick) Object.assign(config, { concurrencies: [64], durationMs: 5000, poolSize: 40_000, profile: null })
  const duration = flag('--duration-ms')
  if (duration !== undefined) config.durationMs = Number(duration)
  const conc = flag('--concurrency')
  if (conc !== undefined) config.concurrencies = conc.split(',').map(Number)
  if (process.argv.includes('--no-profile')) config.profile = null
  const edges = flag('--http-workers')
  if (edges !== undefined) config.httpWorkers = edges.split(',').map(Number)
  const throughput = await runThroughputBench(config, log)

  const best = throughput.runs.reduce((m, r) => (r.confirmedPerSec > m.confirmedPerSec ? r : m), throughput.runs[0])
  out.push('## Throughput: signed TRANSFERs, submit to commit', '', formatThroughput(throughput), '')
  out.push('## Physical limits on this machine', '',
    '| limit | per second | source |', '|---|--:|---|',
    openssl.available
      ? `| Ed25519 verify, one core, OpenSSL | ${fmt(openssl.verifyPerSec)} | \`openssl speed -seconds 3 ed25519\` (${openssl.version}), this run |`
      : `| Ed25519 verify, one core, OpenSSL | n/a | ${openssl.reason} |`,
    ...(openssl.available ? [`| Ed25519 sign, one core, OpenSSL | ${fmt(openssl.signPerSec)} | same |`] : []),
    `| Ed25519 verify, one core, libsodium (sodium-native, as the node uses it) | ${fmt(sodium)} | in-process loop, this run |`,
    `| a transaction's wire check, one core: TransactionSchema (zod) / the hand check tried first (plainTransaction) | ${fmt(1e6 / txCheck.schemaUs)} / ${fmt(1e6 / txCheck.plainUs)} (${txCheck.schemaUs.toFixed(2)} / ${txCheck.plainUs.toFixed(2)} µs each) | 20,000 signed TRANSFERs, CPU time, best of 3, this run |`,
    '| bare node:http, GET, 64 conns | 64,827 | wrk, measured on this machine type before the project began |',
    '| koa 3 + @koa/router, GET, 64 conns | 28,683 | wrk, same |',
    `| **kith node, confirmed TRANSFERs** | **${fmt(best.confirmedPerSec)}** (C=${best.concurrency}) | this run; target 5,000 |`, '')

  let network: NetworkBenchResult | undefined
  if (!process.argv.includes('--no-network')) {
    const netConfig: Partial<NetworkBenchConfig> = {}
    if (quick) Object.assign(netConfig, QUICK_NETWORK_CONFIG)
    const base = { ...DEFAULT_NETWORK_CONFIG, ...netConfig }
    const netDuration = flag('--network-duration-ms')
    const netConc = flag('--network-concurrency')
    const netRate = flag('--network-rate')
    if (base.saturation !== null) {
      netConfig.saturation = {
        concurrencies: netConc !== undefined ? netConc.split(',').map(Number) : base.saturation.concurrencies,
        durationMs: netDuration !== undefined ? Number(netDuration) : base.saturation.durationMs
      }
    }
    if (base.latency !== null) {
      netConfig.latency = {
        ratesPerSec: netRate !== undefined ? netRate.split(',').map(Number) : base.latency.ratesPerSec,
        durationMs: netDuration !== undefined ? Number(netDuration) : base.latency.durationMs
      }
    }
    if (process.argv.includes('--network-profile')) netConfig.profile = true
    network = await runNetworkBench(netConfig, log)
    out.push('## 4 validators on one machine', '', formatNetwork(network, { confirmedPerSec: best.confirmedPerSec, concurrency: best.concurrency }), '')
  }

  let wan: WanBenchResult | undefined
  if (!process.argv.includes('--no-wan')) {
    wan = await runWanBench(quick ? QUICK_WAN_CONFIG : {}, log)
    out.push('## 4 validators over an emulated WAN', '', formatWanBench(wan), '')
  }

  let relay: RelayBenchResult | undefined
  if (!process.argv.includes('--no-relay')) {
    relay = await runRelayBench(quick ? QUICK_RELAY_CONFIG : {}, log)
    out.push('## Relay mailbox', '', formatRelayBench(relay), '')
  }

  let chainReads: ChainReadsResult | undefined
  if (!process.argv.includes('--no-chain-reads')) {
    chainReads = await runChainReadsBench(quick ? QUICK_CHAIN_READS_CONFIG : {}, log)
    out.push('## Committed chain reads', '', formatChainReads(chainReads), '')
  }

  let media: MediaBenchResult | undefined
  if (!process.argv.includes('--no-media')) {
    media = await runMediaBench(quick ? QUICK_MEDIA_CONFIG : {}, log)
    out.push('## Media scrubbing', '', formatMediaBench(media), '')
  }

  let feed: FeedBenchResult | undefined
  if (!process.argv.includes('--no-feed')) {
    const feedConfig: Partial<FeedBenchConfig> = quick ? { ...QUICK_FEED_CONFIG } : {}
    if (process.argv.includes('--no-profile')) feedConfig.profile = null
    feed = await runFeedBench(feedConfig, log)
    out.push('## Feed', '', formatFeedBench(feed), '')
  }

  let realtime: RealtimeBenchResult | undefined
  if (!process.argv.includes('--no-realtime')) {
    realtime = await runRealtimeBench(quick ? QUICK_REALTIME_CONFIG : {}, log)
    out.push('## Real-time', '', formatRealtimeBench(realtime), '')
  }

  let contracts: ContractsBenchResult | undefined
  let registry: RateResult[] | undefined
  if (!process.argv.includes('--no-contracts')) {
    contracts = await runContractsBench(log, quick ? 5 : 15)
    out.push('## Contract VM', '', formatContractsBench(contracts), '')
    registry = await runRegistryBench(quick ? QUICK_REGISTRY_CONFIG : DEFAULT_REGISTRY_CONFIG)
    out.push('## Username registrations on one node', '', formatRegistryBench(registry), '')
  }

  let pruning: PruningBenchResult | undefined
  if (!process.argv.includes('--no-pruning')) {
    pruning = await runPruningBench(quick ? QUICK_PRUNING_CONFIG : {}, log)
    out.push('## Pruning', '', formatPruningBench(pruning), '')
  }

  let stateHash: StateHashBenchResult | undefined
  if (!process.argv.includes('--no-state-hash')) {
    stateHash = runStateHashBench(quick, log)
    out.push('## State hash', '', formatStateHashBench(stateHash), '')
  }

  let commit: CommitBenchResult | undefined
  if (!process.argv.includes('--no-commit')) {
    commit = await runCommitBench(quick ? QUICK_COMMIT_CONFIG : {}, log)
    out.push('## Block commit', '', formatCommitBench(commit), '')
  }

  let snapshot: SnapshotBenchResult | undefined
  if (!process.argv.includes('--no-snapshot')) {
    snapshot = quick ? await runSnapshotBench(QUICK_SNAPSHOT_ACCOUNTS, QUICK_REPLAY_BLOCKS, log) : await runSnapshotBench(undefined, undefined, log)
    out.push('## Snapshots', '', formatSnapshotBench(snapshot), '')
  }

  let storage: unknown
  const storageJs = path.join(path.dirname(fileURLToPath(import.meta.url)), 'storage.js')
  if (!quick && !process.argv.includes('--no-storage') && existsSync(storageJs)) {
    try {
      const mod = await import(pathToFileURL(storageJs).href) as { runStorageBench?: () => Promise<unknown>, formatStorageBench?: (r: unknown) => string }
      if (typeof mod.runStorageBench === 'function') {
        log('storage benchmark...')
        storage = await mod.runStorageBench()
        out.push('## Storage', '', typeof mod.formatStorageBench === 'function' ? mod.formatStorageBench(storage) : '```\n' + JSON.stringify(storage, null, 2) + '\n```', '')
      }
    } catch (err) {
      out.push('## Storage', '', `storage benchmark failed: ${err instanceof Error ? err.message : String(err)}`, '')
    }
  }

  console.log(out.join('\n'))
  const jsonFile = flag('--json')
  if (jsonFile !== undefined) writeFileSync(jsonFile, JSON.stringify({ machine, openssl, sodiumVerifyPerSec: sodium, txCheck, throughput, network, wan, relay, chainReads, media, feed, realtime, contracts, registry, pruning, stateHash, commit, snapshot, storage }, null, 2) + '\n')
}

main().then(() => { process.exitCode = 0 }, (err: unknown) => {
  console.error(err)
  process.exitCode = 1
})
