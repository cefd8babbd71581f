/** `bin/kith start` flags through a real process. */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { KITH_BIN, REPO_ROOT, childEnv, kithInit, startNode, stopAllNodes } from '../helpers/node-process.js'

const execFileP = promisify(execFile)
/** a home made by `init` listens on libp2p's 4001, which another test's node may hold */
const ANY_P2P_PORT = ['--p2p-listen', '/ip4/127.0.0.1/tcp/0']

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

  test('SIGTERM during start-up stops what has started and exits 0, as after it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kith-early-stop-'))
    try {
      const home = join(dir, 'home')
      await kithInit(home, {})
      const child = spawn(KITH_BIN, ['start', '--home', home, '--http-addr', '127.0.0.1:0', ...ANY_P2P_PORT], { env: childEnv({}), cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
      let out = ''
      const exited = new Promise<{ code: number | null, signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
      // the first line the node logs, before the store opens: the signal lands in the middle of start-up
      await new Promise<void>((resolve) => child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString()
        if (out.includes('"resource caps"')) resolve()
      }))
      child.kill('SIGTERM')
      assert.deepEqual(await exited, { code: 0, signal: null }, out)
      assert.match(out, /"msg":"stopped"/)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  describe('configuration layers: defaults < config.json < environment < flags', () => {
    let dir: string
    let home: string
    const setFile = async (extra: Record<string, unknown>): Promise<void> => {
      const file = JSON.parse(await readFile(join(home, 'config.json'), 'utf8')) as Record<string, unknown>
      await writeFile(join(home, 'config.json'), JSON.stringify({ ...file, ...extra }))
    }
    const swaggerStatus = async (env: Record<string, string> = {}): Promise<number> => {
      const node = await startNode({ home, env, args: ANY_P2P_PORT })
      try {
        return (await fetch(`${node.url}/swagger/openapi.json`)).status
      } finally {
        await node.stop()
      }
    }

    test('an SVC_* setting in config.json takes effect, and its variable in the environment wins over the file', async () => {
      dir = await mkdtemp(join(tmpdir(), 'kith-config-'))
      home = join(dir, 'home')
      await kithInit(home, {})
      assert.equal(await swaggerStatus(), 200)
      await setFile({ disable_swagger: true })
      assert.equal(await swaggerStatus(), 404, 'config.json disable_swagger: true')
      assert.equal(await swaggerStatus({ SVC_DISABLE_SWAGGER: 'false' }), 200, 'the environment wins')
    })

    test('`kith config` prints each setting with its value and source, secrets masked; a misspelt key warns at start', async () => {
      await setFile({ api_token: 's3cret-token', relay_read_auth: true, rate_limit_rsp: 5 })
      const { stdout } = await execFileP(KITH_BIN, ['config', '--home', home, '--json', '--block-interval-ms', '250'], {
        env: childEnv({ SVC_RATE_LIMIT_RPS: '7' }), cwd: REPO_ROOT, timeout: 60_000
      })
      assert.ok(!stdout.includes('s3cret-token'), 'the token is never printed')
      const rows = JSON.parse(stdout) as Array<{ name: string, env?: string, value: unknown, source: string }>
      const row = (name: string): { value: unknown, source: string } | undefined => rows.find((r) => r.name === name)
      assert.deepEqual(row('api_token'), { ...row('api_token'), value: '********', source: 'config.json' })
      assert.deepEqual(row('relay_read_auth'), { ...row('relay_read_auth'), value: true, source: 'config.json' })
      assert.deepEqual(row('rate_limit_rps'), { ...row('rate_limit_rps'), value: 7, source: 'environment' })
      assert.deepEqual(row('block_interval_ms'), { ...row('block_interval_ms'), value: 250, source: 'flag' })
      assert.deepEqual(row('ws_idle_ms'), { ...row('ws_idle_ms'), value: 120_000, source: 'default' })
      const text = (await execFileP(KITH_BIN, ['config', '--home', home], { env: childEnv({}), cwd: REPO_ROOT, timeout: 60_000 })).stdout
      assert.match(text, /^relay_read_auth\s+true\s+config\.json\s+SVC_RELAY_READ_AUTH$/m)

      const node = await startNode({ home, token: 's3cret-token', args: ANY_P2P_PORT })
      assert.ok(node.rawOutput.some((line) => line.includes('sets "rate_limit_rsp", which is no setting')), node.tail())
      await node.stop()
      await rm(dir, { recursive: true, force: true })
    })
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
