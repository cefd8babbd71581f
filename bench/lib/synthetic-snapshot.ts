/**
 * A snapshot file of a large state without running a chain: the genesis state of a home (with the
 * genesis contracts) plus `accounts` balances, at height 1, certified by the home's own validator
 * key (the genesis' only validator). What `kith snapshot import` and a node started on the home
 * then face is what they would face with a real chain of that many accounts. Used by the snapshot
 * benchmark and by the import crash test.
 */
import { createWriteStream } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { once } from 'node:events'
import { join } from 'node:path'
import { GenesisSchema, blockHash, genesisHash, genesisState, txRoot, validatorSetAt, type BlockHeader, type StateValue, type ValidatorSetState } from '../../src/chain/index.js'
import { voteSignBytes } from '../../src/consensus/index.js'
import { genesisContracts, startContractEngine } from '../../src/contracts/index.js'
import { keyPairFromSeed, sign, toBase64 } from '../../src/crypto/index.js'
import { buildManifest, chunkInfos, entryLine, sumOfChunks, type SnapshotManifest } from '../../src/snapshot/index.js'

/** The key of synthetic account `i`: 64 hex digits, as real account keys are. */
export function syntheticAccount (i: number): string {
  return i.toString(16).padStart(64, '0')
}

export interface SyntheticOptions {
  /** chunk target (default the format's): small, for many chunks from a small state */
  chunkBytes?: number
  /** the height the snapshot claims (default 1) */
  height?: number
  /** sign the certificate with this seed (hex) instead of the home's validator key: a forged snapshot */
  signerSeed?: string
}

export async function writeSyntheticSnapshot (home: string, accounts: number, file: string, opts: SyntheticOptions = {}): Promise<SnapshotManifest> {
  const height = opts.height ?? 1
  const genesis = GenesisSchema.parse(JSON.parse(await readFile(join(home, 'genesis.json'), 'utf8')))
  const key = JSON.parse(await readFile(join(home, 'validator_key.json'), 'utf8')) as { pub_key: string, seed: string }
  const engine = await startContractEngine({ inline: true })
  const state = genesisState(genesis, genesisContracts(engine)).state.data
  await engine.close()
  for (let i = 0; i < accounts; i++) state.set(`bal:${syntheticAccount(i)}`, i + 1)
  const entries: Array<[string, StateValue]> = [...state.entries()].sort(([a], [b]) => (a < b ? -1 : 1))
  const chunks = chunkInfos(entries, opts.chunkBytes)
  const header: BlockHeader = {
    chain_id: genesis.chain_id,
    height,
    time: Date.now() - 60_000,
    prev_hash: genesisHash(genesis),
    tx_root: txRoot([]),
    state_root: 'ab'.repeat(32),
    proposer: key.pub_key,
    last_commit_hash: '',
    state_hash: sumOfChunks(chunks).digest()
  }
  const hash = blockHash(header)
  const signer = keyPairFromSeed(Buffer.from(opts.signerSeed ?? key.seed, 'hex'))
  const signature = toBase64(sign(voteSignBytes(genesis.chain_id, { type: 'precommit', height, round: 0, block_hash: hash }), signer.secretKey))
  const manifest = buildManifest({
    chainId: genesis.chain_id,
    genesisHash: genesisHash(genesis),
    header,
    blockHash: hash,
    commit: { height, round: 0, block_hash: hash, signatures: [{ validator: key.pub_key, signature }] },
    validators: validatorSetAt(state.get('valset') as unknown as ValidatorSetState, height),
    chunks
  })
  const out = createWriteStream(file)
  const write = async (text: string): Promise<void> => { if (!out.write(text)) await once(out, 'drain') }
  await write(`${JSON.stringify(manifest)}\n`)
  for (const [k, v] of entries) await write(entryLine(k, v))
  out.end()
  await once(out, 'finish')
  return manifest
}
