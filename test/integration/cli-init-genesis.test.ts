/**
 * `kith init --genesis FILE`: a home for joining an existing network takes that network's genesis
 * (the compose joiner, docker/compose.yml node4, starts this way); a bad file is refused by name.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { KITH_BIN, REPO_ROOT } from '../helpers/node-process.js'

const run = promisify(execFile)

test('init --genesis writes new keys beside the given genesis; a file that is no genesis is refused', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kith-init-genesis-'))
  try {
    await run(KITH_BIN, ['init', '--home', join(dir, 'origin'), '--chain-id', 'joined-net'], { cwd: REPO_ROOT })
    const genesis = await readFile(join(dir, 'origin', 'genesis.json'), 'utf8')
    const { stdout } = await run(KITH_BIN, ['init', '--home', join(dir, 'joiner'), '--genesis', join(dir, 'origin', 'genesis.json')], { cwd: REPO_ROOT })
    assert.equal(await readFile(join(dir, 'joiner', 'genesis.json'), 'utf8'), genesis, 'the same genesis, byte for byte')
    const printed = JSON.parse(stdout) as { chain_id: string, validator_key: string }
    assert.equal(printed.chain_id, 'joined-net')
    const origin = JSON.parse(await readFile(join(dir, 'origin', 'validator_key.json'), 'utf8')) as { pub_key: string }
    assert.notEqual(printed.validator_key, origin.pub_key, 'keys of its own')

    await writeFile(join(dir, 'bad.json'), JSON.stringify({ chain_id: 'x' }))
    await assert.rejects(run(KITH_BIN, ['init', '--home', join(dir, 'bad'), '--genesis', join(dir, 'bad.json')], { cwd: REPO_ROOT }),
      (err: { stderr: string }) => err.stderr.includes('bad.json'))
    await writeFile(join(dir, 'garbage.json'), 'not json at all')
    await assert.rejects(run(KITH_BIN, ['init', '--home', join(dir, 'garbage'), '--genesis', join(dir, 'garbage.json')], { cwd: REPO_ROOT }),
      (err: { stderr: string }) => err.stderr.includes('garbage.json is not JSON'))
    await assert.rejects(run(KITH_BIN, ['init', '--home', join(dir, 'both'), '--genesis', join(dir, 'origin', 'genesis.json'), '--alloc', `${origin.pub_key}=5`], { cwd: REPO_ROOT }),
      (err: { stderr: string }) => err.stderr.includes('--alloc'))
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
