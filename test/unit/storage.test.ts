import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { encodePayload, formatTimestamp, signTx, type Block, type Transaction } from '../../src/chain/index.js'
import { open } from 'lmdb'
import type { ConsensusRecord, Proposal } from '../../src/consensus/index.js'
import { ChainReader, ChainStore } from '../../src/storage/index.js'
import { encodeBlockBody } from '../../src/storage/block-body.js'
import { TxIdsByHeight } from '../../src/storage/reader.js'
import { ALICE, BOB, CAROL, aliceKey } from '../helpers/fixtures.js'

function tx (id: string, to: string): Transaction {
  return signTx({ id, type: 'TRANSFER', from: ALICE, to, amount: 1, fee: 1000, payload: encodePayload({}), timestamp: formatTimestamp(0) }, aliceKey.secretKey)
}

function block (height: number, txs: Transaction[]): Block {
  return {
    header: { chain_id: 'c', height, time: height * 1000, prev_hash: `p${height}`, tx_root: '', state_root: '', proposer: CAROL, last_commit_hash: '' },
    txs,
    last_commit: null
  }
}

/** A block's writes as executing it gives them: every transaction's `txid:` entry, by which reads find it. */
function seen (b: Block, writes: Array<[string, number | null]> = []): Map<string, number | null> {
  return new Map([...writes, ...b.txs.map((t): [string, number] => [`txid:${t.id}`, b.header.height])])
}

function proposal (height: number, txs: Transaction[]): Proposal {
  return { height, round: 0, pol_round: -1, block: block(height, txs), block_hash: `b${height}`, proposer: CAROL, signature: 's' }
}

function record (height: number, proposals: Proposal[]): ConsensusRecord {
  return { height, round: 0, step: 'prevote', lockedRound: 0, lockedHash: proposals[0]?.block_hash ?? null, validRound: 0, validHash: null, proposals, ownVotes: [] }
}

/** Runs `body` with a fresh temporary directory, removed afterwards. */
async function withStoreDir (body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'kith-store-'))
  try {
    await body(dir)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

const initArgs = { chainId: 'c', genesisHash: 'g', genesisTime: 0, build: () => ({ state: new Map(), stateRoot: 'r0' }) }

describe('ChainStore', () => {
  test('the consensus record survives reopening with its proposals, and is forgotten once its height commits', async () => await withStoreDir(async (dir) => {
    let store = ChainStore.open(dir)
    await store.init(initArgs)
    const held = record(1, [proposal(1, [tx('t1', BOB)])])
    await store.putConsensusRecord(held)
    await store.close()

    store = ChainStore.open(dir)
    assert.deepEqual(store.consensusRecord(), held)
    await store.commitBlock({ block: block(1, [tx('t1', BOB)]), hash: 'b1', commit: null, writes: new Map(), stateRoot: 'r1', removePending: [] })
    assert.equal(store.consensusRecord(), undefined)
    await store.close()
  }))

  test('a consensus record kept in the chain\'s environment (stores before the record had its own) is moved, proposals included', async () => await withStoreDir(async (dir) => {
    const held = record(3, [proposal(3, [tx('t1', BOB)])])
    const legacy = open({ path: dir, compression: false })
    await legacy.openDB({ name: 'proposals' }).put([3, 0, 'b3'], held.proposals[0])
    await legacy.openDB({ name: 'consensus' }).put('record', { ...held, proposals: [[3, 0, 'b3']] })
    await legacy.close()

    let store = ChainStore.open(dir)
    assert.deepEqual(store.consensusRecord(), held)
    await store.close()
    store = ChainStore.open(dir)
    assert.deepEqual(store.consensusRecord(), held, 'still there after the move')
    await store.close()
  }))

  test('a committed block reads back whole, indexes included, after reopening', async () => await withStoreDir(async (dir) => {
    let store = ChainStore.open(dir)
    await store.init({ chainId: 'c', genesisHash: 'g', genesisTime: 0, build: () => ({ state: new Map([['bal:x', 5]]), stateRoot: 'r0' }) })
    await store.putPending({ seq: 1, tx: tx('t1', BOB) })
    await store.putPending({ seq: 2, tx: tx('t2', CAROL) })
    await store.putPending({ seq: 3, tx: tx('t3', BOB) })
    const b1 = block(1, [tx('t1', BOB), tx('t2', CAROL)])
    await store.commitBlock({ block: b1, hash: 'h1', commit: { height: 1, round: 0, block_hash: 'h1', signatures: [] }, writes: seen(b1, [['bal:x', 7], ['gone', null]]), stateRoot: 'r1', removePending: ['t1', 't2'] })
    const b2 = block(2, [tx('t3', BOB)])
    await store.commitBlock({ block: b2, hash: 'h2', commit: null, writes: seen(b2), stateRoot: 'r2', removePending: ['t3'] })
    await store.close()

    store = ChainStore.open(dir)
    await store.init({ chainId: 'c', genesisHash: 'g', genesisTime: 0, build: () => ({ state: new Map(), stateRoot: 'r0' }) })
    assert.deepEqual(store.head(), { height: 2, hash: 'h2', state_root: 'r2', time: 2000 })
    assert.deepEqual(store.getBlock(1)?.block, b1)
    assert.equal(store.getBlock(2)?.block.txs.length, 1)
    assert.equal(store.getCommit(1)?.block_hash, 'h1')
    assert.equal(store.get('bal:x'), 7)
    assert.deepEqual(store.getTx('t2'), { tx: tx('t2', CAROL), height: 1, index: 1 })
    assert.equal(store.getTx('nope'), undefined)
    assert.deepEqual(store.addressHistory(BOB, 10), { ids: ['t3', 't1'], count: 2 })
    assert.deepEqual(store.addressHistory(ALICE, 2), { ids: ['t3', 't2'], count: 3 })
    assert.deepEqual(store.pending(), [])
    assert.equal(store.getBlockSummary(1)?.tx_count, 2)
    await store.close()
  }))

  test('a store refuses a different genesis', async () => await withStoreDir(async (dir) => {
    const store = ChainStore.open(dir)
    await store.init({ chainId: 'c', genesisHash: 'g', genesisTime: 0, build: () => ({ state: new Map(), stateRoot: 'r0' }) })
    await assert.rejects(store.init({ chainId: 'c', genesisHash: 'other', genesisTime: 0, build: () => ({ state: new Map(), stateRoot: 'r0' }) }), /genesis/)
    await store.close()
  }))

  test('prune drops the transactions of old blocks (ids and address histories too) and keeps headers, certificates and state', async () => await withStoreDir(async (dir) => {
    let store = ChainStore.open(dir)
    await store.init({ ...initArgs, build: () => ({ state: new Map([['txid:t1', 1]]), stateRoot: 'r0' }) })
    const commit = (h: number): { height: number, round: number, block_hash: string, signatures: [] } => ({ height: h, round: 0, block_hash: `b${h}`, signatures: [] })
    for (let h = 1; h <= 6; h++) {
      await store.commitBlock({ block: block(h, [tx(`t${h}`, h % 2 === 0 ? BOB : CAROL)]), hash: `b${h}`, commit: commit(h), writes: new Map([[`txid:t${h}`, h]]), stateRoot: `r${h}`, removePending: [] })
    }
    assert.equal(store.earliestBody(), 1)
    assert.equal(await store.prune(4, 2), 3, 'at most two heights per call')
    assert.equal(await store.prune(4, 100), 4, 'never at or above keepFrom')
    assert.equal(await store.prune(4, 100), 4, 'nothing more to do')
    await store.close()

    store = ChainStore.open(dir)
    assert.equal(store.earliestBody(), 4, 'the bound survives reopening')
    for (const h of [1, 2, 3]) {
      assert.equal(store.getBlock(h), undefined, `block ${h} has no body`)
      assert.equal(store.getTx(`t${h}`), undefined)
      assert.equal(store.getHeader(h)?.hash, `b${h}`, 'the header stays')
      assert.deepEqual(store.getCommit(h), commit(h), 'the certificate stays')
      assert.equal(store.getBlockSummary(h)?.tx_count, 1, 'the summary stays')
      assert.equal(store.get(`txid:t${h}`), h, 'the state still knows the id (duplicates are refused)')
    }
    for (const h of [4, 5, 6]) assert.equal(store.getBlock(h)?.block.txs[0].id, `t${h}`)
    // ALICE sent all six: only the kept three remain in her history, newest first
    assert.deepEqual(store.addressHistory(ALICE, 10).ids, ['t6', 't5', 't4'])
    assert.deepEqual(store.addressHistory(BOB, 10).ids, ['t6', 't4'])
    assert.deepEqual(store.addressHistory(CAROL, 10).ids, ['t5'])
    await store.close()
  }))

  test('a block\'s transaction ids, kept for recent blocks, are never given beyond the head or below a prune', async () => await withStoreDir(async (dir) => {
    const store = ChainStore.open(dir)
    await store.init(initArgs)
    for (let h = 1; h <= 3; h++) {
      await store.commitBlock({ block: block(h, [tx(`a${h}`, BOB), tx(`b${h}`, CAROL)]), hash: `b${h}`, commit: null, writes: new Map(), stateRoot: `r${h}`, removePending: [] })
    }
    assert.deepEqual(store.blockTxIds(2), ['a2', 'b2'])
    assert.deepEqual(store.blockTxIds(2), ['a2', 'b2'], 'the same from the cache')
    assert.equal(store.blockTxIds(4), undefined, 'beyond the head')
    assert.equal(store.blockTxIds(0), undefined, 'genesis has no body')
    // a reader opened read-only on the same files (an HTTP edge's) gives the same
    const reader = ChainReader.openReadOnly(dir)
    assert.deepEqual(reader.blockTxIds(3), ['a3', 'b3'])
    assert.equal(await store.prune(3, 10), 3)
    assert.equal(store.blockTxIds(2), undefined, 'pruned, though it was cached')
    reader.fresh()
    assert.equal(reader.blockTxIds(2), undefined, 'pruned, for the other reader too')
    assert.deepEqual(reader.blockTxIds(3), ['a3', 'b3'])
    await reader.close()
    await store.close()
  }))

  test('the state hash is kept with each block, survives reopening, and equals a scan of the state', async () => await withStoreDir(async (dir) => {
    const { StateHash } = await import('../../src/chain/index.js')
    let store = ChainStore.open(dir)
    await store.init({ ...initArgs, build: () => ({ state: new Map([['bal:x', 5], ['gone', 1]]), stateRoot: 'r0' }) })
    const scanned = (): string => StateHash.ofEntries(store.scanState('')).digest()
    assert.equal(store.stateHash().digest(), scanned(), 'genesis')
    await store.commitBlock({ block: block(1, [tx('t1', BOB)]), hash: 'b1', commit: null, writes: new Map<string, number | null>([['bal:x', 7], ['bal:y', 1], ['gone', null]]), stateRoot: 'r1', removePending: [] })
    assert.equal(store.stateHash().digest(), scanned(), 'after a block that sets, adds and deletes')
    assert.equal(store.getBlockSummary(1)?.state_hash, scanned(), 'the block summary carries it')
    const kept = store.stateHash().digest()
    await store.close()
    store = ChainStore.open(dir)
    await store.init(initArgs)
    assert.equal(store.stateHash().digest(), kept)
    await store.close()
  }))

  test('a store written before block bodies has its transactions moved into them at open, batch by batch, resuming where a crash stopped', async () => await withStoreDir(async (dir) => {
    let store = ChainStore.open(dir)
    await store.init(initArgs)
    await store.close()
    // heights 2-4 as the old layout wrote them; height 1 already moved, as a crash after the
    // first batch leaves it; 25,000 transfers a height, so the move takes two batches of heights
    const legacy = open({ path: dir, compression: false })
    const db = (name: string): ReturnType<typeof legacy.openDB> => legacy.openDB({ name })
    const perHeight = 25_000
    const txAt = (h: number, i: number): Transaction => ({
      id: `h${h}-${i}`, type: 'TRANSFER', from: ALICE, to: i % 2 === 0 ? BOB : CAROL, amount: 1, fee: 1000, payload: 'e30=', signature: 's', timestamp: formatTimestamp(0), ...(i === 7 ? { memo: 'kept' } : {})
    })
    const counts = new Map<string, number>()
    await legacy.transaction(() => {
      db('meta').remove('layout')
      const first = [txAt(1, 0), txAt(1, 1)]
      const bodies = legacy.openDB({ name: 'block_bodies', encoding: 'binary' })
      encodeBlockBody(first).forEach((record, k) => bodies.put([1, k], record))
      db('addr_blocks').put([ALICE, 1], ['h1-0', 'h1-1'])
      db('addr_blocks').put([BOB, 1], ['h1-0'])
      db('addr_blocks').put([CAROL, 1], ['h1-1'])
      counts.set(ALICE, 2).set(BOB, 1).set(CAROL, 1)
      db('state').put('txid:h1-0', 1)
      db('state').put('txid:h1-1', 1)
      for (let h = 2; h <= 4; h++) {
        for (let i = 0; i < perHeight; i++) {
          const t = txAt(h, i)
          db('txs').put([h, i], t)
          db('tx_ids').put(t.id, [h, i])
          db('state').put(`txid:${t.id}`, h)
          for (const pubkey of [t.from, t.to]) {
            const n = (counts.get(pubkey) ?? 0) + 1
            counts.set(pubkey, n)
            db('addr').put([pubkey, n], t.id)
          }
        }
      }
      for (const [pubkey, n] of counts) db('addr_count').put(pubkey, n)
      for (let h = 1; h <= 4; h++) db('blocks').put(h, { block: { header: block(h, []).header, last_commit: null }, hash: `b${h}`, commit: null })
      db('meta').put('head', { height: 4, hash: 'b4', state_root: 'r4', time: 4000 })
    })
    await legacy.close()

    store = ChainStore.open(dir)
    assert.deepEqual(store.getTx('h1-1'), { tx: txAt(1, 1), height: 1, index: 1 }, 'the height moved before the crash')
    for (const [h, i] of [[2, 0], [3, 7], [4, perHeight - 1]]) assert.deepEqual(store.getTx(`h${h}-${i}`), { tx: txAt(h, i), height: h, index: i })
    assert.deepEqual(store.getBlock(3)?.block.txs.slice(0, 8), Array.from({ length: 8 }, (_, i) => txAt(3, i)))
    assert.deepEqual(store.addressHistory(ALICE, 3), { ids: [`h4-${perHeight - 1}`, `h4-${perHeight - 2}`, `h4-${perHeight - 3}`], count: 2 + 3 * perHeight })
    assert.deepEqual(store.addressHistory(BOB, 1_000_000).ids.slice(-2), ['h2-0', 'h1-0'], 'every height, in order')
    assert.equal(store.addressHistory(BOB, 1_000_000).ids.length, 1 + 3 * perHeight / 2)
    await store.close()
    const raw = open({ path: dir, compression: false, readOnly: true })
    assert.equal(raw.openDB({ name: 'meta' }).get('layout'), 2)
    // a read-only environment opens no table that is not there
    for (const name of ['txs', 'tx_ids', 'addr']) assert.equal(raw.openDB({ name }) as unknown, undefined, `${name} is dropped`)
    await raw.close()
    store = ChainStore.open(dir)
    assert.equal(store.getTx('h2-5')?.index, 5, 'reopening moves nothing twice')
    await store.close()
  }))

  test('a store written before the state hash was kept gets it from a scan at start', async () => await withStoreDir(async (dir) => {
    const { StateHash } = await import('../../src/chain/index.js')
    let store = ChainStore.open(dir)
    await store.init({ ...initArgs, build: () => ({ state: new Map([['bal:x', 5]]), stateRoot: 'r0' }) })
    await store.close()
    const raw = open({ path: dir, compression: false })
    await raw.openDB({ name: 'meta' }).remove('state_hash')
    await raw.close()
    store = ChainStore.open(dir)
    await store.init(initArgs)
    assert.equal(store.stateHash().digest(), StateHash.ofEntries([['bal:x', 5]]).digest())
    await store.close()
  }))
})

describe('TxIdsByHeight', () => {
  test('holds at most its bound of ids, oldest block out first; the list just put always stays', () => {
    const kept = new TxIdsByHeight(10)
    kept.set(1, ['a', 'b', 'c', 'd'])
    kept.set(2, ['e', 'f', 'g', 'h'])
    assert.equal(kept.size, 8)
    kept.set(3, ['i', 'j', 'k'])
    assert.equal(kept.get(1), undefined, 'the oldest went')
    assert.deepEqual(kept.get(2), ['e', 'f', 'g', 'h'])
    assert.equal(kept.size, 7)
    // a block larger than the bound on its own is kept, alone
    kept.set(4, Array.from({ length: 25 }, (_, i) => `x${i}`))
    assert.equal(kept.size, 25)
    assert.equal(kept.get(2), undefined)
    assert.equal(kept.get(3), undefined)
    assert.equal(kept.get(4)?.length, 25)
    // putting a height again replaces its list and its count
    kept.set(4, ['y'])
    assert.equal(kept.size, 1)
  })
})
