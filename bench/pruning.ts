/**
 * Pruning benchmark (`--prune-keep-blocks`): disk use of a long chain before and after its old
 * block bodies are dropped, and how long dropping them takes.
 *
 * The chain is generated straight into a ChainStore (no consensus, no execution: hours of blocks
 * in a minute), the way the feed benchmark loads a million posts: BLOCKS blocks, each with a
 * header, a commit certificate of 4 signatures and TXS_PER_BLOCK signed TRANSFER records with
 * their id index and address-history entries, as `commitBlock` writes them on a node. Then
 * `prune` runs in the node's batch size until only the newest KEEP blocks keep their bodies.
 *
 * Reported: the store's file size and the bytes its pages hold (lmdb keeps the file's size and
 * reuses freed pages, so the file does not shrink), before and after; a compacted copy
 * (`lmdb backup(..., compact)`, what an operator gets by copying the store) after; the time to
 * generate and to prune.
 *
 * Run: node dist/bench/pruning.js [--quick] [--blocks N] [--keep N] [--txs-per-block N]
 */
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { open } from 'lmdb'
import { encodePayload, formatTimestamp, signTx, type Block, type Commit, type Transaction } from '../src/chain/index.js'
import { generateKeyPair, toHex } from '../src/crypto/index.js'
import { ChainStore } from '../src/storage/index.js'
import { PRUNE_HEIGHTS_PER_BATCH as HEIGHTS_PER_BATCH } from '../src/node/index.js'
import { describeMachine, machineInfo } from './lib/proc.js'

export interface PruningBenchConfig {
  blocks: number
  keep: number
  txsPerBlock: number
}

export const DEFAULT_PRUNING_CONFIG: PruningBenchConfig = { blocks: 1_000_000, keep: 100_000, txsPerBlock: 2 }
export const QUICK_PRUNING_CONFIG: PruningBenchConfig = { blocks: 100_000, keep: 10_000, txsPerBlock: 2 }


export interface DiskFigures {
  fileBytes: number
  usedBytes: number
}

export interface PruningBenchResult {
  config: PruningBenchConfig
  generateMs: number
  before: DiskFigures
  pruneMs: number
  after: DiskFigures
  compactedBytes: number
  machine: string
}

function disk (dir: string): DiskFigures {
  const env = open({ path: dir, readOnly: true, encoding: 'binary' })
  try {
    // every named database is an entry of the main one; their pages together are what is used
    const pageOf = (s: Record<string, number>): number => (s.treeBranchPageCount ?? 0) + (s.treeLeafPageCount ?? 0) + (s.overflowPages ?? 0)
    const main = env.getStats() as Record<string, number>
    let pages = pageOf(main)
    const names = [...env.getKeys({})].filter((key): key is string => typeof key === 'string')
    for (const name of names) pages += pageOf(env.openDB({ name, encoding: 'binary' }).getStats() as Record<string, number>)
    return { fileBytes: statSync(path.join(dir, 'data.mdb')).size, usedBytes: pages * (main.pageSize ?? 4096) }
  } finally {
    void env.close()
  }
}

export async function runPruningBench (config: Partial<PruningBenchConfig> = {}, log: (line: string) => void = (l) => console.error(l)): Promise<PruningBenchResult> {
  const cfg = { ...DEFAULT_PRUNING_CONFIG, ...config }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kith-prune-bench-'))
  try {
    const store = ChainStore.open(dir, { sync: false })
    await store.init({ chainId: 'bench', genesisHash: 'g'.repeat(64), genesisTime: 0, build: () => ({ state: new Map(), stateRoot: '0'.repeat(64) }) })
    const senders = Array.from({ length: 64 }, () => generateKeyPair())
    const validators = Array.from({ length: 4 }, () => toHex(generateKeyPair().publicKey))
    const signature = Buffer.alloc(64, 7).toString('base64')
    // one real signature per sender, reused: the store never checks it, and signing 2 M would take minutes
    const templates = senders.map((k) => signTx({ id: 'x', type: 'TRANSFER', from: toHex(k.publicKey), to: toHex(senders[0].publicKey), amount: 1000, fee: 1000, payload: encodePayload({}), timestamp: formatTimestamp(0) }, k.secretKey))
    log(`pruning: generating ${cfg.blocks.toLocaleString('en-US')} blocks of ${cfg.txsPerBlock} transactions...`)
    const t0 = performance.now()
    let prev = 'g'.repeat(64)
    for (let h = 1; h <= cfg.blocks; h++) {
      const txs: Transaction[] = []
      for (let i = 0; i < cfg.txsPerBlock; i++) {
        const t = templates[(h * cfg.txsPerBlock + i) % templates.length]
        txs.push({ ...t, id: `${h.toString(16).padStart(8, '0')}${i.toString(16).padStart(4, '0')}${'0'.repeat(52)}`, to: toHex(senders[(h + i) % senders.length].publicKey) })
      }
      const hash = `${h.toString(16).padStart(16, '0')}${'a'.repeat(48)}`
      const commit: Commit = { height: h, round: 0, block_hash: hash, signatures: validators.map((validator) => ({ validator, signature })) }
      const block: Block = {
        header: { chain_id: 'bench', height: h, time: h * 1000, prev_hash: prev, tx_root: 'b'.repeat(64), state_root: 'c'.repeat(64), proposer: validators[h % 4], last_commit_hash: 'd'.repeat(64) },
        txs,
        last_commit: h === 1 ? null : { height: h - 1, round: 0, block_hash: prev, signatures: commit.signatures }
      }
      await store.commitBlock({ block, hash, commit, writes: new Map(txs.map((tx) => [`txid:${tx.id}`, h])), stateRoot: 'c'.repeat(64), removePending: [] })
      prev = hash
      if (h % 100_000 === 0) log(`pruning: ${h.toLocaleString('en-US')} blocks`)
    }
    const generateMs = performance.now() - t0
    await store.close()
    const before = disk(dir)
    log(`pruning: keeping the newest ${cfg.keep.toLocaleString('en-US')} bodies...`)
    const again = ChainStore.open(dir, { sync: false })
    const t1 = performance.now()
    const keepFrom = cfg.blocks - cfg.keep + 1
    while (again.earliestBody() < keepFrom) await again.prune(keepFrom, HEIGHTS_PER_BATCH)
    const pruneMs = performance.now() - t1
    await again.close()
    const after = disk(dir)
    // lmdb copies an environment into a directory, as data.mdb
    const copy = path.join(dir, 'compacted')
    mkdirSync(copy)
    const env = open({ path: dir })
    await env.backup(copy, true)
    await env.close()
    return { config: cfg, generateMs, before, pruneMs, after, compactedBytes: statSync(path.join(copy, 'data.mdb')).size, machine: describeMachine(machineInfo()) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const mib = (b: number): string => (b / 2 ** 20).toLocaleString('en-US', { maximumFractionDigits: 0 })

export function formatPruningBench (r: PruningBenchResult): string {
  const c = r.config
  return [
    `Pruning ${c.blocks.toLocaleString('en-US')} blocks (${c.txsPerBlock} TRANSFERs each, 4-signature certificates) to the newest ${c.keep.toLocaleString('en-US')} bodies, ${r.machine}:`,
    '',
    '| | store file, MiB | pages in use, MiB |',
    '|---|--:|--:|',
    `| before | ${mib(r.before.fileBytes)} | ${mib(r.before.usedBytes)} |`,
    `| after pruning | ${mib(r.after.fileBytes)} | ${mib(r.after.usedBytes)} |`,
    `| compacted copy after pruning | ${mib(r.compactedBytes)} | — |`,
    '',
    `Generated in ${(r.generateMs / 1000).toFixed(1)} s; pruned in ${(r.pruneMs / 1000).toFixed(1)} s ` +
      `(${Math.round((c.blocks - c.keep) / (r.pruneMs / 1000)).toLocaleString('en-US')} blocks/s, in batches of ${HEIGHTS_PER_BATCH}).`
  ].join('\n')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name: string): number | undefined => {
    const i = process.argv.indexOf(name)
    return i < 0 ? undefined : Number(process.argv[i + 1])
  }
  const base = process.argv.includes('--quick') ? QUICK_PRUNING_CONFIG : DEFAULT_PRUNING_CONFIG
  const cfg = { ...base, ...(arg('--blocks') !== undefined ? { blocks: arg('--blocks') as number } : {}), ...(arg('--keep') !== undefined ? { keep: arg('--keep') as number } : {}), ...(arg('--txs-per-block') !== undefined ? { txsPerBlock: arg('--txs-per-block') as number } : {}) }
  runPruningBench(cfg).then((r) => { console.log(formatPruningBench(r)) }, (err) => { console.error(err); process.exit(1) })
}
