/**
 * The state hash in block headers (docs/protocol.md § 5.4): from the genesis' state_hash_height
 * on, a block built here carries the hash of the state after it, and a block whose state_hash is
 * wrong, missing, or early is refused. A real store on disk; the mempool is a stand-in holding one transfer.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import {
  GenesisSchema, blockHash, checkStateless, encodePayload, genesisHash, genesisState, signTx, type Block, type CheckedTx, type Genesis
} from '../../../src/chain/index.js'
import { startContractEngine, type ContractEngine } from '../../../src/contracts/index.js'
import { toHex } from '../../../src/crypto/index.js'
import { Blocks } from '../../../src/node/blocks.js'
import { CommitCertificates } from '../../../src/node/certificates.js'
import { ChainStore } from '../../../src/storage/index.js'
import { aliceKey, assertKithError, validatorKey, ALICE, BOB, VALIDATOR } from '../../helpers/fixtures.js'
import { silent, withTempDir } from '../relay/helpers.js'

const GENESIS_TIME = '2026-01-02T03:04:05Z'

function genesisWith (params: { state_hash_height?: number, max_block_txs?: number, block_reward_ut?: number }): Genesis {
  return GenesisSchema.parse({
    chain_id: 'kith-blocks-test',
    genesis_time: GENESIS_TIME,
    params,
    validators: [{ pub_key: VALIDATOR, power: 1 }],
    alloc: [{ pub_key: ALICE, amount_ut: 10_000_000 }]
  })
}

/** The one pending transaction: alice pays bob, so the block changes the state. */
const pay = checkStateless(signTx({
  id: 'pay-1', type: 'TRANSFER', from: ALICE, to: BOB, amount: 1000, fee: 1000, payload: encodePayload({}), timestamp: GENESIS_TIME
}, aliceKey.secretKey))

async function withBlocks (genesis: Genesis, fn: (blocks: () => Blocks, store: ChainStore) => Promise<void>, take: (max: number) => CheckedTx[] = () => [pay]): Promise<void> {
  await withTempDir(async (dir) => {
    const contracts: ContractEngine = await startContractEngine({ inline: true })
    const store = ChainStore.open(join(dir, 'chain'))
    try {
      await store.init({
        chainId: genesis.chain_id,
        genesisHash: genesisHash(genesis),
        genesisTime: Date.parse(genesis.genesis_time),
        build: () => { const { state, stateRoot } = genesisState(genesis); return { state: state.data, stateRoot } }
      })
      // a new Blocks each time: one that built a block would find it in its cache instead of checking it
      const blocks = (): Blocks => new Blocks({
        store,
        mempool: { get: () => undefined, take },
        contracts,
        genesis,
        validatorKey,
        validatorPub: toHex(validatorKey.publicKey),
        clock: { now: () => Date.parse(GENESIS_TIME) + 1000 },
        certificates: new CommitCertificates(genesis.chain_id),
        validators: () => genesis.validators.map((v) => ({ pub_key: v.pub_key, power: v.power })),
        buildBudgetMs: 1000,
        log: silent
      })
      await fn(blocks, store)
    } finally {
      await store.close()
      await contracts.close()
    }
  })
}

/** `block` with its header changed, hashed again as a lying proposer would. */
function withHeader (block: Block, change: (header: Block['header']) => Block['header']): { block: Block, hash: string } {
  const header = change({ ...block.header })
  return { block: { ...block, header }, hash: blockHash(header) }
}

test('from state_hash_height on, a built block carries the state hash after it, and a checker agrees', async () => {
  await withBlocks(genesisWith({ state_hash_height: 1 }), async (blocks, store) => {
    const { block, blockHash: hash } = blocks().build(1, 0)
    assert.equal(block.txs.length, 1)
    const expected = store.stateHashAfter(blocks().check(block, hash).writes).digest()
    assert.equal(block.header.state_hash, expected)
    assert.notEqual(expected, store.stateHash().digest(), 'the block changed the state')
  })
})

test('a block whose state_hash is wrong or missing is refused, even with its hash recomputed', async () => {
  await withBlocks(genesisWith({ state_hash_height: 1 }), async (blocks, store) => {
    const { block } = blocks().build(1, 0)
    const wrong = withHeader(block, (h) => ({ ...h, state_hash: store.stateHash().digest() }))
    assertKithError(() => blocks().check(wrong.block, wrong.hash), 'BLOCK_INVALID', 'state_hash does not match')
    const missing = withHeader(block, ({ state_hash: _, ...h }) => h)
    assertKithError(() => blocks().check(missing.block, missing.hash), 'BLOCK_INVALID', 'state_hash does not match')
  })
})

test('before state_hash_height (a genesis without it: every height) headers carry none, and one that does is refused', async () => {
  for (const params of [{}, { state_hash_height: 5 }]) {
    await withBlocks(genesisWith(params), async (blocks, store) => {
      const { block, blockHash: hash } = blocks().build(1, 0)
      assert.equal(block.header.state_hash, undefined)
      blocks().check(block, hash)
      const early = withHeader(block, (h) => ({ ...h, state_hash: store.stateHashAfter(blocks().check(block, hash).writes).digest() }))
      assertKithError(() => blocks().check(early.block, early.hash), 'BLOCK_INVALID', 'before the chain\'s state_hash_height')
    })
  }
})

test('a block takes as many transactions as its bound allows, one fewer where blocks carry a reward', async () => {
  for (const [reward, expected] of [[0, 3], [5, 2]]) {
    let asked: number | undefined
    await withBlocks(genesisWith({ max_block_txs: 3, block_reward_ut: reward }), async (blocks) => {
      const { block } = blocks().build(1, 0)
      assert.equal(asked, expected, `reward ${reward}: the mempool is asked for ${expected}`)
      assert.equal(block.txs.length, reward > 0 ? 2 : 1, 'the one pending transfer, and the reward where there is one')
    }, (max) => { asked = max; return [pay] })
  }
})
