/**
 * The bounds of reading a snapshot file (src/snapshot/file.ts): what a stranger's file can make
 * the importer read or allocate before anything is trusted, and that a refusal writes nothing.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { GenesisSchema } from '../../../src/chain/index.js'
import { MAX_CHUNK_BYTES, MAX_MANIFEST_BYTES, importSnapshot } from '../../../src/snapshot/index.js'
import { VALIDATOR } from '../../helpers/fixtures.js'
import { withTempDir } from '../relay/helpers.js'

const GENESIS = GenesisSchema.parse({ chain_id: 'kith-file', genesis_time: '2026-01-02T03:04:05Z', params: { state_hash_height: 1 }, validators: [{ pub_key: VALIDATOR, power: 1 }] })

async function refused (content: Buffer | string, message: RegExp): Promise<void> {
  await withTempDir(async (dir) => {
    const file = join(dir, 'hostile.snapshot')
    const data = join(dir, 'data')
    await mkdir(data)
    await writeFile(file, content)
    await assert.rejects(importSnapshot(file, data, GENESIS), (err: Error) => { assert.match(err.message, message); return true })
    assert.ok(!existsSync(join(data, 'data.mdb')) && !existsSync(join(data, '.snapshot-import')), 'nothing written')
  })
}

test('a file whose first line never ends is read no further than the manifest bound', async () => {
  await refused(Buffer.alloc(MAX_MANIFEST_BYTES + 10, 0x20), new RegExp(`no manifest line in the first ${MAX_MANIFEST_BYTES} bytes`))
})

test('a manifest that names a chunk over the bound, one of another shape, and an empty file are refused before any chunk is read', async () => {
  const manifest = { format: 'kith-snapshot-1', chain_id: 'kith-file', genesis_hash: 'ab'.repeat(32), height: 1, block_hash: 'cd'.repeat(32), entries: 1, validators: [], chunks: [] }
  await refused(JSON.stringify({ ...manifest, chunks: [{ entries: 1, bytes: MAX_CHUNK_BYTES + 1, lanes: 'A'.repeat(2732) }] }) + '\n', /snapshot manifest/)
  await refused('[1,2,3]\n', /snapshot manifest/)
  await refused('', /ends before its manifest/)
})
