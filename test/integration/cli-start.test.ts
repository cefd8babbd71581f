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
})
