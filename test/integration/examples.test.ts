/**
 * Every runnable example of the README and docs/ is a file under examples/, and here each runs as
 * it is written, against a dev node started as `npm start` starts one, from a directory outside
 * the repository (so an example can neither rot nor depend on where it is run from).
 * test/unit/docs-examples.test.ts checks that the documents quote these files unchanged.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { REPO_ROOT, childEnv, pickBasePort, startDevNode, stopAllNodes, waitFor, type NodeProcess } from '../helpers/node-process.js'
import sharp from 'sharp'

const execFileP = promisify(execFile)

describe('examples/ run as written against a dev node', () => {
  let dir: string
  let node: NodeProcess
  let photo: string

  /** Runs examples/<file> (a script, or a module through node) from `dir`; fails with its output. */
  async function runExample (file: string, args: string[] = []): Promise<string> {
    const path = join(REPO_ROOT, 'examples', file)
    const [command, commandArgs] = file.endsWith('.mjs') ? ['node', [path, ...args]] : [path, args]
    const env = childEnv({ KITH_HOME: node.home, KITH_NODE: node.url, KITH_KEYSTORE: join(dir, 'keys'), KITH_PASSPHRASE: 'a long passphrase' })
    try {
      const { stdout } = await execFileP(command, commandArgs, { cwd: dir, env, timeout: 120_000 })
      return stdout
    } catch (err) {
      const e = err as { message: string, stdout?: string, stderr?: string }
      assert.fail(`examples/${file} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`)
    }
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kith-examples-'))
    photo = join(dir, 'holiday.jpg')
    await writeFile(photo, await sharp({ create: { width: 1600, height: 1200, channels: 3, background: '#3a7' } }).jpeg().toBuffer())
    node = await startDevNode()
  })

  after(async () => {
    await stopAllNodes()
    await rm(dir, { recursive: true, force: true })
  })

  test('dev-network.sh: the chain figures, then the dev account with its million T', async () => {
    const [netstats, devAccount] = (await runExample('dev-network.sh')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
    assert.equal(netstats.chain_id, 'kith-dev')
    assert.equal(devAccount.balance_ut, 1_000_000_000_000)
  })

  test('transfer.mjs: 5 T from the dev account, accepted, then confirmed in a block', async () => {
    const out = await runExample('transfer.mjs')
    assert.match(out, /status: 'accepted'/)
    assert.match(out, /status: 'confirmed'[\s\S]*amount_ut: 5000000[\s\S]*block_index: \d+/)
  })

  test('post-photo.mjs: a post with a scrubbed photo, found under its hashtag', async () => {
    const out = await runExample('post-photo.mjs', [photo])
    assert.match(out, /content: 'Back home #travel'[\s\S]*attachment_mime: 'image\/jpeg'/)
    assert.match(out, /attachment: \d+ characters of base64/)
    assert.match(out, /tag: 'travel'/)
  })

  test('first-hour.sh: a funded key, a message, a post with a photo, a like, the explorer link', async () => {
    const out = await runExample('first-hour.sh', [photo])
    assert.match(out, /imported key "dev"/)
    assert.match(out, /bob \(kith1[0-9a-z]+\): 2\.5 T \(2500000 µT\), 1 transaction$/m)
    assert.match(out, /registered @bob_smith/)
    assert.match(out, /hello bob/)
    const postId = /^open http:\/\/127\.0\.0\.1:\d+\/#\/post\/([0-9a-f]{32})$/m.exec(out)?.[1]
    assert.ok(postId !== undefined, `no explorer link in:\n${out}`)
    assert.match(out, new RegExp(`${postId}  bob  .*1 like,`))
    assert.match(out, /Back home #travel \[image\/jpeg attached\]/)
  })

  test('contracts.sh (after first-hour.sh funded alice): deploy, call, state, the registry', async () => {
    const out = await runExample('contracts.sh')
    assert.match(out, /counter\.increment succeeded in block \d+/)
    assert.match(out, /returned 1/)
    assert.match(out, /^count: 0x0100000000000000 \(u64 1\)$/m)
    assert.match(out, /^name:alice_01: "[0-9a-f]{64}"$/m)
    assert.match(out, /register alice_01 [0-9a-f]{64}/)
  })

  test('realtime-ws.mjs: authenticated, subscribed, three blocks, closed', async () => {
    const out = await runExample('realtime-ws.mjs')
    assert.match(out, /^authenticated a1\nsubscribed s1\nsubscribed s2\nsubscribed s3\n/)
    assert.equal(out.match(/^block \d+: \d+ transactions$/gm)?.length, 3)
    assert.match(out, /closed \(1000\)\n$/)
  })
})

describe('examples/local-testnet.sh', { timeout: 180_000 }, () => {
  test('writes and starts two validators, shows their peers once connected, and stops them on SIGTERM', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kith-examples-net-'))
    const basePort = await pickBasePort(2)
    const script = spawn(join(REPO_ROOT, 'examples', 'local-testnet.sh'), ['2', join(dir, 'net'), String(basePort)], { cwd: dir, env: childEnv({}) })
    let stdout = ''
    let stderr = ''
    script.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString('utf8') })
    script.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8') })
    const exited = new Promise<number | null>((resolveExit) => script.once('exit', (code) => resolveExit(code)))
    try {
      await waitFor(() => stdout.includes('Ctrl-C stops the 2 nodes'), 120_000, { message: `the testnet's peers line (stdout: ${stdout}; stderr: ${stderr})` })
      const { peers } = JSON.parse(stdout.split('\n')[0]) as { peers: Array<{ peer_id: string, height?: number }> }
      assert.equal(peers.length, 1)
      assert.match(peers[0].peer_id, /^12D3Koo/)
      assert.match(stderr, /warning: no --alloc, so nobody holds a token/)
      script.kill('SIGTERM')
      assert.equal(await exited, 0)
      // the nodes went with the script
      await waitFor(async () => await fetch(`http://127.0.0.1:${basePort}/api/netstats`).then(() => false, () => true), 20_000, { message: 'node0 still answers after the script stopped' })
    } finally {
      script.kill('SIGKILL')
      await rm(dir, { recursive: true, force: true })
    }
  })
})
