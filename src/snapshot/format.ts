/**
 * A state snapshot: every state entry at one height, in chunks, with a manifest that says how to
 * check them (docs/protocol.md § 5.5). Pure: building chunks, and checking a manifest and each
 * chunk against it. A chunk is checked on its own, as it arrives, because the state hash is a sum:
 * the manifest lists each chunk's lanes, the lanes add up to the state hash in the header of the
 * snapshot's block, and a quorum of validators signed that header.
 */
import { z } from 'zod'
import {
  BlockHeaderSchema, CommitSchema, HashSchema, PubkeySchema, StateHash, STATE_HASH_BYTES, blockHash, canonicalJson, type BlockHeader, type Commit, type Genesis,
  type StateValue
} from '../chain/index.js'
import { signedPower, totalPower, verifyCommit, type Validator } from '../consensus/index.js'
import { KithError } from '../errors/index.js'

export const SNAPSHOT_FORMAT = 'kith-snapshot-1'
/** A chunk is closed once it holds this much; one entry may take it past (entries are not split). */
export const CHUNK_TARGET_BYTES = 4 * 1024 * 1024
/** Bounds what a reader allocates for one chunk: the target plus the largest entry the chain writes (a contract's code). */
export const MAX_CHUNK_BYTES = 2 * CHUNK_TARGET_BYTES
/** 16,384 chunks of ~4 MiB: a 64 GiB state. The manifest then holds ~45 MB of lanes. */
export const MAX_CHUNKS = 16_384
/** What a reader reads before it knows anything: the manifest line. */
export const MAX_MANIFEST_BYTES = MAX_CHUNKS * 3000 + 1024 * 1024

const Hash = HashSchema
const LANES_BASE64_CHARS = Math.ceil(STATE_HASH_BYTES / 3) * 4

export const ChunkInfoSchema = z.object({
  entries: z.number().int().min(1),
  bytes: z.number().int().min(1).max(MAX_CHUNK_BYTES),
  /** the state hash lanes of this chunk's entries alone, base64 */
  lanes: z.string().length(LANES_BASE64_CHARS)
})
export type ChunkInfo = z.output<typeof ChunkInfoSchema>

export const SnapshotManifestSchema = z.object({
  format: z.literal(SNAPSHOT_FORMAT),
  chain_id: z.string(),
  genesis_hash: Hash,
  height: z.number().int().min(1),
  block_hash: Hash,
  header: BlockHeaderSchema,
  /** the certificate that committed the block: precommits of more than two thirds of `validators` */
  commit: CommitSchema,
  /** the set that decided `height` (it is also in the state: the import checks they agree) */
  validators: z.array(z.object({ pub_key: PubkeySchema, power: z.number().int().min(1) })).min(1).max(10_000),
  entries: z.number().int().min(1),
  chunks: z.array(ChunkInfoSchema).min(1).max(MAX_CHUNKS)
})
export type SnapshotManifest = z.output<typeof SnapshotManifestSchema>

function invalid (message: string): KithError {
  return new KithError('SNAPSHOT_INVALID', message)
}

const UNTRUSTED = Symbol('untrusted')

/** A manifest that is well made and certified, but by validators this node has no reason to trust (yet). */
function untrusted (message: string): KithError {
  return Object.assign(invalid(message), { [UNTRUSTED]: true })
}

/** Whether verifyManifest refused on trust alone: the operator's trust settings, not the peer, are at issue. */
export function isTrustFailure (err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { [UNTRUSTED]?: boolean })[UNTRUSTED] === true
}

/** One state entry as a chunk holds it: a line of canonical JSON. */
export function entryLine (key: string, value: StateValue): string {
  return `${canonicalJson([key, value])}\n`
}

/** Groups state entries (in key order) into chunks of about CHUNK_TARGET_BYTES, each with its lanes. */
export class ChunkBuilder {
  private lines: string[] = []
  private bytes = 0
  private hash = StateHash.empty()

  constructor (private readonly targetBytes = CHUNK_TARGET_BYTES) {}

  /** Adds an entry; returns the chunk it closed, if any. */
  add (key: string, value: StateValue): { text: string, info: ChunkInfo } | undefined {
    const line = entryLine(key, value)
    this.lines.push(line)
    this.bytes += Buffer.byteLength(line)
    this.hash.add(key, value)
    return this.bytes >= this.targetBytes ? this.flush() : undefined
  }

  /** The last, partly filled chunk. */
  flush (): { text: string, info: ChunkInfo } | undefined {
    if (this.lines.length === 0) return undefined
    const chunk = { text: this.lines.join(''), info: { entries: this.lines.length, bytes: this.bytes, lanes: Buffer.from(this.hash.bytes()).toString('base64') } }
    this.lines = []
    this.bytes = 0
    this.hash = StateHash.empty()
    return chunk
  }
}

/** What a manifest lists for these entries (in key order): each chunk's size, count and lanes. */
export function chunkInfos (entries: Iterable<[string, StateValue]>, targetBytes = CHUNK_TARGET_BYTES): ChunkInfo[] {
  const builder = new ChunkBuilder(targetBytes)
  const infos: ChunkInfo[] = []
  for (const [key, value] of entries) {
    const closed = builder.add(key, value)
    if (closed !== undefined) infos.push(closed.info)
  }
  const last = builder.flush()
  if (last !== undefined) infos.push(last.info)
  return infos
}

export interface TrustOptions {
  /** the block hash at the snapshot's height, from a source the operator trusts: then the genesis validators need not have signed */
  trustHash?: string
}

/**
 * Checks a manifest before any chunk is read: it belongs to this chain, its header hashes to its
 * block hash and carries the state hash its chunks add up to, a quorum of its validators
 * certified the block, and the node has reason to trust those validators: more than a third of
 * the genesis validators' power signed too (or the operator named the block hash). Returns the
 * state hash the chunks add up to.
 */
export function verifyManifest (manifest: SnapshotManifest, genesis: Genesis, genesisHash: string, trust: TrustOptions = {}): StateHash {
  const { header, commit } = manifest
  if (manifest.chain_id !== genesis.chain_id) throw invalid(`the snapshot is of chain ${manifest.chain_id}, this node's is ${genesis.chain_id}`)
  if (manifest.genesis_hash !== genesisHash) throw invalid(`the snapshot's genesis ${manifest.genesis_hash} is not this node's ${genesisHash}`)
  if (header.chain_id !== genesis.chain_id || header.height !== manifest.height) throw invalid('the header is not of the snapshot\'s chain and height')
  if (blockHash(header) !== manifest.block_hash) throw invalid('the header does not hash to the block hash')
  if (header.state_hash === undefined) {
    throw invalid(`block ${manifest.height} carries no state hash (genesis params.state_hash_height ${String(genesis.params.state_hash_height ?? 'unset')}): its state cannot be checked`)
  }
  if (commit.height !== manifest.height || commit.block_hash !== manifest.block_hash) throw invalid('the certificate is for another block')
  const validators: Validator[] = manifest.validators
  if (!verifyCommit(genesis.chain_id, commit, validators)) throw invalid('the certificate is not signed by more than two thirds of the snapshot\'s validators')
  if (trust.trustHash !== undefined) {
    if (trust.trustHash !== manifest.block_hash) throw untrusted(`block ${manifest.height} is ${manifest.block_hash}, not the trusted ${trust.trustHash}`)
  } else {
    const anchor = genesis.validators.map((v) => ({ pub_key: v.pub_key, power: v.power }))
    if (signedPower(genesis.chain_id, commit, anchor) * 3 <= totalPower(anchor)) {
      throw untrusted('no third of the genesis validators signed this block: the validator set changed since genesis, so name the block hash to trust (--trust-hash)')
    }
  }
  const total = sumOfChunks(manifest.chunks)
  if (total.digest() !== header.state_hash) throw invalid('the chunks\' lanes do not add up to the state hash in the header')
  if (manifest.chunks.reduce((n, c) => n + c.entries, 0) !== manifest.entries) throw invalid('the chunks\' entry counts do not add up to the total')
  return total
}

/** The state hash of the whole snapshot: its chunks' lanes added up. */
export function sumOfChunks (chunks: readonly ChunkInfo[]): StateHash {
  return chunks.reduce((sum, chunk) => sum.combine(lanesOf(chunk)), StateHash.empty())
}

function lanesOf (chunk: ChunkInfo): StateHash {
  const bytes = Buffer.from(chunk.lanes, 'base64')
  if (bytes.length !== STATE_HASH_BYTES) throw invalid(`a chunk's lanes are ${bytes.length} bytes, not ${STATE_HASH_BYTES}`)
  return StateHash.fromBytes(bytes)
}

/**
 * Checks chunk `index` (its bytes as read) against a verified manifest, and returns its entries.
 * `after` is the last key of the chunk before: keys increase strictly across the whole snapshot,
 * so no entry is given twice.
 */
export function verifyChunk (manifest: SnapshotManifest, index: number, bytes: Buffer, after: string | undefined): Array<[string, StateValue]> {
  const info = manifest.chunks[index]
  if (info === undefined) throw invalid(`the snapshot has no chunk ${index}`)
  if (bytes.length !== info.bytes) throw invalid(`chunk ${index} is ${bytes.length} bytes, the manifest says ${info.bytes}`)
  const text = bytes.toString('utf8')
  if (!text.endsWith('\n')) throw invalid(`chunk ${index} does not end with a complete entry`)
  const lines = text.slice(0, -1).split('\n')
  if (lines.length !== info.entries) throw invalid(`chunk ${index} holds ${lines.length} entries, the manifest says ${info.entries}`)
  const entries: Array<[string, StateValue]> = []
  const hash = StateHash.empty()
  let last = after
  for (const line of lines) {
    let parsed: unknown
    let canonical: string
    try {
      parsed = JSON.parse(line)
      // a value nested deeper than the stack is a RangeError here, not a crash
      canonical = canonicalJson(parsed)
    } catch {
      throw invalid(`chunk ${index} holds a line that is not JSON (or nests too deep)`)
    }
    if (!Array.isArray(parsed) || parsed.length !== 2 || typeof parsed[0] !== 'string' || canonical !== line) {
      throw invalid(`chunk ${index} holds a line that is not a canonical [key, value] entry`)
    }
    const [key, value] = parsed as [string, StateValue]
    if (last !== undefined && key <= last) throw invalid(`chunk ${index}: keys must increase strictly (${key} after ${last})`)
    last = key
    hash.add(key, value)
    entries.push([key, value])
  }
  if (!hash.equals(lanesOf(info))) throw invalid(`chunk ${index} does not match its lanes in the manifest`)
  return entries
}

/** The manifest of a snapshot, once its chunks are built. */
export function buildManifest (parts: {
  chainId: string
  genesisHash: string
  header: BlockHeader
  blockHash: string
  commit: Commit
  validators: Validator[]
  chunks: ChunkInfo[]
}): SnapshotManifest {
  return {
    format: SNAPSHOT_FORMAT,
    chain_id: parts.chainId,
    genesis_hash: parts.genesisHash,
    height: parts.header.height,
    block_hash: parts.blockHash,
    header: parts.header,
    commit: parts.commit,
    validators: parts.validators.map((v) => ({ pub_key: v.pub_key, power: v.power })),
    entries: parts.chunks.reduce((n, c) => n + c.entries, 0),
    chunks: parts.chunks
  }
}
