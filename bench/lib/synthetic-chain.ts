/**
 * A long chain a new node can replay, without running consensus for hours: empty blocks of a
 * home whose validator is the genesis' only one, built and committed straight into the home's
 * store the way a node commits them (headers linked, state root and state hash from executing
 * the block, the parent's certificate in each, a precommit of the validator over each). A node
 * that block-syncs them checks every certificate and executes every block, as on a real chain.
 */
import { assembleBlock, blockHash, genesisHash, genesisState, selectBlockTxs, type Commit } from '../../src/chain/index.js'
import { voteSignBytes } from '../../src/consensus/index.js'
import { genesisContracts, startContractEngine } from '../../src/contracts/index.js'
import { sign, toBase64, toHex } from '../../src/crypto/index.js'
import { loadHome } from '../../src/node/index.js'
import { ChainStore } from '../../src/storage/index.js'

/** Commits `blocks` empty blocks on top of the home's store (created at genesis when new); returns the head height. */
export async function writeReplayableChain (homeDir: string, blocks: number, log: (line: string) => void = () => {}): Promise<number> {
  const home = await loadHome(homeDir)
  const { genesis } = home
  const validator = toHex(home.validatorKey.publicKey)
  if (genesis.validators.length !== 1 || genesis.validators[0].pub_key !== validator) throw new Error('the home\'s validator must be the genesis\' only one')
  const engine = await startContractEngine({ inline: true })
  const store = ChainStore.open(home.dataDir)
  try {
    await store.init({
      chainId: genesis.chain_id,
      genesisHash: genesisHash(genesis),
      genesisTime: Date.parse(genesis.genesis_time),
      build: () => {
        const { state, stateRoot } = genesisState(genesis, genesisContracts(engine))
        return { state: state.data, stateRoot }
      }
    })
    let head = store.head()
    let lastCommit: Commit | null = head.height === 0 ? null : (store.getCommit(head.height) ?? null)
    // blocks a second apart, ending now, so the node's clock accepts the next one; closer together
    // (down to 1 ms) when the chain's genesis is too recent for that
    const spacing = Math.max(1, Math.min(1000, Math.floor((Date.now() - head.time) / (blocks + 1))))
    const firstTime = Date.now() - blocks * spacing
    const flushes: Array<Promise<void>> = []
    for (let i = 1; i <= blocks; i++) {
      const height = head.height + 1
      const time = firstTime + (i - 1) * spacing
      const selection = selectBlockTxs(store, [], { height, time, proposer: validator, params: genesis.params }, head.state_root, () => false)
      const stateHash = store.stateHashAfter(selection.writes)
      const block = assembleBlock({
        chainId: genesis.chain_id,
        params: genesis.params,
        height,
        time,
        prevHash: head.hash,
        txs: [],
        stateRoot: selection.stateRoot,
        stateHash: stateHash.digest(),
        proposer: validator,
        lastCommit
      })
      const hash = blockHash(block.header)
      const signature = toBase64(sign(voteSignBytes(genesis.chain_id, { type: 'precommit', height, round: 0, block_hash: hash }), home.validatorKey.secretKey))
      const commit: Commit = { height, round: 0, block_hash: hash, signatures: [{ validator, signature }] }
      // written synchronously; its flush to disk is awaited in batches (lmdb groups them)
      flushes.push(store.commitBlock({ block, hash, commit, writes: selection.writes, stateRoot: selection.stateRoot, stateHash, removePending: [] }))
      if (flushes.length >= 1000) await Promise.all(flushes.splice(0))
      lastCommit = commit
      head = store.head()
      if (height % 100_000 === 0) log(`chain: ${height.toLocaleString('en-US')} blocks written`)
    }
    await Promise.all(flushes)
    return head.height
  } finally {
    await store.close()
    await engine.close()
  }
}
