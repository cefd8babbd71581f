/**
 * Crash points on the commit path of a 4-validator network: one validator is killed (SIGKILL
 * from inside, `KITH_CRASH_AT`) right after a vote is persisted but before it is sent, after a
 * block is decided but before it is written, after a block is written but before the next
 * height, and after a synced block is written. Restarted each time, it must converge: every
 * node holds the same block at every height, and nobody saw it sign two different votes.
 * (lmdb writes each block in one copy-on-write transaction, so "between block and state" and a
 * torn final write cannot happen: a commit is whole or absent; see docs/architecture.md.)
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { newAccount, transfer, type Account } from '../../src/client/index.js'
import { KITH_BIN, pickBasePort, REPO_ROOT, startNode, stopAllNodes, waitFor, type NodeProcess } from '../helpers/node-process.js'

const run = promisify(execFile)
const BLOCK_MS = 150
const POINTS = ['after-persist', 'before-commit', 'after-commit', 'after-sync-commit'] as const

async function height (node: NodeProcess): Promise<number> {
  return (await node.client.netstats()).height
}

describe('crash points on the commit path', { timeout: 240_000 }, () => {
  let dir: string
  let nodes: NodeProcess[]
  let rich: Account

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kith-crash-points-'))
    rich = newAccount()
    const basePort = await pickBasePort(4)
    await run(KITH_BIN, ['testnet', '--validators', '4', '--output', join(dir, 'net'), '--base-port', String(basePort), '--alloc', `${rich.pub}=1000000000000`], {
      cwd: REPO_ROOT, env: { ...process.env, PATH: `${join(REPO_ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}` }
    })
    nodes = await Promise.all([0, 1, 2, 3].map(async (i) => await startNode({ home: join(dir, 'net', `node${i}`), blockIntervalMs: BLOCK_MS })))
    await waitFor(async () => (await Promise.all(nodes.map(height))).every((h) => h >= 2), 30_000)
  })

  after(async () => {
    await stopAllNodes()
    await rm(dir, { recursive: true, force: true })
  })

  test('a validator killed at each point restarts and converges with no double sign', async () => {
    const home = join(dir, 'net', 'node3')
    for (const point of POINTS) {
      await nodes[3].kill9()
      // let the others move ahead, so the restart has blocks to sync (after-sync-commit needs them)
      const ahead = (await height(nodes[0])) + 3
      await waitFor(async () => (await height(nodes[0])) >= ahead, 20_000)
      const crashing = await startNode({ home, blockIntervalMs: BLOCK_MS, env: { KITH_CRASH_AT: `${point}:2` }, mayExitBeforeReady: true })
      await nodes[0].client.submit(transfer(rich, newAccount().pub, 1234))
      const exit = await Promise.race([crashing.whenExited(), new Promise<'alive'>((resolve) => setTimeout(() => resolve('alive'), 20_000))])
      assert.notEqual(exit, 'alive', `the node never reached ${point}`)
      assert.equal(exit === 'alive' ? null : exit.signal, 'SIGKILL', `crash at ${point} is a SIGKILL`)
      nodes[3] = await startNode({ home, blockIntervalMs: BLOCK_MS })
      const target = await height(nodes[0])
      await waitFor(async () => (await height(nodes[3])) >= target, 20_000, { message: `no catch-up after a crash at ${point}` })
    }
    // the same block at every height on every node
    const top = Math.min(...await Promise.all(nodes.map(height)))
    for (let h = 1; h <= top; h++) {
      const hashes = await Promise.all(nodes.map(async (n) => (await n.client.request<{ hash: string }>('GET', `/api/blocks/${h}`)).hash))
      assert.equal(new Set(hashes).size, 1, `nodes disagree at height ${h}`)
    }
    for (const n of nodes) {
      assert.ok(!n.logs.some((l) => typeof l.msg === 'string' && l.msg.includes('equivocated')), 'a validator was seen signing two different votes')
    }
  })
})
