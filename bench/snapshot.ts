/**
 * Snapshot benchmark (`kith snapshot export` and `import`, src/snapshot): how long a new node
 * takes to serve reads when it starts from a snapshot of a large state, and what the snapshot
 * costs to make.
 *
 * For each size (100,000 and 1,000,000 accounts): a synthetic snapshot of the genesis state plus
 * that many balances (bench/lib/synthetic-snapshot.ts) is imported into a new home (home A),
 * exported again from it (what an operator's backup costs), imported into another new home
 * (home B), and a node started on B until `GET /api/well-known-version` answers (time to serve
 * reads). Reported: file size, import and export time, entries per second, and the start.
 *
 * Then state sync: home A's node (the chain's validator) starts with the synthetic snapshot among
 * its own (data/snapshots/1.snapshot), and a new home of the chain starts with `--state-sync` and A
 * as its peer; timed from its spawn until it answers reads (the snapshot fetched over libp2p in
 * chunks, each checked, the store built aside and moved in place), then until it has block-synced
 * to A's head.
 *
 * Beside it, joining by replay: REPLAY_BLOCKS empty blocks are written into a validator's store
 * (bench/lib/synthetic-chain.ts), the validator is started with nothing to commit, and a new node
 * of the same chain syncs them from it over libp2p (block sync: each block checked against its
 * certificate and executed). Empty blocks are the cheapest to replay, so the rate is an upper
 * bound: a year at one block a second is 31,536,000 blocks.
 *
 * Run: node dist/bench/snapshot.js [--quick] [--accounts 100000,1000000] [--replay-blocks N, 0 for none]
 *  or: node dist/bench/snapshot.js --long-chain --accounts 1000000 --replay-blocks 1000000 (runLongChain: about 50 minutes)
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { formatTimestamp } from '../src/chain/index.js'
import { loadHome } from '../src/node/index.js'
import { SNAPSHOT_DIR, exportSnapshot, importSnapshot } from '../src/snapshot/index.js'
import { describeMachine, machineInfo } from './lib/proc.js'
import { freePort } from './lib/harness.js'
import { kithInit, startKith } from './lib/processes.js'
import { writeReplayableChain } from './lib/synthetic-chain.js'
import { syntheticAccount, writeSyntheticSnapshot } from './lib/synthetic-snapshot.js'

export const DEFAULT_SNAPSHOT_ACCOUNTS = [100_000, 1_000_000]
export const QUICK_SNAPSHOT_ACCOUNTS = [100_000]

export interface SnapshotRun {
  accounts: number
  entries: number
  chunks: number
  fileBytes: number
  generateMs: number
  importMs: number
  exportMs: number
  /** spawn of `kith start` on the imported home to its first answer */
  startMs: number
  /** spawn of `kith start --state-sync` on a new home to its first answer: the snapshot fetched from a peer over libp2p, checked, stored */
  stateSyncMs: number
  /** from that first answer until it had block-synced to its peer's head */
  followMs: number
}

export const DEFAULT_REPLAY_BLOCKS = 10_000
export const QUICK_REPLAY_BLOCKS = 3_000

export interface ReplayRun {
  blocks: number
  /** the validator's rate making them, blocks/s */
  makeRate: number
  syncMs: number
}

export interface SnapshotBenchResult {
  runs: SnapshotRun[]
  /** absent with --replay-blocks 0 */
  replay?: ReplayRun
  machine: string
}

async function heightOf (port: number): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/api/netstats`)
  return ((await res.json()) as { height: number }).height
}

async function until (done: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** A genesis time that leaves room for `blocks` blocks a second apart before now, as on a chain that has run that long. */
function chainStartFor (blocks: number): string {
  return formatTimestamp(Date.now() - (blocks + 60) * 1000)
}

/**
 * Joining by replay: a new node block-syncs `blocks` empty blocks from a validator that has them.
 * The chain is written straight into the validator's store (bench/lib/synthetic-chain.ts: real
 * headers, state roots, state hashes and certificates), so 1,000,000 blocks take minutes to make,
 * not the 11 days consensus would take at one a second.
 */
export async function runReplay (blocks: number, log: (line: string) => void): Promise<ReplayRun> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kith-replay-bench-'))
  try {
    const homeA = path.join(dir, 'validator')
    await kithInit(homeA)
    const genesisFile = path.join(homeA, 'genesis.json')
    writeFileSync(genesisFile, JSON.stringify({ ...JSON.parse(readFileSync(genesisFile, 'utf8')), genesis_time: chainStartFor(blocks) }))
    log(`replay: writing ${blocks.toLocaleString('en-US')} blocks...`)
    const t0 = performance.now()
    await writeReplayableChain(homeA, blocks, log)
    const makeRate = blocks / ((performance.now() - t0) / 1000)
    return { ...(await joinByReplay(homeA, path.join(dir, 'joiner'), log)), makeRate }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A new home joins the chain of `serverHome` by block sync from genesis; timed from its spawn until it reaches the server's head. */
async function joinByReplay (serverHome: string, home: string, log: (line: string) => void): Promise<{ blocks: number, syncMs: number }> {
  const p2pPort = await freePort()
  const listen = `/ip4/127.0.0.1/tcp/${p2pPort}`
  // started with nothing to commit and no heartbeat: the chain stays where it is
  const validator = await startKith({ home: serverHome, p2pListen: listen, args: ['--empty-blocks', 'false', '--empty-block-interval-ms', '0', '--snapshot-interval', '0'], log })
  try {
    const target = await heightOf(validator.port)
    const nodeId = ((await (await fetch(`http://127.0.0.1:${validator.port}/api/network-info`)).json()) as { node_id: string }).node_id
    await kithInit(home, ['--genesis', path.join(serverHome, 'genesis.json')])
    writeFileSync(path.join(home, 'config.json'), JSON.stringify({ peers: [`${listen}/p2p/${nodeId}`] }))
    log('replay: a new node syncs them...')
    const t1 = performance.now()
    const joiner = await startKith({ home, args: ['--snapshot-interval', '0'], log })
    await until(async () => (await heightOf(joiner.port)) >= target, 'block sync', 3 * 60 * 60_000)
    const syncMs = performance.now() - t1
    await joiner.stop()
    return { blocks: target, syncMs }
  } finally {
    await validator.stop()
  }
}

/** A new home joins the chain of `serverHome` (which offers `snapshotFile`, taken at `height`) by state sync. */
async function joinByStateSync (serverHome: string, snapshotFile: string, height: number, home: string, log: (line: string) => void): Promise<{ stateSyncMs: number, followMs: number }> {
  const server = await loadHome(serverHome)
  mkdirSync(path.join(server.dataDir, SNAPSHOT_DIR), { recursive: true })
  copyFileSync(snapshotFile, path.join(server.dataDir, SNAPSHOT_DIR, `${height}.snapshot`))
  const p2pPort = await freePort()
  const listen = `/ip4/127.0.0.1/tcp/${p2pPort}`
  // it keeps committing meanwhile (the synced node must catch up), and offers the snapshot given (its interval is too long to take one of its own)
  const validator = await startKith({ home: serverHome, p2pListen: listen, args: ['--block-interval-ms', '1000', '--empty-blocks', 'true', '--snapshot-interval', '1000000000'], log })
  try {
    const nodeId = ((await (await fetch(`http://127.0.0.1:${validator.port}/api/network-info`)).json()) as { node_id: string }).node_id
    await kithInit(home, ['--genesis', path.join(serverHome, 'genesis.json')])
    writeFileSync(path.join(home, 'config.json'), JSON.stringify({ peers: [`${listen}/p2p/${nodeId}`] }))
    const joiner = await startKith({ home, args: ['--state-sync'], timeoutMs: 10 * 60_000, log })
    const t0 = performance.now()
    const target = await heightOf(validator.port)
    await until(async () => (await heightOf(joiner.port)) >= target, 'following after state sync', 5 * 60_000)
    const followMs = performance.now() - t0
    await joiner.stop()
    return { stateSyncMs: joiner.startMs, followMs }
  } finally {
    await validator.stop()
  }
}

export interface LongChainRun {
  accounts: number
  blocks: number
  /** writing the blocks into the validator's store */
  writeMs: number
  /** the validator's store file afterwards */
  storeBytes: number
  /** exporting a snapshot at the head from the validator's store */
  snapshotMs: number
  snapshotBytes: number
  stateSyncMs: number
  followMs: number
  replayMs: number
}

/**
 * Both ways of joining one long chain: `accounts` balances in its genesis, then `blocks` empty
 * blocks; the validator offers a snapshot of its head. A new
 * home joins by state sync, another by replaying every block.
 */
export async function runLongChain (accounts: number, blocks: number, log: (line: string) => void): Promise<LongChainRun> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kith-long-chain-bench-'))
  try {
    const homeA = path.join(dir, 'validator')
    await kithInit(homeA)
    // the accounts are in the genesis, so the chain can be replayed from its first block
    log(`long chain: a genesis of ${accounts.toLocaleString('en-US')} accounts...`)
    const genesisFile = path.join(homeA, 'genesis.json')
    const genesis = JSON.parse(readFileSync(genesisFile, 'utf8')) as { genesis_time: string, alloc: Array<{ pub_key: string, amount_ut: number }> }
    for (let i = 0; i < accounts; i++) genesis.alloc.push({ pub_key: syntheticAccount(i), amount_ut: i + 1 })
    genesis.genesis_time = chainStartFor(blocks)
    writeFileSync(genesisFile, JSON.stringify(genesis))
    const a = await loadHome(homeA)
    log(`long chain: writing ${blocks.toLocaleString('en-US')} blocks...`)
    let t0 = performance.now()
    const head = await writeReplayableChain(homeA, blocks, log)
    const writeMs = performance.now() - t0
    const storeBytes = statSync(path.join(a.dataDir, 'data.mdb')).size
    log(`long chain: head ${head}, store ${(storeBytes / 2 ** 20).toFixed(0)} MiB; snapshot of the head...`)
    const file = path.join(dir, 'head.snapshot')
    t0 = performance.now()
    await exportSnapshot(a.dataDir, file)
    const snapshotMs = performance.now() - t0
    const snapshotBytes = statSync(file).size
    log('long chain: state sync...')
    const { stateSyncMs, followMs } = await joinByStateSync(homeA, file, head, path.join(dir, 'synced'), log)
    rmSync(path.join(dir, 'synced'), { recursive: true, force: true })
    log('long chain: replay...')
    const { syncMs } = await joinByReplay(homeA, path.join(dir, 'replayed'), log)
    return { accounts, blocks: head, writeMs, storeBytes, snapshotMs, snapshotBytes, stateSyncMs, followMs, replayMs: syncMs }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export function formatLongChain (r: LongChainRun, machine: string): string {
  return [
    `One chain of ${r.blocks.toLocaleString('en-US')} blocks and ${r.accounts.toLocaleString('en-US')} accounts, ${machine}:`,
    '',
    '| step | time, s | size, MiB |',
    '|---|--:|--:|',
    `| blocks written into the validator's store | ${seconds(r.writeMs)} (${perSecond(r.blocks, r.writeMs)} blocks/s) | ${(r.storeBytes / 2 ** 20).toFixed(0)} (store file) |`,
    `| snapshot of the head (export) | ${seconds(r.snapshotMs)} | ${(r.snapshotBytes / 2 ** 20).toFixed(0)} |`,
    `| join by state sync: spawn to first answer | ${seconds(r.stateSyncMs)} | |`,
    `| then to the validator's head | ${seconds(r.followMs)} | |`,
    `| join by replay: spawn to the validator's head | ${seconds(r.replayMs)} (${perSecond(r.blocks, r.replayMs)} blocks/s) | |`
  ].join('\n')
}

export async function runSnapshotBench (sizes: number[] = DEFAULT_SNAPSHOT_ACCOUNTS, replayBlocks = DEFAULT_REPLAY_BLOCKS, log: (line: string) => void = (l) => console.error(l)): Promise<SnapshotBenchResult> {
  const runs: SnapshotRun[] = []
  for (const accounts of sizes) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kith-snapshot-bench-'))
    try {
      const homeA = path.join(dir, 'a')
      await kithInit(homeA)
      const file = path.join(dir, 'synthetic.snapshot')
      log(`snapshot: ${accounts.toLocaleString('en-US')} accounts, generating...`)
      let t0 = performance.now()
      const manifest = await writeSyntheticSnapshot(homeA, accounts, file)
      const generateMs = performance.now() - t0
      const a = await loadHome(homeA)
      log('snapshot: import...')
      t0 = performance.now()
      await importSnapshot(file, a.dataDir, a.genesis)
      const importMs = performance.now() - t0
      log('snapshot: export...')
      const exported = path.join(dir, 'exported.snapshot')
      t0 = performance.now()
      const summary = await exportSnapshot(a.dataDir, exported)
      const exportMs = performance.now() - t0
      if (summary.state_hash !== manifest.header.state_hash) throw new Error('the export does not hash like the import')
      // a second home of the same chain, filled from the exported file, then started
      const homeB = path.join(dir, 'b')
      await kithInit(homeB, ['--genesis', path.join(homeA, 'genesis.json')])
      const b = await loadHome(homeB)
      await importSnapshot(exported, b.dataDir, b.genesis)
      log('snapshot: start...')
      const node = await startKith({ home: homeB, log })
      await node.stop()
      log('snapshot: state sync...')
      const { stateSyncMs, followMs } = await joinByStateSync(homeA, file, 1, path.join(dir, 'c'), log)
      runs.push({ accounts, entries: manifest.entries, chunks: manifest.chunks.length, fileBytes: statSync(exported).size, generateMs, importMs, exportMs, startMs: node.startMs, stateSyncMs, followMs })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  const replay = replayBlocks > 0 ? await runReplay(replayBlocks, log) : undefined
  return { runs, ...(replay !== undefined ? { replay } : {}), machine: describeMachine(machineInfo()) }
}

const seconds = (ms: number): string => (ms / 1000).toFixed(1)
const perSecond = (n: number, ms: number): string => Math.round(n / (ms / 1000)).toLocaleString('en-US')

export function formatSnapshotBench (r: SnapshotBenchResult): string {
  const replay = r.replay
  return [
    `Snapshots of the genesis state plus N accounts, ${r.machine}:`,
    '',
    '| accounts | entries | chunks | file, MiB | import, s (entries/s) | export, s (entries/s) | start to first answer, s | state sync: spawn to first answer, s | then to the head, s |',
    '|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    ...r.runs.map((x) => `| ${x.accounts.toLocaleString('en-US')} | ${x.entries.toLocaleString('en-US')} | ${x.chunks} | ${(x.fileBytes / 2 ** 20).toFixed(0)} | ` +
      `${seconds(x.importMs)} (${perSecond(x.entries, x.importMs)}) | ${seconds(x.exportMs)} (${perSecond(x.entries, x.exportMs)}) | ${seconds(x.startMs)} | ` +
      `${seconds(x.stateSyncMs)} | ${seconds(x.followMs)} |`),
    ...(replay === undefined
      ? []
      : ['', `Joining by replay instead: a new node had block-synced ${replay.blocks.toLocaleString('en-US')} empty blocks from a validator ${seconds(replay.syncMs)} s after its spawn, ` +
        `${perSecond(replay.blocks, replay.syncMs)} blocks/s with its start-up counted (written into the validator's store at ${Math.round(replay.makeRate).toLocaleString('en-US')} blocks/s). ` +
        `At that rate 1,000,000 blocks take ${seconds(1_000_000 / (replay.blocks / replay.syncMs))} s and a year at one block a second ` +
        `${(31_536_000 / (replay.blocks / replay.syncMs) / 3_600_000).toFixed(1)} h, before any transaction is executed.`])
  ].join('\n')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href && process.argv.includes('--long-chain')) {
  const arg = (flag: string, fallback: number): number => process.argv.includes(flag) ? Number(process.argv[process.argv.indexOf(flag) + 1]) : fallback
  const accounts = arg('--accounts', 1_000_000)
  const blocks = arg('--replay-blocks', 1_000_000)
  runLongChain(accounts, blocks, (l) => console.error(l)).then((r) => { console.log(formatLongChain(r, describeMachine(machineInfo()))) }, (err) => { console.error(err); process.exit(1) })
} else if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const i = process.argv.indexOf('--accounts')
  const sizes = i >= 0 ? (process.argv[i + 1] ?? '').split(',').map(Number) : process.argv.includes('--quick') ? QUICK_SNAPSHOT_ACCOUNTS : DEFAULT_SNAPSHOT_ACCOUNTS
  const r = process.argv.indexOf('--replay-blocks')
  const replayBlocks = r >= 0 ? Number(process.argv[r + 1]) : process.argv.includes('--quick') ? QUICK_REPLAY_BLOCKS : DEFAULT_REPLAY_BLOCKS
  runSnapshotBench(sizes, replayBlocks).then((r) => { console.log(formatSnapshotBench(r)) }, (err) => { console.error(err); process.exit(1) })
}
