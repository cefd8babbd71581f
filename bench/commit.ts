/**
 * Block commit benchmark: what `ChainStore.commitBlock` costs per transaction, and what reading
 * back what it wrote costs, on a real store on disk (fsync on).
 *
 * The workload is bench/network.ts's: 400 funded accounts paying each other, blocks of 1,400
 * TRANSFERs (the blocks its saturation runs commit). Each block's write set is what executing it
 * writes: the two balances and the `txid:` entry of every transfer, and `total_txs`. The state
 * hash is computed before the timer starts (bench/state-hash.ts measures it). The first blocks
 * warm up and are not counted. Then, on the store written: transaction lookups by id, address
 * histories (a page of 20, newest first), whole blocks and their id lists.
 *
 * Run: node dist/bench/commit.js [--quick]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { randomBytes } from 'node:crypto'
import type { Block, Transaction, WriteSet } from '../src/chain/index.js'
import { ChainStore } from '../src/storage/index.js'
import { describeMachine, machineInfo } from './lib/proc.js'

export interface CommitBenchConfig {
  blocks: number
  txsPerBlock: number
  accounts: number
  warmupBlocks: number
}

export const DEFAULT_COMMIT_CONFIG: CommitBenchConfig = { blocks: 60, txsPerBlock: 1400, accounts: 400, warmupBlocks: 5 }
export const QUICK_COMMIT_CONFIG: CommitBenchConfig = { blocks: 15, txsPerBlock: 1400, accounts: 400, warmupBlocks: 3 }

export interface CommitBenchResult {
  config: CommitBenchConfig
  /** the store transaction, run synchronously on the calling thread */
  commitUsPerTx: number
  /** until its fsync is done, that included */
  durableUsPerTx: number
  getTxUs: number
  addressPageUs: number
  blockUs: number
  blockTxIdsUs: number
  machine: string
}

function transfer (from: string, to: string): Transaction {
  return {
    id: randomBytes(32).toString('hex'),
    type: 'TRANSFER',
    from,
    to,
    amount: 1000,
    fee: 1000,
    payload: 'e30=',
    signature: randomBytes(64).toString('base64'),
    timestamp: '2026-11-27T08:00:00Z'
  }
}

function timeEach (n: number, body: (i: number) => unknown): number {
  const t0 = performance.now()
  for (let i = 0; i < n; i++) body(i)
  return (performance.now() - t0) * 1000 / n
}

export async function runCommitBench (config: Partial<CommitBenchConfig> = {}, log: (line: string) => void = (l) => console.error(l)): Promise<CommitBenchResult> {
  const cfg = { ...DEFAULT_COMMIT_CONFIG, ...config }
  log(`commit: ${cfg.blocks} blocks of ${cfg.txsPerBlock} TRANSFERs among ${cfg.accounts} accounts...`)
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kith-bench-commit-'))
  const store = ChainStore.open(dir)
  try {
    const accounts = Array.from({ length: cfg.accounts }, () => randomBytes(32).toString('hex'))
    const balances = new Map(accounts.map((a) => [a, 1e12]))
    await store.init({ chainId: 'bench', genesisHash: 'g'.repeat(64), genesisTime: 0, build: () => ({ state: new Map(accounts.map((a) => [`bal:${a}`, 1e12])), stateRoot: '0'.repeat(64) }) })
    let commitMs = 0
    let durableMs = 0
    const ids: string[] = []
    for (let height = 1; height <= cfg.blocks; height++) {
      const txs: Transaction[] = []
      const writes: WriteSet = new Map()
      for (let i = 0; i < cfg.txsPerBlock; i++) {
        const from = accounts[(height * 7 + i) % accounts.length]
        const to = accounts[(height * 13 + i * 3 + 1) % accounts.length]
        const tx = transfer(from, to)
        txs.push(tx)
        balances.set(from, (balances.get(from) ?? 0) - 2000)
        balances.set(to, (balances.get(to) ?? 0) + 1000)
        writes.set(`bal:${from}`, balances.get(from) ?? 0)
        writes.set(`bal:${to}`, balances.get(to) ?? 0)
        writes.set(`txid:${tx.id}`, height)
      }
      writes.set('total_txs', height * cfg.txsPerBlock)
      const block: Block = {
        header: { chain_id: 'bench', height, time: height * 250, prev_hash: '0'.repeat(64), tx_root: '0'.repeat(64), state_root: '0'.repeat(64), proposer: accounts[0], last_commit_hash: '' },
        txs,
        last_commit: null
      }
      const stateHash = store.stateHashAfter(writes)
      const t0 = performance.now()
      const durable = store.commitBlock({ block, hash: height.toString(16).padStart(64, '0'), commit: null, writes, stateRoot: '0'.repeat(64), stateHash, removePending: [] })
      const t1 = performance.now()
      await durable
      if (height > cfg.warmupBlocks) {
        commitMs += t1 - t0
        durableMs += performance.now() - t0
      }
      if (height > cfg.blocks - 4) ids.push(...txs.map((tx) => tx.id))
    }
    const counted = (cfg.blocks - cfg.warmupBlocks) * cfg.txsPerBlock
    const heights = cfg.blocks
    const result: CommitBenchResult = {
      config: cfg,
      commitUsPerTx: commitMs * 1000 / counted,
      durableUsPerTx: durableMs * 1000 / counted,
      getTxUs: timeEach(20_000, (i) => store.getTx(ids[(i * 7919) % ids.length])),
      addressPageUs: timeEach(5_000, (i) => store.addressHistory(accounts[i % accounts.length], 20)),
      blockUs: timeEach(200, (i) => store.getBlock(1 + (i % heights))),
      // a fresh store per height read, so the ids are read from disk, not the reader's cache
      blockTxIdsUs: 0,
      machine: describeMachine(machineInfo())
    }
    await store.close()
    const reader = ChainStore.open(dir)
    result.blockTxIdsUs = timeEach(heights, (i) => reader.blockTxIds(1 + i))
    await reader.close()
    return result
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export function formatCommitBench (r: CommitBenchResult): string {
  const { config: c } = r
  return [
    `${c.blocks - c.warmupBlocks} blocks of ${c.txsPerBlock.toLocaleString('en-US')} TRANSFERs among ${c.accounts} accounts committed by \`ChainStore.commitBlock\` (after ${c.warmupBlocks} to warm up), fsync on, ${r.machine}:`,
    '',
    '| figure | µs |',
    '|---|--:|',
    `| commit, per transaction: the store transaction, on the calling thread | **${r.commitUsPerTx.toFixed(1)}** |`,
    `| commit, per transaction, until durable (fsync) | ${r.durableUsPerTx.toFixed(1)} |`,
    `| a transaction by id, from the last 4 blocks | ${r.getTxUs.toFixed(1)} |`,
    `| an address's newest 20 | ${r.addressPageUs.toFixed(1)} |`,
    `| a whole block, every transaction decoded | ${r.blockUs.toFixed(0)} |`,
    `| a block's transaction ids, read from disk | ${r.blockTxIdsUs.toFixed(0)} |`
  ].join('\n')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(formatCommitBench(await runCommitBench(process.argv.includes('--quick') ? QUICK_COMMIT_CONFIG : {})))
}
