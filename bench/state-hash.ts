/**
 * State hash benchmark (src/chain/state-hash.ts): what keeping the LtHash of the state costs per
 * committed transaction, beside what the chained state root costs for the same writes.
 *
 * A block of 1,000 TRANSFERs writes, per transaction, two balances (an old value out, a new one
 * in) and one new `txid:` key, plus the block's `total_txs`, `supply` and proposer balance: the
 * write set `commitBlock` hands the store, updated with the store's cache of recent entries. Two
 * workloads: every sender and recipient new in each block (no entry to reuse: the worst case), and
 * 400 senders paying each other (bench/network.ts's workload, where balances come back block
 * after block). Beside it: one expansion alone, and the chained state root of the same writes.
 *
 * Run: node dist/bench/state-hash.js [--quick]
 */
import { pathToFileURL } from 'node:url'
import { MemoryState, StateHash, nextStateRoot, stateLanesCache, type WriteSet } from '../src/chain/index.js'
import { describeMachine, machineInfo } from './lib/proc.js'

export interface StateHashBenchResult {
  txsPerBlock: number
  blocks: number
  expansionUs: number
  /** every account new in each block */
  hashUsPerTx: number
  /** 400 accounts paying each other */
  hotHashUsPerTx: number
  rootUsPerTx: number
  machine: string
}

function block (state: MemoryState, height: number, txs: number, accounts: number | undefined): WriteSet {
  const writes: WriteSet = new Map()
  const account = (n: number): string => `bal:${(accounts === undefined ? n : n % accounts).toString(16).padStart(64, '0')}`
  for (let i = 0; i < txs; i++) {
    const from = account(height * txs + i)
    const to = account(height * txs + i + 1_000_000 + 7)
    writes.set(from, Number(state.get(from) ?? 10 ** 12) - 2000)
    writes.set(to, Number(state.get(to) ?? 0) + 1000)
    writes.set(`txid:${(height * txs + i).toString(16).padStart(64, 'f')}`, height)
  }
  writes.set('total_txs', height * txs)
  writes.set('supply', 10 ** 15 + height)
  writes.set(`bal:${'a'.repeat(64)}`, height * txs * 1000)
  return writes
}

export function runStateHashBench (quick = false, log: (line: string) => void = (l) => console.error(l)): StateHashBenchResult {
  const txs = 1000
  const blocks = quick ? 5 : 20
  log(`state hash: ${blocks} blocks of ${txs} TRANSFERs...`)
  // every account already holds a balance: its old value is taken out, as on a chain in use
  const timed = (accounts: number | undefined): { hashMs: number, rootMs: number } => {
    const state = new MemoryState()
    const cache = stateLanesCache()
    let hash = StateHash.empty()
    let hashMs = 0
    let rootMs = 0
    let root = '0'.repeat(64)
    for (let h = 1; h <= blocks; h++) {
      const writes = block(state, h, txs, accounts)
      for (const key of writes.keys()) if (key.startsWith('bal:') && !state.data.has(key)) state.data.set(key, 10 ** 12)
      const t0 = performance.now()
      hash = hash.afterWrites(state, writes, cache)
      hashMs += performance.now() - t0
      const t1 = performance.now()
      root = nextStateRoot(root, writes)
      rootMs += performance.now() - t1
      state.apply(writes)
    }
    return { hashMs, rootMs }
  }
  const cold = timed(undefined)
  const hot = timed(400)
  const n = 20_000
  const probe = StateHash.empty()
  const t2 = performance.now()
  for (let i = 0; i < n; i++) probe.add(`bal:${i}`, i)
  const expansionUs = (performance.now() - t2) * 1000 / n
  return {
    txsPerBlock: txs,
    blocks,
    expansionUs,
    hashUsPerTx: cold.hashMs * 1000 / (blocks * txs),
    hotHashUsPerTx: hot.hashMs * 1000 / (blocks * txs),
    rootUsPerTx: cold.rootMs * 1000 / (blocks * txs),
    machine: describeMachine(machineInfo())
  }
}

export function formatStateHashBench (r: StateHashBenchResult): string {
  return [
    `Keeping the state hash, ${r.blocks} blocks of ${r.txsPerBlock} TRANSFERs (two balances out and in, one new id), ${r.machine}:`,
    '',
    '| | µs |',
    '|---|--:|',
    `| one entry expanded and added (SHAKE256 to 2,048 bytes, 1,024 lane additions) | ${r.expansionUs.toFixed(2)} |`,
    `| state hash update per committed transaction, every account new (5 expansions) | ${r.hashUsPerTx.toFixed(2)} |`,
    `| state hash update per committed transaction, 400 accounts paying each other | ${r.hotHashUsPerTx.toFixed(2)} |`,
    `| chained state root per committed transaction (the existing root, for scale) | ${r.rootUsPerTx.toFixed(2)} |`
  ].join('\n')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(formatStateHashBench(runStateHashBench(process.argv.includes('--quick'))))
}
