/**
 * State sync (src/snapshot/sync.ts) against peers that are real SnapshotServices serving real
 * snapshot files, reached through a stand-in for the libp2p host: honest peers, a peer whose
 * chunks are altered, one whose manifest is, one that offers a forged snapshot at a newer height,
 * and one that never answers. And what a node serving snapshots refuses a stranger: malformed and
 * out-of-range requests, more bytes a second than its budget, more reads at once than it allows.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { copyFile, mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { GenesisSchema, StateKeys, type Genesis } from '../../../src/chain/index.js'
import { toHex } from '../../../src/crypto/index.js'
import { ChainStore } from '../../../src/storage/index.js'
import { SNAPSHOT_DIR, SnapshotService, StateSync, type SnapshotManifest, type SyncNetwork } from '../../../src/snapshot/index.js'
import { syntheticAccount, writeSyntheticSnapshot } from '../../../bench/lib/synthetic-snapshot.js'
import { seeded, validatorKey, VALIDATOR } from '../../helpers/fixtures.js'
import { silent, withTempDir } from '../relay/helpers.js'

const ACCOUNTS = 3000
const CHUNK_BYTES = 8 * 1024

const GENESIS: Genesis = GenesisSchema.parse({
  chain_id: 'kith-sync',
  genesis_time: '2026-01-02T03:04:05Z',
  params: { state_hash_height: 1 },
  validators: [{ pub_key: VALIDATOR, power: 1 }]
})

type Behaviour = 'honest' | 'lies-chunks' | 'lies-manifest' | 'silent' | 'garbage' | 'floods-offers'

interface Fixture {
  dir: string
  manifest: SnapshotManifest
  /** a snapshot file at height 1 every honest peer serves */
  file: string
}

async function fixture (dir: string): Promise<Fixture> {
  const home = join(dir, 'home')
  await mkdir(home)
  await writeFile(join(home, 'genesis.json'), JSON.stringify(GENESIS))
  await writeFile(join(home, 'validator_key.json'), JSON.stringify({ pub_key: VALIDATOR, seed: toHex(validatorKey.secretKey.subarray(0, 32)) }))
  const file = join(dir, 'one.snapshot')
  const manifest = await writeSyntheticSnapshot(home, ACCOUNTS, file, { chunkBytes: CHUNK_BYTES })
  return { dir, manifest, file }
}

/** A peer serving `files` from its own data directory. */
async function peer (dir: string, name: string, files: Array<[string, number]>): Promise<SnapshotService> {
  const dataDir = join(dir, name)
  await mkdir(join(dataDir, SNAPSHOT_DIR), { recursive: true })
  for (const [file, height] of files) await copyFile(file, join(dataDir, SNAPSHOT_DIR, `${height}.snapshot`))
  return await SnapshotService.open({ dataDir, interval: 0, firstHeight: 1, keep: 4, log: silent })
}

/** The libp2p host as the sync sees it: each peer answers through its service, as it behaves. */
function network (peers: Record<string, [SnapshotService, Behaviour]>, calls: string[] = []): SyncNetwork {
  return {
    peers: () => Object.keys(peers),
    request: async (id, data, timeoutMs) => {
      const [service, behaviour] = peers[id]
      const request = JSON.parse(Buffer.from(data).toString('utf8')) as { type: string, index?: number }
      calls.push(`${id}:${request.type}${request.index !== undefined ? `:${request.index}` : ''}`)
      if (behaviour === 'garbage') return Buffer.from('\u0000not json at all\uffff')
      if (behaviour === 'floods-offers' && request.type === 'snapshots') {
        // more offers than any node keeps, each naming a height nobody has
        return Buffer.from(JSON.stringify({ snapshots: Array.from({ length: 10_000 }, (_, i) => ({ height: i + 2, block_hash: 'ef'.repeat(32), chunks: 1, manifest_bytes: 1 })) }))
      }
      if (behaviour === 'silent') {
        await new Promise((resolve) => setTimeout(resolve, timeoutMs))
        throw new Error(`request to ${id} timed out after ${timeoutMs} ms`)
      }
      const answer = Buffer.from(await service.answer(request, id))
      if ((behaviour === 'lies-chunks' && request.type === 'snapshot_chunk') || (behaviour === 'lies-manifest' && request.type === 'snapshot_manifest')) {
        const at = behaviour === 'lies-manifest' ? answer.indexOf('"lanes":"') + 9 : answer.length >> 1
        answer[at] ^= 1
      }
      return answer
    }
  }
}

async function restoredBalances (dataDir: string, accounts: number[]): Promise<number[]> {
  const store = ChainStore.open(dataDir)
  try {
    return accounts.map((i) => store.get(StateKeys.balance(syntheticAccount(i))) as number)
  } finally {
    await store.close()
  }
}

describe('state sync from peers', () => {
  test('chunks come from every honest peer at once; a peer whose chunks are altered is dropped and its chunks fetched again', async () => {
    await withTempDir(async (dir) => {
      const { manifest, file } = await fixture(dir)
      assert.ok(manifest.chunks.length >= 20, `${manifest.chunks.length} chunks`)
      const calls: string[] = []
      const peers = {
        a: [await peer(dir, 'a', [[file, 1]]), 'honest'],
        b: [await peer(dir, 'b', [[file, 1]]), 'honest'],
        liar: [await peer(dir, 'liar', [[file, 1]]), 'lies-chunks']
      } satisfies Record<string, [SnapshotService, Behaviour]>
      const dataDir = join(dir, 'new')
      await mkdir(dataDir)
      const result = await new StateSync({ dataDir, genesis: GENESIS, network: network(peers, calls), log: silent, discoveryMs: 5000 }).run()
      assert.deepEqual(result.dropped, ['liar'])
      assert.deepEqual([...result.served_by].sort(), ['a', 'b'])
      assert.equal(result.chunks, manifest.chunks.length)
      assert.ok(calls.filter((c) => c.startsWith('liar:snapshot_chunk')).length >= 1, 'the liar was asked for a chunk')
      assert.deepEqual(await restoredBalances(dataDir, [0, 1234, ACCOUNTS - 1]), [1, 1235, ACCOUNTS])
      assert.ok(!existsSync(join(dataDir, '.snapshot-import')))
    })
  })

  test('a manifest that does not add up is refused and its peer dropped; a forged snapshot at a newer height is refused, and the older true one synced', async () => {
    await withTempDir(async (dir) => {
      const { file } = await fixture(dir)
      // height 5, more accounts, certified by a key that is not the genesis validator's
      const forged = join(dir, 'forged.snapshot')
      await writeSyntheticSnapshot(join(dir, 'home'), ACCOUNTS + 10, forged, { chunkBytes: CHUNK_BYTES, height: 5, signerSeed: toHex(seeded(0x99).secretKey.subarray(0, 32)) })
      const peers = {
        forger: [await peer(dir, 'forger', [[forged, 5]]), 'honest'],
        liar: [await peer(dir, 'liar', [[file, 1]]), 'lies-manifest'],
        honest: [await peer(dir, 'honest', [[file, 1]]), 'honest']
      } satisfies Record<string, [SnapshotService, Behaviour]>
      const dataDir = join(dir, 'new')
      await mkdir(dataDir)
      const result = await new StateSync({ dataDir, genesis: GENESIS, network: network(peers), log: silent, discoveryMs: 5000 }).run()
      assert.equal(result.height, 1)
      // discovery asks the peers in order and they answer alike, so the liar is asked for the manifest before the honest peer
      assert.deepEqual([...result.dropped].sort(), ['forger', 'liar'])
      assert.deepEqual(result.served_by, ['honest'])
      assert.deepEqual(await restoredBalances(dataDir, [ACCOUNTS - 1]), [ACCOUNTS])
    })
  })

  test('a peer that never answers is left out after a few tries; with no snapshot anywhere the sync gives up with a clear error and writes nothing', async () => {
    await withTempDir(async (dir) => {
      const { file } = await fixture(dir)
      const peers = {
        mute: [await peer(dir, 'mute', [[file, 1]]), 'silent'],
        honest: [await peer(dir, 'honest', [[file, 1]]), 'honest']
      } satisfies Record<string, [SnapshotService, Behaviour]>
      const dataDir = join(dir, 'new')
      await mkdir(dataDir)
      const result = await new StateSync({ dataDir, genesis: GENESIS, network: network(peers), log: silent, discoveryMs: 20_000, requestTimeoutMs: 200 }).run()
      assert.deepEqual(result.served_by, ['honest'])

      const empty = { none: [await peer(dir, 'none', []), 'honest'] } satisfies Record<string, [SnapshotService, Behaviour]>
      const other = join(dir, 'other')
      await mkdir(other)
      await assert.rejects(new StateSync({ dataDir: other, genesis: GENESIS, network: network(empty), log: silent, discoveryMs: 1500 }).run(), /no peer offered a snapshot that could be synced within 1500 ms/)
      assert.ok(!existsSync(join(other, 'data.mdb')))
    })
  })
  test('a peer that answers garbage, or floods its list of offers, is not a source: the sync takes the honest peer\'s snapshot', async () => {
    await withTempDir(async (dir) => {
      const { file } = await fixture(dir)
      const calls: string[] = []
      const peers = {
        garbage: [await peer(dir, 'garbage', [[file, 1]]), 'garbage'],
        flooder: [await peer(dir, 'flooder', [[file, 1]]), 'floods-offers'],
        honest: [await peer(dir, 'honest', [[file, 1]]), 'honest']
      } satisfies Record<string, [SnapshotService, Behaviour]>
      const dataDir = join(dir, 'new')
      await mkdir(dataDir)
      const result = await new StateSync({ dataDir, genesis: GENESIS, network: network(peers, calls), log: silent, discoveryMs: 5000 }).run()
      assert.equal(result.height, 1)
      assert.deepEqual(result.served_by, ['honest'])
      assert.deepEqual(calls.filter((c) => !c.startsWith('honest:') && c.split(':')[1] !== 'snapshots'), [], 'nothing but the list was asked of them')
    })
  })
})

describe('serving snapshots to strangers', () => {
  test('malformed requests, unknown heights and chunks out of range are refused by name', async () => {
    await withTempDir(async (dir) => {
      const { file, manifest } = await fixture(dir)
      const service = await peer(dir, 'server', [[file, 1]])
      const ask = async (request: unknown): Promise<Buffer> => Buffer.from(await service.answer(request, 'stranger'))
      await assert.rejects(ask({ type: 'snapshot_chunk', height: 1 }), /malformed snapshot request/)
      await assert.rejects(ask({ type: 'snapshot_chunk', height: 1, index: -1 }), /malformed snapshot request/)
      await assert.rejects(ask({ type: 'snapshot_manifest', height: 7 }), /no snapshot at height 7 here \(offered: 1\)/)
      await assert.rejects(ask({ type: 'snapshot_chunk', height: 1, index: manifest.chunks.length }), new RegExp(`has ${manifest.chunks.length} chunks, no chunk ${manifest.chunks.length}`))
      const offers = JSON.parse((await ask({ type: 'snapshots' })).toString()) as { snapshots: Array<{ height: number, chunks: number }> }
      assert.deepEqual(offers.snapshots.map((o) => [o.height, o.chunks]), [[1, manifest.chunks.length]])
      assert.equal((await ask({ type: 'snapshot_chunk', height: 1, index: 0 })).length, manifest.chunks[0].bytes)
    })
  })

  test('a peer gets its byte budget a second and a few reads at once; another peer is not held back by it', async () => {
    await withTempDir(async (dir) => {
      const { file, manifest } = await fixture(dir)
      const dataDir = join(dir, 'server')
      await mkdir(join(dataDir, SNAPSHOT_DIR), { recursive: true })
      await copyFile(file, join(dataDir, SNAPSHOT_DIR, '1.snapshot'))
      let now = 0
      const chunk = manifest.chunks[0].bytes
      const service = await SnapshotService.open({
        dataDir, interval: 0, firstHeight: 1, keep: 2, log: silent, now: () => now,
        limits: { peerBurstBytes: 3 * chunk, peerBytesPerSecond: chunk, peerConcurrent: 2, totalConcurrent: 3 }
      })
      const ask = async (from: string, index = 0): Promise<Uint8Array> => await service.answer({ type: 'snapshot_chunk', height: 1, index }, from)
      for (let i = 0; i < 3; i++) await ask('greedy')
      await assert.rejects(ask('greedy'), /rate limited: ask again in \d+ ms/)
      await ask('other')
      now += 1000
      await ask('greedy')
      // reads at once: two per peer, three in all
      now += 10_000
      const reads = await Promise.allSettled([ask('greedy', 0), ask('greedy', 1), ask('greedy', 2), ask('other', 0), ask('third', 0)])
      const refused = reads.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => String((r.reason as Error).message))
      assert.ok(refused.some((m) => /busy: 2 chunk reads of yours are under way/.test(m)), refused.join('; '))
      assert.ok(refused.some((m) => /busy: serving other peers/.test(m)), refused.join('; '))
      assert.equal(reads.filter((r) => r.status === 'fulfilled').length, 3)
    })
  })
})
