/**
 * The multi-validator user story with real processes on loopback: `kith testnet` writes four
 * homes, four `kith start` processes agree on one chain over libp2p, a transaction submitted to
 * any node lands in the same block everywhere, the chain survives `kill -9` of one validator,
 * a restarted validator catches up, and two of four down halts the chain until one returns.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { callContract, newAccount, transfer, type Account } from '../../src/client/index.js'
import { USERNAME_FEE_UT, USERNAME_REGISTRY_ID } from '../../src/contracts/wellknown.js'
import { KITH_BIN, pickBasePort, REPO_ROOT, startNode, stopAllNodes, waitFor, type NodeProcess } from '../helpers/node-process.js'

const run = promisify(execFile)
const BLOCK_MS = 200

async function height (node: NodeProcess): Promise<number> {
  return (await node.client.netstats()).height
}

async function confirmedEverywhere (nodes: NodeProcess[], id: string): Promise<Array<Record<string, unknown>>> {
  return await Promise.all(nodes.map(async (n) => await n.client.waitForConfirmation(id, { timeoutMs: 20_000, intervalMs: 50 })))
}

describe('a 4-validator testnet on loopback', { timeout: 180_000 }, () => {
  let dir: string
  let nodes: NodeProcess[]
  let rich: Account
  let nonce = 0

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kith-testnet-'))
    rich = newAccount()
    const basePort = await pickBasePort(4)
    await run(KITH_BIN, ['testnet', '--validators', '4', '--output', join(dir, 'net'), '--base-port', String(basePort), '--alloc', `${rich.pub}=1000000000000`], {
      cwd: REPO_ROOT, env: { ...process.env, PATH: `${join(REPO_ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}` }
    })
    nodes = await Promise.all([0, 1, 2, 3].map(async (i) => await startNode({ home: join(dir, 'net', `node${i}`), blockIntervalMs: BLOCK_MS })))
    await waitFor(async () => (await Promise.all(nodes.map(height))).every((h) => h >= 2), 30_000, { message: 'the testnet never reached height 2' })
  })

  after(async () => {
    await stopAllNodes()
    await rm(dir, { recursive: true, force: true })
  })

  const send = (to: NodeProcess): Promise<string> => {
    nonce += 1
    const tx = transfer(rich, newAccount().pub, 1000 + nonce)
    return to.client.submit(tx).then(() => tx.id)
  }

  test('a transaction submitted to any node is confirmed in the same block on all four', async () => {
    for (const entry of [0, 2]) {
      const id = await send(nodes[entry])
      const details = await confirmedEverywhere(nodes, id)
      assert.equal(new Set(details.map((d) => d.block_hash)).size, 1, 'one block hash on every node')
      assert.equal(new Set(details.map((d) => d.block_index)).size, 1)
    }
    // a peer's version arrives with its status announcement, which may follow the connection by a few seconds
    await waitFor(async () => {
      const peers = await nodes[0].client.request<{ peers: Array<{ version?: string }> }>('GET', '/api/peers')
      return peers.peers.length === 3 && peers.peers.every((p) => typeof p.version === 'string')
    }, 15_000, { message: 'node 0 does not list 3 peers with the version each announced' })
    const validators = await nodes[1].client.request<{ count: number }>('GET', '/api/validators')
    assert.equal(validators.count, 4)
  })

  test('contract calls: the same gas and result on all four, and the same state root', async () => {
    const registered = callContract(rich, USERNAME_REGISTRY_ID, 'register', ['rich_one'], { amount: USERNAME_FEE_UT })
    const refused = callContract(rich, USERNAME_REGISTRY_ID, 'register', ['x'], { amount: USERNAME_FEE_UT })
    await nodes[1].client.submit(registered)
    await nodes[3].client.submit(refused)
    for (const tx of [registered, refused]) {
      const details = await confirmedEverywhere(nodes, tx.id)
      assert.equal(new Set(details.map((d) => JSON.stringify(d.call_result))).size, 1, `one outcome of ${tx.id} everywhere: ${JSON.stringify(details.map((d) => d.call_result))}`)
      assert.ok((details[0].gas_used as number) > 0)
      const blocks = await Promise.all(nodes.map(async (n) => await n.client.request<{ state_root: string, state_hash?: string }>('GET', `/api/blocks/${String(details[0].block_index)}`)))
      assert.equal(new Set(blocks.map((b) => b.state_root)).size, 1, 'one state root everywhere')
      // each node computed the hash of its whole state after that block itself: one value everywhere
      assert.ok(blocks.every((b) => /^[0-9a-f]{64}$/.test(b.state_hash ?? '')), `a state hash on every node: ${blocks.map((b) => String(b.state_hash)).join(' ')}`)
      assert.equal(new Set(blocks.map((b) => b.state_hash)).size, 1, 'one state hash everywhere')
    }
    const owners = await Promise.all(nodes.map(async (n) => await n.client.usernameRecord('name:rich_one')))
    assert.deepEqual(owners, [rich.pub, rich.pub, rich.pub, rich.pub])
  })

  test('kill -9 of one validator: blocks keep coming; restarted, it catches up and serves the same data', async () => {
    const victim = nodes[3]
    await victim.kill9()
    const before = await height(nodes[0])
    const id = await send(nodes[1])
    await confirmedEverywhere(nodes.slice(0, 3), id)
    await waitFor(async () => (await height(nodes[0])) >= before + 3, 20_000, { message: 'three validators stopped committing' })
    await victim.start()
    const target = await height(nodes[0])
    await waitFor(async () => (await height(victim)) >= target, 20_000, { message: 'the restarted validator did not catch up' })
    const [here, there] = await Promise.all([victim.client.getTx(id), nodes[0].client.getTx(id)])
    assert.equal(here.block_hash, there.block_hash)
    // the blocks it synced after the restart left it with the same whole state as the others
    const stateHashAt = async (n: NodeProcess): Promise<string | undefined> => (await n.client.request<{ state_hash?: string }>('GET', `/api/blocks/${target}`)).state_hash
    const hashes = await Promise.all([victim, nodes[0]].map(stateHashAt))
    assert.match(hashes[0] ?? '', /^[0-9a-f]{64}$/)
    assert.equal(hashes[0], hashes[1], `state hash at ${target}`)
  })

  test('an operator joins with a copy of the genesis and --peer: the node syncs and follows without voting', async () => {
    const home = join(dir, 'follower')
    await run(KITH_BIN, ['init', '--home', home], { cwd: REPO_ROOT, env: { ...process.env, PATH: `${join(REPO_ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}` } })
    await copyFile(join(dir, 'net', 'node0', 'genesis.json'), join(home, 'genesis.json'))
    const info = await nodes[0].client.request<{ node_id: string }>('GET', '/api/network-info')
    const node0Config = JSON.parse(await readFile(join(dir, 'net', 'node0', 'config.json'), 'utf8')) as { p2p_listen: string[] }
    await writeFile(join(home, 'config.json'), JSON.stringify({ p2p_listen: ['/ip4/127.0.0.1/tcp/0'], peers: [`${node0Config.p2p_listen[0]}/p2p/${info.node_id}`] }))
    const follower = await startNode({ home, blockIntervalMs: BLOCK_MS })
    const target = await height(nodes[0])
    await waitFor(async () => (await height(follower)) >= target, 20_000, { message: 'the follower did not sync' })
    // every block came by block sync, and its state is the validators' state
    const synced = await Promise.all([follower, nodes[0]].map(async (n) => (await n.client.request<{ state_hash?: string }>('GET', `/api/blocks/${target}`)).state_hash))
    assert.match(synced[0] ?? '', /^[0-9a-f]{64}$/)
    assert.equal(synced[0], synced[1], `the follower's state hash at ${target}`)
    const id = await send(nodes[1])
    const [theirs, mine] = await Promise.all([nodes[1].client.waitForConfirmation(id, { timeoutMs: 10_000 }), follower.client.waitForConfirmation(id, { timeoutMs: 10_000 })])
    assert.equal(mine.block_hash, theirs.block_hash)
    const validators = await follower.client.request<{ validators: Array<{ pub_key: string }> }>('GET', '/api/validators')
    assert.ok(!validators.validators.some((v) => v.pub_key === follower.validatorPub), 'the follower is not a validator')
    await follower.stop()
  })

  test('two of four down: nothing is committed; one back: the chain resumes', async () => {
    await Promise.all([nodes[2].kill9(), nodes[3].kill9()])
    const stalled = await height(nodes[0])
    const id = await send(nodes[0]) // accepted into the mempool; cannot be committed yet
    await waitFor(async () => (await height(nodes[1])) >= stalled, 5000)
    await new Promise((resolve) => setTimeout(resolve, 3000)) // give a minority every chance to (wrongly) commit
    assert.ok((await height(nodes[0])) <= stalled + 1, 'a minority kept committing')
    const stuck = await height(nodes[0])
    await new Promise((resolve) => setTimeout(resolve, 1500))
    assert.equal(await height(nodes[0]), stuck, 'two of four validators committed a block')
    await nodes[2].start()
    await confirmedEverywhere([nodes[0], nodes[1], nodes[2]], id)
    await nodes[3].start()
    await waitFor(async () => (await height(nodes[3])) >= await height(nodes[0]), 20_000, { message: 'node 3 did not catch up' })
  })
})
