/**
 * The snapshot format (src/snapshot/format.ts): chunks add up to the state hash, each chunk is
 * checked against its lanes on its own, and a manifest is trusted only with a certificate by a
 * quorum of its validators of whom more than a third of the genesis power signed (or a block
 * hash the operator names). Every way a lying peer or a damaged file could differ is refused.
 */
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { GenesisSchema, StateHash, blockHash, genesisHash, type BlockHeader, type Commit, type StateValue } from '../../../src/chain/index.js'
import { voteSignBytes } from '../../../src/consensus/index.js'
import { sign, toBase64, toHex, type KeyPair } from '../../../src/crypto/index.js'
import { ChunkBuilder, buildManifest, entryLine, verifyChunk, verifyManifest, type ChunkInfo, type SnapshotManifest } from '../../../src/snapshot/index.js'
import { assertKithError, bobKey, carolKey, seeded, validatorKey, VALIDATOR } from '../../helpers/fixtures.js'

const GENESIS = GenesisSchema.parse({ chain_id: 'kith-snap', genesis_time: '2026-01-02T03:04:05Z', params: { state_hash_height: 1 }, validators: [{ pub_key: VALIDATOR, power: 1 }] })
const GENESIS_HASH = genesisHash(GENESIS)

const STATE: Array<[string, StateValue]> = Array.from({ length: 300 }, (_, i) => [`bal:${String(i).padStart(4, '0')}`, 1000 + i])

function chunksOf (entries: Array<[string, StateValue]>, targetBytes: number): Array<{ text: string, info: ChunkInfo }> {
  const builder = new ChunkBuilder(targetBytes)
  const chunks: Array<{ text: string, info: ChunkInfo }> = []
  for (const [key, value] of entries) {
    const closed = builder.add(key, value)
    if (closed !== undefined) chunks.push(closed)
  }
  const last = builder.flush()
  if (last !== undefined) chunks.push(last)
  return chunks
}

function certify (hash: string, height: number, signers: KeyPair[]): Commit {
  const bytes = voteSignBytes(GENESIS.chain_id, { type: 'precommit', height, round: 0, block_hash: hash })
  return { height, round: 0, block_hash: hash, signatures: signers.map((k) => ({ validator: toHex(k.publicKey), signature: toBase64(sign(bytes, k.secretKey)) })) }
}

/** A manifest for STATE at height 7, certified by `signers` (the validators it names). */
function snapshot (opts: { signers?: KeyPair[], entries?: Array<[string, StateValue]> } = {}): { manifest: SnapshotManifest, chunks: Array<{ text: string, info: ChunkInfo }> } {
  const entries = opts.entries ?? STATE
  const signers = opts.signers ?? [validatorKey]
  const chunks = chunksOf(entries, 1000)
  const header: BlockHeader = {
    chain_id: GENESIS.chain_id,
    height: 7,
    time: 1767323046000,
    prev_hash: 'aa'.repeat(32),
    tx_root: 'bb'.repeat(32),
    state_root: 'cc'.repeat(32),
    proposer: VALIDATOR,
    last_commit_hash: 'dd'.repeat(32),
    state_hash: StateHash.ofEntries(entries).digest()
  }
  const hash = blockHash(header)
  const manifest = buildManifest({
    chainId: GENESIS.chain_id,
    genesisHash: GENESIS_HASH,
    header,
    blockHash: hash,
    commit: certify(hash, 7, signers),
    validators: signers.map((k) => ({ pub_key: toHex(k.publicKey), power: 1 })),
    chunks: chunks.map((c) => c.info)
  })
  return { manifest, chunks }
}

function readAll (manifest: SnapshotManifest, texts: string[]): Array<[string, StateValue]> {
  const out: Array<[string, StateValue]> = []
  for (const [i, text] of texts.entries()) out.push(...verifyChunk(manifest, i, Buffer.from(text), out.at(-1)?.[0]))
  return out
}

describe('snapshot chunks', () => {
  test('chunks of about the target size hold every entry once, in order, and their lanes add up to the state hash', () => {
    const { manifest, chunks } = snapshot()
    assert.ok(chunks.length > 3, `${chunks.length} chunks`)
    for (const c of chunks.slice(0, -1)) assert.ok(c.info.bytes >= 1000 && c.info.bytes < 1000 + 100)
    verifyManifest(manifest, GENESIS, GENESIS_HASH)
    assert.deepEqual(readAll(manifest, chunks.map((c) => c.text)), STATE)
    assert.equal(manifest.entries, STATE.length)
  })

  test('a chunk with a changed value, a missing entry, an extra entry or a different length is refused', () => {
    const { manifest, chunks } = snapshot()
    const text = chunks[1].text
    const changed = text.replace(/,(\d)/, (_, d: string) => `,${(Number(d) + 1) % 10}`)
    assert.equal(changed.length, text.length)
    assertKithError(() => verifyChunk(manifest, 1, Buffer.from(changed), undefined), 'SNAPSHOT_INVALID', 'does not match its lanes')
    const lines = text.split('\n').slice(0, -1)
    assertKithError(() => verifyChunk(manifest, 1, Buffer.from(lines.slice(1).join('\n') + '\n'), undefined), 'SNAPSHOT_INVALID', 'bytes, the manifest says')
    assertKithError(() => verifyChunk(manifest, 1, Buffer.from(text.slice(0, -2) + '}\n'), undefined), 'SNAPSHOT_INVALID', 'not JSON')
    assertKithError(() => verifyChunk(manifest, 1, Buffer.from(text.slice(0, -1) + ' '), undefined), 'SNAPSHOT_INVALID', 'complete entry')
    assertKithError(() => verifyChunk(manifest, 99, Buffer.from(text), undefined), 'SNAPSHOT_INVALID', 'no chunk 99')
  })

  test('a line that is not canonical, not an entry, nested past the stack, or out of key order is refused even when its lanes would match', () => {
    const entries: Array<[string, StateValue]> = [['a', { y: 1, x: 2 }], ['b', 2]]
    const { manifest } = snapshot({ entries })
    const spaced = '["a", {"x":2,"y":1}]\n' + entryLine('b', 2)
    const info = { ...manifest.chunks[0], bytes: Buffer.byteLength(spaced) }
    assertKithError(() => verifyChunk({ ...manifest, chunks: [info] }, 0, Buffer.from(spaced), undefined), 'SNAPSHOT_INVALID', 'not a canonical')
    const swapped = entryLine('b', 2) + entryLine('a', { y: 1, x: 2 })
    assertKithError(() => verifyChunk(manifest, 0, Buffer.from(swapped), undefined), 'SNAPSHOT_INVALID', 'keys must increase strictly')
    // the same key in two chunks: the second chunk starts at or below the last key of the first
    assertKithError(() => verifyChunk(manifest, 0, Buffer.from(entryLine('a', { x: 2, y: 1 }) + entryLine('b', 2)), 'a'), 'SNAPSHOT_INVALID', 'keys must increase strictly')
    const deep = `["a",${'['.repeat(200_000)}${']'.repeat(200_000)}]\n`
    const deepInfo = { ...manifest.chunks[0], bytes: Buffer.byteLength(deep), entries: 1 }
    assertKithError(() => verifyChunk({ ...manifest, chunks: [deepInfo] }, 0, Buffer.from(deep), undefined), 'SNAPSHOT_INVALID', 'nests too deep')
    const notEntry = '{"a":1}\n' + entryLine('b', 2)
    const notEntryInfo = { ...manifest.chunks[0], bytes: Buffer.byteLength(notEntry) }
    assertKithError(() => verifyChunk({ ...manifest, chunks: [notEntryInfo] }, 0, Buffer.from(notEntry), undefined), 'SNAPSHOT_INVALID', 'not a canonical')
  })
})

describe('snapshot manifests', () => {
  test('a manifest of another chain, with a forged header, or with lanes that do not add up is refused', () => {
    const { manifest } = snapshot()
    assertKithError(() => verifyManifest({ ...manifest, chain_id: 'other' }, GENESIS, GENESIS_HASH), 'SNAPSHOT_INVALID', 'of chain other')
    assertKithError(() => verifyManifest({ ...manifest, genesis_hash: 'ee'.repeat(32) }, GENESIS, GENESIS_HASH), 'SNAPSHOT_INVALID', 'genesis')
    assertKithError(() => verifyManifest({ ...manifest, header: { ...manifest.header, state_hash: 'ff'.repeat(32) } }, GENESIS, GENESIS_HASH), 'SNAPSHOT_INVALID', 'does not hash')
    const lanes = Buffer.from(manifest.chunks[0].lanes, 'base64')
    lanes[5] ^= 0x10
    const forged = { ...manifest, chunks: [{ ...manifest.chunks[0], lanes: lanes.toString('base64') }, ...manifest.chunks.slice(1)] }
    assertKithError(() => verifyManifest(forged, GENESIS, GENESIS_HASH), 'SNAPSHOT_INVALID', 'do not add up to the state hash')
    assertKithError(() => verifyManifest({ ...manifest, entries: manifest.entries + 1 }, GENESIS, GENESIS_HASH), 'SNAPSHOT_INVALID', 'entry counts')
    const { header, ...rest } = manifest
    const noStateHash = { ...header, state_hash: undefined }
    delete noStateHash.state_hash
    assertKithError(() => verifyManifest({ ...rest, header: noStateHash, block_hash: blockHash(noStateHash) }, GENESIS, GENESIS_HASH), 'SNAPSHOT_INVALID', 'carries no state hash')
  })

  test('a certificate for another block, or below two thirds of the named validators, is refused', () => {
    const { manifest } = snapshot()
    assertKithError(() => verifyManifest({ ...manifest, commit: { ...manifest.commit, height: 8 } }, GENESIS, GENESIS_HASH), 'SNAPSHOT_INVALID', 'another block')
    const two = snapshot({ signers: [validatorKey, bobKey, carolKey] })
    const short = { ...two.manifest, commit: { ...two.manifest.commit, signatures: two.manifest.commit.signatures.slice(0, 2) } }
    assertKithError(() => verifyManifest(short, GENESIS, GENESIS_HASH), 'SNAPSHOT_INVALID', 'more than two thirds')
  })

  test('validators the genesis does not know are trusted only through a block hash the operator names', () => {
    const strangers = [seeded(0x71), seeded(0x72)]
    const { manifest } = snapshot({ signers: strangers })
    assertKithError(() => verifyManifest(manifest, GENESIS, GENESIS_HASH), 'SNAPSHOT_INVALID', 'no third of the genesis validators')
    verifyManifest(manifest, GENESIS, GENESIS_HASH, { trustHash: manifest.block_hash })
    assertKithError(() => verifyManifest(manifest, GENESIS, GENESIS_HASH, { trustHash: '00'.repeat(32) }), 'SNAPSHOT_INVALID', 'not the trusted')
    // a set that changed but still holds the genesis validator: its signature carries the trust
    verifyManifest(snapshot({ signers: [validatorKey, ...strangers] }).manifest, GENESIS, GENESIS_HASH)
  })
})
