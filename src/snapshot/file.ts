/**
 * Snapshot files, for backups (`kith snapshot export` and `import`): the manifest as one line of
 * JSON, then every chunk's entries, one canonical `[key, value]` line each, in key order. A
 * chunk is the run of lines whose length the manifest gives, so a reader checks each chunk as
 * it reads it, and never holds more than one.
 */
import { createWriteStream, existsSync } from 'node:fs'
import { mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises'
import { once } from 'node:events'
import { join } from 'node:path'
import { StateKeys, genesisHash, validatorSetAt, type Genesis, type StateHash, type StateValue, type ValidatorSetState } from '../chain/index.js'
import { KithError } from '../errors/index.js'
import { ChainStore, StoreSnapshotReader } from '../storage/index.js'
import { parseOrThrow } from '../validation/index.js'
import {
  CHUNK_TARGET_BYTES, MAX_MANIFEST_BYTES, SnapshotManifestSchema, buildManifest, chunkInfos, entryLine, sumOfChunks, verifyChunk, verifyManifest, type SnapshotManifest,
  type TrustOptions
} from './format.js'

/** Where an import builds the store before moving it into place (removed by the next import if a crash left it). */
const STAGING_DIR = '.snapshot-import'

export interface SnapshotSummary {
  file: string
  height: number
  block_hash: string
  state_hash: string
  entries: number
  chunks: number
  bytes: number
}

function summary (file: string, manifest: SnapshotManifest, bytes: number): SnapshotSummary {
  return {
    file,
    height: manifest.height,
    block_hash: manifest.block_hash,
    state_hash: manifest.header.state_hash ?? '',
    entries: manifest.entries,
    chunks: manifest.chunks.length,
    bytes
  }
}

/**
 * Writes a snapshot of the store in `dataDir` at its head to `file` (through a temporary file
 * renamed at the end). Reads one consistent view, so the node may keep running.
 */
export async function exportSnapshot (dataDir: string, file: string): Promise<SnapshotSummary> {
  const reader = StoreSnapshotReader.open(dataDir)
  try {
    return await writeSnapshot(reader, file)
  } finally {
    await reader.close()
  }
}

/** Writes the view `reader` holds (its head and every state entry) to `file`, through `file.partial`. */
export async function writeSnapshot (reader: StoreSnapshotReader, file: string, chunkBytes = CHUNK_TARGET_BYTES): Promise<SnapshotSummary> {
  const head = reader.head()
  const stored = reader.header(head.height)
  if (head.height === 0 || stored === undefined || stored.commit === null) throw new Error('the chain has no committed block yet: nothing to snapshot')
  const { header } = stored.block
  if (header.state_hash === undefined) {
    throw new Error(`block ${head.height} carries no state hash in its header (its genesis has no params.state_hash_height): a snapshot of it could not be checked`)
  }
  // first pass: the chunks' sizes and lanes, which the manifest at the front of the file needs
  const chunks = chunkInfos(reader.entries(), chunkBytes)
  const valset = reader.get(StateKeys.valset) as unknown as ValidatorSetState
  const manifest = buildManifest({
    chainId: reader.chainId(),
    genesisHash: reader.genesisHash(),
    header,
    blockHash: stored.hash,
    commit: stored.commit,
    validators: validatorSetAt(valset, head.height),
    chunks
  })
  if (sumOfChunks(chunks).digest() !== header.state_hash) throw new Error(`the store's state does not hash to the state hash in block ${head.height}'s header: the store is damaged`)
  // second pass: the same entries in the same order, as text
  const tmp = `${file}.partial`
  const out = createWriteStream(tmp)
  const write = async (text: string): Promise<void> => { if (!out.write(text)) await once(out, 'drain') }
  await write(`${JSON.stringify(manifest)}\n`)
  for (const [key, value] of reader.entries()) await write(entryLine(key, value))
  out.end()
  await once(out, 'finish')
  const handle = await open(tmp, 'r+')
  const size = (await handle.stat()).size
  await handle.sync()
  await handle.close()
  await rename(tmp, file)
  return summary(file, manifest, size)
}

/** Reads the manifest line at the front of a snapshot file; returns it and where the chunks start. */
export async function readManifest (handle: FileHandle): Promise<{ manifest: SnapshotManifest, start: number, line: Buffer }> {
  const parts: Buffer[] = []
  let read = 0
  for (;;) {
    const buffer = Buffer.alloc(Math.min(1024 * 1024, MAX_MANIFEST_BYTES - read))
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, read)
    if (bytesRead === 0) throw new KithError('SNAPSHOT_INVALID', 'the file ends before its manifest does: not a kith snapshot')
    const newline = buffer.subarray(0, bytesRead).indexOf(0x0a)
    if (newline >= 0) {
      parts.push(buffer.subarray(0, newline))
      read += newline + 1
      break
    }
    parts.push(buffer.subarray(0, bytesRead))
    read += bytesRead
    if (read >= MAX_MANIFEST_BYTES) throw new KithError('SNAPSHOT_INVALID', `no manifest line in the first ${MAX_MANIFEST_BYTES} bytes: not a kith snapshot`)
  }
  const line = Buffer.concat(parts)
  let json: unknown
  try {
    json = JSON.parse(line.toString('utf8'))
  } catch {
    throw new KithError('SNAPSHOT_INVALID', 'the first line is not JSON: not a kith snapshot')
  }
  return { manifest: parseOrThrow(SnapshotManifestSchema, json, 'SNAPSHOT_INVALID', 'the snapshot manifest'), start: read, line }
}

/**
 * Restores a snapshot file into the home whose data directory is `dataDir` (which must hold no
 * chain store yet). Everything is checked before the store is moved into place: the manifest
 * against the genesis and the trusted validators, each chunk against its lanes, and the
 * validator set in the state against the one the manifest names.
 */
export async function importSnapshot (file: string, dataDir: string, genesis: Genesis, trust: TrustOptions = {}): Promise<SnapshotSummary> {
  if (existsSync(join(dataDir, 'data.mdb'))) throw new Error(`${dataDir} already holds a chain store: import into a new home (kith init --home NEW --genesis genesis.json)`)
  const handle = await open(file, 'r')
  try {
    const { manifest, start } = await readManifest(handle)
    const stateHash = verifyManifest(manifest, genesis, genesisHash(genesis), trust)
    const size = (await handle.stat()).size
    const expected = start + manifest.chunks.reduce((n, c) => n + c.bytes, 0)
    if (size !== expected) throw new KithError('SNAPSHOT_INVALID', `the file is ${size} bytes, its manifest accounts for ${expected}`)
    await restoreStore(dataDir, manifest, stateHash, chunksOf(handle, manifest, start))
    return summary(file, manifest, size)
  } finally {
    await handle.close()
  }
}

/**
 * Builds a store from a verified manifest's chunks (in order, each already checked against its
 * lanes) aside in `dataDir`/.snapshot-import, checks the validator set in the state against the
 * manifest's, and only then moves it into place: a crash at any step leaves no store, and the
 * next attempt starts over.
 */
export async function restoreStore (dataDir: string, manifest: SnapshotManifest, stateHash: StateHash, chunks: AsyncIterable<Array<[string, StateValue]>>): Promise<void> {
  if (existsSync(join(dataDir, 'data.mdb'))) throw new Error(`${dataDir} already holds a chain store`)
  const staging = join(dataDir, STAGING_DIR)
  try {
    await rm(staging, { recursive: true, force: true })
    await mkdir(staging, { recursive: true })
    const store = ChainStore.open(staging)
    let valset: ValidatorSetState | undefined
    let lastKey: string | undefined
    async function * checked (): AsyncGenerator<Array<[string, StateValue]>> {
      for await (const entries of chunks) {
        // each chunk's keys increase; across chunks too, so no entry is given twice
        const first = entries[0]?.[0]
        if (first !== undefined && lastKey !== undefined && first <= lastKey) throw new KithError('SNAPSHOT_INVALID', `keys must increase strictly across chunks (${first} after ${lastKey})`)
        lastKey = entries.at(-1)?.[0] ?? lastKey
        for (const [key, value] of entries) if (key === StateKeys.valset) valset = value as unknown as ValidatorSetState
        yield entries
      }
    }
    try {
      await store.restoreSnapshot(checked(), {
        chainId: manifest.chain_id,
        genesisHash: manifest.genesis_hash,
        header: manifest.header,
        hash: manifest.block_hash,
        commit: manifest.commit,
        stateHash
      })
    } finally {
      await store.close()
    }
    if (valset === undefined || !sameValidators(validatorSetAt(valset, manifest.height), manifest.validators)) {
      throw new KithError('SNAPSHOT_INVALID', 'the validator set in the state is not the one the manifest names')
    }
    await rename(join(staging, 'data.mdb'), join(dataDir, 'data.mdb'))
    await syncDir(dataDir)
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}

/** The chunks of a verified manifest, read and checked one at a time. */
async function * chunksOf (handle: FileHandle, manifest: SnapshotManifest, start: number): AsyncGenerator<Array<[string, StateValue]>> {
  let offset = start
  for (const [index, info] of manifest.chunks.entries()) {
    const bytes = Buffer.alloc(info.bytes)
    const { bytesRead } = await handle.read(bytes, 0, info.bytes, offset)
    if (bytesRead !== info.bytes) throw new KithError('SNAPSHOT_INVALID', `the file ends inside chunk ${index}`)
    offset += info.bytes
    // keys increasing across chunks: restoreStore checks that, for files and peers alike
    yield verifyChunk(manifest, index, bytes, undefined)
  }
}

function sameValidators (a: ReadonlyArray<{ pub_key: string, power: number }>, b: ReadonlyArray<{ pub_key: string, power: number }>): boolean {
  const key = (set: ReadonlyArray<{ pub_key: string, power: number }>): string => set.map((v) => `${v.pub_key}:${v.power}`).sort().join(',')
  return key(a) === key(b)
}

/** A rename is durable once its directory is synced. */
async function syncDir (dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
