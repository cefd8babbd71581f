/**
 * Storage benchmark: why the node stores its chain in lmdb (docs/storage-choice.md).
 *
 * Three workloads, each run 3 times per store on a fresh database in a temporary directory
 * (medians reported):
 *  (a) block commit: 100 blocks, each 5,000 transaction records (~24-byte key, ~400-byte
 *      JSON-like object) plus 10,000 small index puts, written as one atomic batch and made
 *      durable (fsync) before the next block starts;
 *  (b) group commit: 10,000 single-record durable puts from 100 concurrent clients, each
 *      client awaiting its own acknowledgement (durability) before issuing its next put;
 *  (c) prefix scan: read the 10,000 index entries of one address (spread over all 100
 *      blocks) from the database written by (a).
 *
 * lmdb is used the way src/storage/index.ts uses it (one transaction, then `await
 * root.flushed`; single puts: `await db.put(); await root.flushed`). classic-level uses a
 * chained batch / put with `{ sync: true }`. datastore-level's `batch().commit()` and `put()`
 * take no sync option (it calls level's `batch(ops)` with default options, i.e.
 * sync: false), so its block commits are NOT durable when they resolve; it is measured for
 * (a) and (c) only and flagged as not durable. With `--reference` (or
 * `runStorageBench({ reference: true })`) a `classic-level (sync:false)` row is added as the
 * like-for-like reference for datastore-level (same engine, same non-durable write).
 *
 * Run: node dist/bench/storage.js [--reference]  (prints markdown tables)
 */
import { closeSync, fdatasyncSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { open } from 'lmdb'
import { ClassicLevel } from 'classic-level'
import { LevelDatastore } from 'datastore-level'
import { Key } from 'interface-datastore'

// ---------------------------------------------------------------------------------------
// configuration

const RUNS = 3
const BLOCKS = 100
const RECORDS_PER_BLOCK = 5_000
const INDEX_PUTS_PER_BLOCK = 10_000
/** index puts per block that go to the one address scanned in (c): 100 x 100 = 10,000 */
const HOT_PUTS_PER_BLOCK = 100
const ADDRESSES = 1_000
const GROUP_WRITES = 10_000
const GROUP_CLIENTS = 100
const SCAN_KEYS = HOT_PUTS_PER_BLOCK * BLOCKS

// ---------------------------------------------------------------------------------------
// result types

export type StoreName = 'lmdb' | 'classic-level' | 'classic-level (sync:false)' | 'datastore-level'

/** Median and the individual runs. */
export interface Sample {
  median: number
  runs: number[]
}

export interface BlockCommitRow {
  store: StoreName
  /** true when the commit promise resolves only after the batch is fsync'd */
  durable: boolean
  /** how the batch is written */
  api: string
  /** wall time for all blocks, ms */
  totalMs: Sample
  /** per block, ms */
  msPerBlock: Sample
  /** blocks committed per second */
  blocksPerSec: Sample
  /** records + index puts per second */
  putsPerSec: Sample
  /** mean ms per block over the last 10 blocks (the database is largest there) */
  lastTenMsPerBlock: Sample
  /**
   * bytes this process passed to write syscalls from open to close (Linux /proc/self/io
   * `wchar`: lmdb's page writes, leveldb's WAL, table and compaction writes), MB; null
   * elsewhere. (`write_bytes` is not used: on this kernel it counts whole large folios and
   * overstates lmdb's writes about 6x against the block device's own counters.)
   */
  writtenMB: Sample | null
}

export interface GroupCommitRow {
  store: StoreName
  durable: boolean
  api: string
  totalMs: Sample
  /** acknowledged (durable) writes per second */
  ackedWritesPerSec: Sample
  /** per-write latency from issue to acknowledgement, ms */
  latencyP50Ms: Sample
  latencyP99Ms: Sample
}

export interface ScanRow {
  store: StoreName
  api: string
  /** one scan of SCAN_KEYS keys (key + decoded value), ms */
  scanMs: Sample
  keysPerSec: Sample
}

export interface StorageBenchResult {
  machine: {
    cpus: number
    cpuModel: string
    memTotalGiB: number
    node: string
    platform: string
    date: string
    /** median latency of fdatasync after a 4 KiB write in the temp dir, ms */
    fdatasyncMedianMs: number
    tmpdir: string
    /** 1-minute load average at start and end (other processes share the CPUs) */
    loadAvgStart: number
    loadAvgEnd: number
  }
  config: {
    runs: number
    blocks: number
    recordsPerBlock: number
    indexPutsPerBlock: number
    avgRecordKeyBytes: number
    avgRecordValueJsonBytes: number
    avgIndexKeyBytes: number
    groupWrites: number
    groupClients: number
    scanKeys: number
  }
  blockCommit: BlockCommitRow[]
  groupCommit: GroupCommitRow[]
  scan: ScanRow[]
  /** wall time of the whole benchmark, ms */
  elapsedMs: number
}

// ---------------------------------------------------------------------------------------
// workload data (deterministic per run, so every store writes the same bytes)

interface TxRecord {
  id: string
  kind: string
  from: string
  to: string
  amount: number
  fee: number
  nonce: number
  time: number
  sig: string
  height: number
  index: number
}

interface Entry<V> {
  key: string
  value: V
}

interface BlockData {
  height: number
  records: Array<Entry<TxRecord>>
  index: Array<Entry<string>>
  head: Entry<string>
}

/** mulberry32 */
function prng (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return (t ^ (t >>> 14)) >>> 0
  }
}

const hex8 = (n: number): string => n.toString(16).padStart(8, '0')

function randomHex (rand: () => number, chars: number): string {
  let s = ''
  while (s.length < chars) s += hex8(rand())
  return s.slice(0, chars)
}

interface Universe {
  pubkeys: string[]
  sigs: string[]
  hot: string
}

function universe (): Universe {
  const rand = prng(0xC0FFEE)
  const pubkeys = Array.from({ length: ADDRESSES }, () => randomHex(rand, 64))
  const sigs = Array.from({ length: 4096 }, () => randomHex(rand, 128))
  return { pubkeys, sigs, hot: pubkeys[0].slice(0, 12) }
}

/** index key: "a/<12 hex of address>/<8-digit sequence>" = 23 bytes */
const indexKey = (addr: string, seq: number): string => `a/${addr}/${String(seq).padStart(8, '0')}`
/** the range holding every index entry of one address */
const addrRange = (addr: string): { gte: string, lt: string } => ({ gte: `a/${addr}/`, lt: `a/${addr}0` })

class BlockGenerator {
  private readonly rand: () => number
  private readonly seq = new Map<string, number>()
  private counter = 0

  constructor (private readonly u: Universe, seed: number) {
    this.rand = prng(seed)
  }

  next (height: number): BlockData {
    const { pubkeys, sigs, hot } = this.u
    const rand = this.rand
    const records: Array<Entry<TxRecord>> = []
    const ids: string[] = []
    for (let i = 0; i < RECORDS_PER_BLOCK; i++) {
      // 16 random hex chars then a 6-hex counter: unique, in random key order like a hash
      const id = hex8(rand()) + hex8(rand()) + (this.counter++).toString(16).padStart(6, '0')
      ids.push(id)
      const r = rand()
      records.push({
        key: `t/${id}`,
        value: {
          id,
          kind: 'transfer',
          from: pubkeys[r % ADDRESSES],
          to: pubkeys[(r >>> 10) % ADDRESSES],
          amount: rand() % 1_000_000,
          fee: 10 + (r % 90),
          nonce: rand() % 100_000,
          time: 1_700_000_000_000 + height * 1000,
          sig: sigs[rand() % sigs.length],
          height,
          index: i
        }
      })
    }
    const index: Array<Entry<string>> = []
    const bump = (addr: string): number => {
      const n = (this.seq.get(addr) ?? 0) + 1
      this.seq.set(addr, n)
      return n
    }
    for (let i = 0; i < INDEX_PUTS_PER_BLOCK; i++) {
      const id = ids[i % RECORDS_PER_BLOCK]
      // the first HOT_PUTS_PER_BLOCK entries belong to the scanned address; the rest to
      // the other addresses (never the hot one), picked at random
      const addr = i < HOT_PUTS_PER_BLOCK ? hot : pubkeys[1 + (rand() % (ADDRESSES - 1))].slice(0, 12)
      index.push({ key: indexKey(addr, bump(addr)), value: id })
    }
    return { height, records, index, head: { key: 'm/head', value: `${height}:${ids[0]}` } }
  }
}

// ---------------------------------------------------------------------------------------
// stores under test

interface BlockStore {
  /** writes the block as one atomic batch; resolves when the store says it is committed */
  commitBlock: (b: BlockData) => Promise<void>
  /** reads every index entry of addr; returns how many */
  scanAddress: (addr: string) => Promise<number>
  close: () => Promise<void>
}

interface PutStore {
  /** one single-record write; resolves when acknowledged (durable) */
  putAcked: (key: string, value: TxRecord) => Promise<void>
  close: () => Promise<void>
}

async function lmdbBlockStore (dir: string): Promise<BlockStore> {
  // as src/storage/index.ts opens it
  const root = open<unknown, string>({ path: dir, compression: false, mapSize: 2 ** 34 })
  const txs = root.openDB<TxRecord, string>({ name: 'txs' })
  const addr = root.openDB<string, string>({ name: 'addr' })
  const meta = root.openDB<string, string>({ name: 'meta' })
  return {
    async commitBlock (b) {
      await root.transaction(() => {
        for (const { key, value } of b.records) txs.put(key, value)
        for (const { key, value } of b.index) addr.put(key, value)
        meta.put(b.head.key, b.head.value)
      })
      await root.flushed
    },
    async scanAddress (a) {
      const { gte, lt } = addrRange(a)
      let n = 0
      for (const { key, value } of addr.getRange({ start: gte, end: lt })) {
        if (key.length > 0 && value.length > 0) n++
      }
      return n
    },
    async close () {
      await root.flushed
      await root.close()
    }
  }
}

async function lmdbPutStore (dir: string): Promise<PutStore> {
  const root = open<unknown, string>({ path: dir, compression: false, mapSize: 2 ** 34 })
  const mempool = root.openDB<TxRecord, string>({ name: 'mempool' })
  return {
    async putAcked (key, value) {
      await mempool.put(key, value)
      await root.flushed
    },
    async close () {
      await root.flushed
      await root.close()
    }
  }
}

type LevelValue = TxRecord | string

async function openClassic (dir: string): Promise<ClassicLevel<string, LevelValue>> {
  // compression off, like the lmdb store and datastore-level's default
  const db = new ClassicLevel<string, LevelValue>(dir, { keyEncoding: 'utf8', valueEncoding: 'json', compression: false })
  await db.open()
  return db
}

async function classicBlockStore (dir: string, sync: boolean): Promise<BlockStore> {
  const db = await openClassic(dir)
  return {
    async commitBlock (b) {
      const batch = db.batch()
      for (const { key, value } of b.records) batch.put(key, value)
      for (const { key, value } of b.index) batch.put(key, value)
      batch.put(b.head.key, b.head.value)
      await batch.write({ sync })
    },
    async scanAddress (a) {
      let n = 0
      for await (const [key, value] of db.iterator(addrRange(a))) {
        if (key.length > 0 && typeof value === 'string' && value.length > 0) n++
      }
      return n
    },
    async close () { await db.close() }
  }
}

async function classicPutStore (dir: string): Promise<PutStore> {
  const db = await openClassic(dir)
  return {
    async putAcked (key, value) { await db.put(key, value, { sync: true }) },
    async close () { await db.close() }
  }
}

async function datastoreBlockStore (dir: string): Promise<BlockStore> {
  const ds = new LevelDatastore(dir)
  await ds.open()
  const encoder = new TextEncoder()
  const decoder = new TextDecoder()
  return {
    async commitBlock (b) {
      // datastore values are bytes; keys are '/'-rooted Keys
      const batch = ds.batch()
      for (const { key, value } of b.records) batch.put(new Key(`/${key}`), encoder.encode(JSON.stringify(value)))
      for (const { key, value } of b.index) batch.put(new Key(`/${key}`), encoder.encode(JSON.stringify(value)))
      batch.put(new Key(`/${b.head.key}`), encoder.encode(JSON.stringify(b.head.value)))
      await batch.commit() // no sync option: resolves before the batch is on disk
    },
    async scanAddress (a) {
      let n = 0
      for await (const { key, value } of ds.query({ prefix: `/${addrRange(a).gte}` })) {
        const id: unknown = JSON.parse(decoder.decode(value))
        if (key.toString().length > 0 && typeof id === 'string') n++
      }
      return n
    },
    async close () { await ds.close() }
  }
}

// ---------------------------------------------------------------------------------------
// measurement

const now = (): number => performance.now()

function median (xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2
}

function quantile (xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]
}

const sample = (runs: number[]): Sample => ({ median: median(runs), runs })

function freshDir (parent: string, name: string): string {
  return mkdtempSync(path.join(parent, `${name.replace(/[^a-z0-9]+/gi, '-')}-`))
}

interface BlockRunResult {
  totalMs: number
  lastTenMs: number
  scanMs: number
  writtenBytes: number | null
}

/** bytes written by this process's write syscalls, or null where /proc/self/io is unavailable */
function writtenBytes (): number | null {
  try {
    const m = /^wchar:\s*(\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))
    return m === null ? null : Number(m[1])
  } catch {
    return null
  }
}

async function runBlocks (make: (dir: string) => Promise<BlockStore>, dir: string, u: Universe, seed: number): Promise<BlockRunResult> {
  const io0 = writtenBytes()
  const store = await make(dir)
  const gen = new BlockGenerator(u, seed)
  let totalMs = 0
  let lastTenMs = 0
  for (let h = 1; h <= BLOCKS; h++) {
    const block = gen.next(h) // generated outside the timed region
    const t0 = now()
    await store.commitBlock(block)
    const dt = now() - t0
    totalMs += dt
    if (h > BLOCKS - 10) lastTenMs += dt
  }
  // (c) prefix scan on the populated database: one untimed warm-up, then the timed scan
  const warm = await store.scanAddress(u.hot)
  const t0 = now()
  const n = await store.scanAddress(u.hot)
  const scanMs = now() - t0
  if (warm !== SCAN_KEYS || n !== SCAN_KEYS) throw new Error(`scan returned ${n} keys, expected ${SCAN_KEYS}`)
  await store.close()
  const io1 = writtenBytes()
  return { totalMs, lastTenMs, scanMs, writtenBytes: io0 === null || io1 === null ? null : io1 - io0 }
}

interface GroupRunResult {
  totalMs: number
  latencies: number[]
}

async function runGroup (make: (dir: string) => Promise<PutStore>, dir: string, u: Universe, seed: number): Promise<GroupRunResult> {
  const store = await make(dir)
  // 10,000 distinct records, generated before timing
  const gen = new BlockGenerator(u, seed)
  const records: Array<Entry<TxRecord>> = []
  while (records.length < GROUP_WRITES) records.push(...gen.next(records.length + 1).records)
  records.length = GROUP_WRITES
  const perClient = GROUP_WRITES / GROUP_CLIENTS
  const latencies: number[] = []
  const client = async (c: number): Promise<void> => {
    for (let i = 0; i < perClient; i++) {
      const { key, value } = records[c * perClient + i]
      const t0 = now()
      await store.putAcked(`p/${key}`, value)
      latencies.push(now() - t0)
    }
  }
  const t0 = now()
  await Promise.all(Array.from({ length: GROUP_CLIENTS }, async (_, c) => await client(c)))
  const totalMs = now() - t0
  await store.close()
  if (latencies.length !== GROUP_WRITES) throw new Error('lost writes')
  return { totalMs, latencies }
}

function fdatasyncProbe (dir: string): number {
  const file = path.join(dir, 'fsync-probe')
  const fd = openSync(file, 'w')
  const buf = Buffer.alloc(4096, 7)
  const times: number[] = []
  try {
    for (let i = 0; i < 100; i++) {
      writeSync(fd, buf, 0, buf.length, i * buf.length)
      const t0 = now()
      fdatasyncSync(fd)
      times.push(now() - t0)
    }
  } finally {
    closeSync(fd)
    rmSync(file, { force: true })
  }
  return median(times)
}

interface BlockStoreSpec {
  store: StoreName
  durable: boolean
  api: string
  scanApi: string
  make: (dir: string) => Promise<BlockStore>
}

interface PutStoreSpec {
  store: StoreName
  api: string
  make: (dir: string) => Promise<PutStore>
}

const REFERENCE_STORE: BlockStoreSpec = {
  store: 'classic-level (sync:false)', durable: false, api: 'chained batch, write({ sync: false })', scanApi: 'iterator({ gte, lt })', make: async d => await classicBlockStore(d, false)
}

const BLOCK_STORES: BlockStoreSpec[] = [
  { store: 'lmdb', durable: true, api: 'transaction() + await flushed', scanApi: 'getRange (sync)', make: lmdbBlockStore },
  { store: 'classic-level', durable: true, api: 'chained batch, write({ sync: true })', scanApi: 'iterator({ gte, lt })', make: async d => await classicBlockStore(d, true) },
  { store: 'datastore-level', durable: false, api: 'batch().commit() (no sync option)', scanApi: 'query({ prefix })', make: datastoreBlockStore }
]

const PUT_STORES: PutStoreSpec[] = [
  { store: 'lmdb', api: 'await put(); await flushed', make: lmdbPutStore },
  { store: 'classic-level', api: 'await put(k, v, { sync: true })', make: classicPutStore }
]

function recordSizes (u: Universe): { key: number, value: number, indexKey: number } {
  const b = new BlockGenerator(u, 1).next(1)
  const avg = (xs: number[]): number => xs.reduce((a, x) => a + x, 0) / xs.length
  return {
    key: avg(b.records.map(r => Buffer.byteLength(r.key))),
    value: avg(b.records.map(r => Buffer.byteLength(JSON.stringify(r.value)))),
    indexKey: avg(b.index.map(r => Buffer.byteLength(r.key)))
  }
}

export interface StorageBenchOptions {
  /** add the non-durable classic-level (sync:false) reference row to (a) and (c); +~30% time */
  reference?: boolean
}

/** Runs every workload RUNS times per store (about 1.5-2 minutes on a 2-CPU VM). */
export async function runStorageBench (opts: StorageBenchOptions = {}): Promise<StorageBenchResult> {
  const started = now()
  const date = new Date().toISOString()
  const loadAvgStart = os.loadavg()[0]
  const blockStores = opts.reference === true ? [...BLOCK_STORES, REFERENCE_STORE] : BLOCK_STORES
  const parent = mkdtempSync(path.join(os.tmpdir(), 'kith-storage-bench-'))
  try {
    const u = universe()
    const sizes = recordSizes(u)
    const fsyncMs = fdatasyncProbe(parent)

    const blockRuns = new Map<StoreName, BlockRunResult[]>()
    const groupRuns = new Map<StoreName, GroupRunResult[]>()
    for (let run = 0; run < RUNS; run++) {
      const seed = 1000 + run
      // rotate the order so no store always runs first (or right after another's compaction)
      const order = blockStores.map((_, i) => blockStores[(i + run) % blockStores.length])
      for (const spec of order) {
        const dir = freshDir(parent, spec.store)
        try {
          const r = await runBlocks(spec.make, dir, u, seed)
          blockRuns.set(spec.store, [...(blockRuns.get(spec.store) ?? []), r])
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }
      const putOrder = run % 2 === 0 ? PUT_STORES : [...PUT_STORES].reverse()
      for (const spec of putOrder) {
        const dir = freshDir(parent, spec.store)
        try {
          const r = await runGroup(spec.make, dir, u, seed)
          groupRuns.set(spec.store, [...(groupRuns.get(spec.store) ?? []), r])
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }
    }

    const putsPerBlock = RECORDS_PER_BLOCK + INDEX_PUTS_PER_BLOCK + 1
    const blockCommit: BlockCommitRow[] = blockStores.map(spec => {
      const runs = blockRuns.get(spec.store) ?? []
      const total = runs.map(r => r.totalMs)
      const written = runs.map(r => r.writtenBytes)
      return {
        store: spec.store,
        durable: spec.durable,
        api: spec.api,
        totalMs: sample(total),
        msPerBlock: sample(total.map(t => t / BLOCKS)),
        blocksPerSec: sample(total.map(t => BLOCKS / (t / 1000))),
        putsPerSec: sample(total.map(t => (BLOCKS * putsPerBlock) / (t / 1000))),
        lastTenMsPerBlock: sample(runs.map(r => r.lastTenMs / 10)),
        writtenMB: written.every(w => w !== null) ? sample(written.map(w => (w ?? 0) / 1e6)) : null
      }
    })
    const scan: ScanRow[] = blockStores.map(spec => {
      const runs = (blockRuns.get(spec.store) ?? []).map(r => r.scanMs)
      return { store: spec.store, api: spec.scanApi, scanMs: sample(runs), keysPerSec: sample(runs.map(t => SCAN_KEYS / (t / 1000))) }
    })
    const groupCommit: GroupCommitRow[] = PUT_STORES.map(spec => {
      const runs = groupRuns.get(spec.store) ?? []
      return {
        store: spec.store,
        durable: true,
        api: spec.api,
        totalMs: sample(runs.map(r => r.totalMs)),
        ackedWritesPerSec: sample(runs.map(r => GROUP_WRITES / (r.totalMs / 1000))),
        latencyP50Ms: sample(runs.map(r => quantile(r.latencies, 0.5))),
        latencyP99Ms: sample(runs.map(r => quantile(r.latencies, 0.99)))
      }
    })

    const cpus = os.cpus()
    return {
      machine: {
        cpus: os.availableParallelism(),
        cpuModel: cpus[0]?.model ?? 'unknown',
        memTotalGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
        node: process.version,
        platform: `${os.platform()} ${os.release()} ${os.arch()}`,
        date,
        fdatasyncMedianMs: fsyncMs,
        tmpdir: os.tmpdir(),
        loadAvgStart,
        loadAvgEnd: os.loadavg()[0]
      },
      config: {
        runs: RUNS,
        blocks: BLOCKS,
        recordsPerBlock: RECORDS_PER_BLOCK,
        indexPutsPerBlock: INDEX_PUTS_PER_BLOCK,
        avgRecordKeyBytes: sizes.key,
        avgRecordValueJsonBytes: Math.round(sizes.value),
        avgIndexKeyBytes: sizes.indexKey,
        groupWrites: GROUP_WRITES,
        groupClients: GROUP_CLIENTS,
        scanKeys: SCAN_KEYS
      },
      blockCommit,
      groupCommit,
      scan,
      elapsedMs: now() - started
    }
  } finally {
    rmSync(parent, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------------------------------
// markdown

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
const runsOf = (s: Sample, digits: number): string => s.runs.map(r => fmt(r, digits)).join(' / ')

export function formatStorageBench (r: StorageBenchResult): string {
  const m = r.machine
  const c = r.config
  const lines: string[] = [
    `Machine: ${m.cpus} CPUs (${m.cpuModel}), ${m.memTotalGiB} GiB RAM, ${m.platform}, Node ${m.node}, ${m.date}; ` +
      `fdatasync of a 4 KiB write in ${m.tmpdir}: ${fmt(m.fdatasyncMedianMs, 3)} ms (median); ` +
      `load average (1 min) ${fmt(m.loadAvgStart, 2)} at start, ${fmt(m.loadAvgEnd, 2)} at end`,
    `Medians of ${c.runs} runs (individual runs in the last column). Record key ${fmt(c.avgRecordKeyBytes)} B, ` +
      `value ~${c.avgRecordValueJsonBytes} B as JSON, index key ${fmt(c.avgIndexKeyBytes)} B.`,
    '',
    `(a) Block commit: ${c.blocks} blocks x (${fmt(c.recordsPerBlock)} records + ${fmt(c.indexPutsPerBlock)} index puts), one atomic batch per block`,
    '',
    '| store | batch API | durable on resolve | ms / block | blocks/s | puts/s | ms / block, last 10 | MB written | runs, total ms |',
    '|---|---|---|--:|--:|--:|--:|--:|---|'
  ]
  for (const row of r.blockCommit) {
    lines.push(`| ${row.store} | ${row.api} | ${row.durable ? 'yes (fsync)' : '**no**'} | ${fmt(row.msPerBlock.median, 1)} | ` +
      `${fmt(row.blocksPerSec.median, 1)} | ${fmt(row.putsPerSec.median)} | ${fmt(row.lastTenMsPerBlock.median, 1)} | ` +
      `${row.writtenMB === null ? 'n/a' : fmt(row.writtenMB.median)} | ${runsOf(row.totalMs, 0)} |`)
  }
  lines.push('',
    `(b) Group commit: ${fmt(c.groupWrites)} single-record durable puts from ${c.groupClients} concurrent clients (each awaits its ack before the next put)`,
    '',
    '| store | API | acked writes/s | p50 latency ms | p99 latency ms | runs, total ms |',
    '|---|---|--:|--:|--:|---|')
  for (const row of r.groupCommit) {
    lines.push(`| ${row.store} | ${row.api} | ${fmt(row.ackedWritesPerSec.median)} | ${fmt(row.latencyP50Ms.median, 2)} | ` +
      `${fmt(row.latencyP99Ms.median, 2)} | ${runsOf(row.totalMs, 0)} |`)
  }
  lines.push('',
    `(c) Prefix scan: the ${fmt(c.scanKeys)} index entries of one address (key + decoded value), on the database from (a)`,
    '',
    '| store | API | ms / scan | keys/s | runs, ms |',
    '|---|---|--:|--:|---|')
  for (const row of r.scan) {
    lines.push(`| ${row.store} | ${row.api} | ${fmt(row.scanMs.median, 2)} | ${fmt(row.keysPerSec.median)} | ${runsOf(row.scanMs, 2)} |`)
  }
  lines.push('', `Benchmark wall time: ${fmt(r.elapsedMs / 1000, 1)} s`)
  return lines.join('\n')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runStorageBench({ reference: process.argv.includes('--reference') }).then(r => {
    console.log(formatStorageBench(r))
  }, (err: unknown) => {
    console.error(err)
    process.exitCode = 1
  })
}
