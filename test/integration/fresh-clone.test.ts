/**
 * A newcomer's first minutes on a fresh clone: `git clone` of this commit into a temporary
 * folder, the build `npm install` runs (`npm run build`; node_modules is linked from this checkout
 * rather than fetched, so the test needs no registry), `npm start`, then the README's examples
 * with their defaults (the dev account in the clone's `.kith`), from outside the clone. Nothing
 * of this may leave the clone's `git status` unclean: `.kith`, `dist` and `net` are ignored.
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { REPO_ROOT, childEnv, pickBasePort, waitFor } from '../helpers/node-process.js'

const execFileP = promisify(execFile)

let dir: string | undefined
let started: ChildProcess | undefined

after(async () => {
  // npm start runs npm, a shell and the node in one process group: end them all
  if (started?.pid !== undefined) {
    try {
      process.kill(-started.pid, 'SIGKILL')
    } catch {
      // the group is gone already
    }
  }
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

test('fresh clone: build, npm start, the README\'s dev-network and client examples with their defaults, a clean git status', { timeout: 300_000 }, async () => {
  dir = await mkdtemp(join(tmpdir(), 'kith-clone-'))
  const clone = join(dir, 'kith')
  const head = (await execFileP('git', ['rev-parse', 'HEAD'], { cwd: REPO_ROOT })).stdout.trim()
  await execFileP('git', ['clone', '--quiet', '--shared', '--no-checkout', REPO_ROOT, clone])
  await execFileP('git', ['checkout', '--quiet', head], { cwd: clone })
  await symlink(join(REPO_ROOT, 'node_modules'), join(clone, 'node_modules'))
  const env = childEnv({ KITH_KEYSTORE: join(dir, 'keys'), KITH_PASSPHRASE: 'a long passphrase' })
  await execFileP('npm', ['run', 'build'], { cwd: clone, env, timeout: 240_000 })

  const port = await pickBasePort(1)
  const url = `http://127.0.0.1:${port}`
  started = spawn('npm', ['start', '--', '--http-addr', `127.0.0.1:${port}`, '--p2p-listen', '/ip4/127.0.0.1/tcp/0'], { cwd: clone, env, detached: true, stdio: 'ignore' })
  await waitFor(async () => (await fetch(`${url}/api/well-known-version`)).status === 200, 90_000, { message: 'npm start in the clone never answered' })

  // run from the temporary folder, not the clone: the examples find .kith next to themselves
  const exampleEnv = { ...env, KITH_NODE: url }
  const netstats = (await execFileP(join(clone, 'examples', 'dev-network.sh'), [], { cwd: dir, env: exampleEnv })).stdout
  assert.match(netstats, /"chain_id":"kith-dev"/)
  assert.match(netstats, /"balance_ut":1000000000000/)
  const transfer = (await execFileP('node', [join(clone, 'examples', 'transfer.mjs')], { cwd: dir, env: exampleEnv, timeout: 60_000 })).stdout
  assert.match(transfer, /status: 'confirmed'/)

  const status = (await execFileP('git', ['status', '--porcelain', '--ignored=no'], { cwd: clone })).stdout
  // node_modules is this test's link, not something a user's clone would show
  assert.deepEqual(status.split('\n').filter((line) => line !== '' && line !== '?? node_modules'), [])
})
