/** `bin/kith start` flags through a real process. */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { KITH_BIN, REPO_ROOT, childEnv, kithInit, startNode, stopAllNodes } from '../helpers/node-process.js'

const execFileP = promisify(execFile)

async function kithFails (args: string[]): Promise<string> {
  try {
    await execFileP(KITH_BIN, args, { env: childEnv({}), cwd: REPO_ROOT, timeout: 60_000 })
  } catch (err) {
    const e = err as { code?: number, stderr?: string }
    assert.equal(e.code, 1)
    return e.stderr ?? ''
  }
  throw new Error(`kith ${args.join(' ')} succeeded`)
}

describe('kith start', () => {
  test('an unknown command with --help is an error (exit 1) naming the command, not the main help with exit 0', async () => {
    assert.match(await kithFails(['nosuch', '--help']), /unknown command 'nosuch'/)
    assert.match(await kithFails(['nosuch']), /unknown command 'nosuch'/)
  })

  after(stopAllNodes)

  test('--stats-addr, the HTTP listener\'s old name, still sets the listener and warns that it is deprecated', async () => {
    const node = await startNode({ args: ['--stats-addr', '127.0.0.1:0'] })
    const res = await fetch(`${node.url}/api/netstats`)
    assert.equal(res.status, 200)
    assert.ok(node.rawOutput.some((line) => line.includes('"stats_addr" (--stats-addr) is deprecated; use "http_addr" (--http-addr)')), node.tail())
  })

  test('--alloc that cannot take effect (an existing home, or no --dev) exits 1 and says how to fund a key instead', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kith-start-'))
    try {
      const home = join(dir, 'home')
      await kithInit(home, {})
      const alloc = `${'ab'.repeat(32)}=1000`
      const existing = await kithFails(['start', '--home', home, '--dev', '--alloc', alloc])
      assert.match(existing, /--alloc only applies when --dev creates a new home, and .* already has a genesis/)
      assert.match(existing, /bin\/kith keys import .*dev_account\.json --name dev/)
      assert.match(await kithFails(['start', '--home', home, '--alloc', alloc]), /start takes --alloc only with --dev/)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
  test('kith testnet without --alloc warns that nobody can pay a fee and says how to fund a key; with one it does not', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kith-testnet-warn-'))
    try {
      const unfunded = await execFileP(KITH_BIN, ['testnet', '--validators', '1', '--output', join(dir, 'unfunded')], { env: childEnv({}), cwd: REPO_ROOT, timeout: 60_000 })
      assert.match(unfunded.stderr, /warning: no --alloc, so nobody holds a token on this chain and nobody can send a transaction/)
      assert.match(unfunded.stderr, /bin\/kith keys new --name alice, then bin\/kith testnet --validators 1 --output .*unfunded --alloc <alice's pubkey>=1000000000/)
      assert.equal((JSON.parse(unfunded.stdout) as { nodes: unknown[] }).nodes.length, 1, 'stdout stays the JSON of the nodes')
      const funded = await execFileP(KITH_BIN, ['testnet', '--validators', '1', '--output', join(dir, 'funded'), '--alloc', `${'ab'.repeat(32)}=1000`], { env: childEnv({}), cwd: REPO_ROOT, timeout: 60_000 })
      assert.equal(funded.stderr, '')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
