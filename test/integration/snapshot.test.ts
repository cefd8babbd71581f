/**
 * Backups with `kith snapshot export` and `kith snapshot import`, real processes: a snapshot
 * taken from a running validator fills a new home, which then follows the chain by block sync
 * from the snapshot's height with the validator's state; old heights answer 404 naming the
 * earliest one held. A damaged file, a forged manifest, another chain's snapshot and a home
 * that already has a chain are refused, and leave the home as it was.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { newAccount, transfer, type Account } from '../../src/client/index.js'
import { syntheticAccount, writeSyntheticSnapshot } from '../../bench/lib/synthetic-snapshot.js'
import { KITH_BIN, REPO_ROOT, childEnv, http, kithInit, pickBasePort, startNode, stopAllNodes, waitFor, type NodeProcess } from '../helpers/node-process.js'

interface Run { code: number, stdout: string, stderr: string }

async function kith (args: string[]): Promise<Run> {
  return await new Promise((resolve) => {
    execFile(KITH_BIN, args, { cwd: REPO_ROOT, env: childEnv({}), timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr })
    })
  })
}

interface Summary { file: string, height: number, block_hash: string, state_hash: string, entries: number, chunks: number, bytes: number }

async function height (node: NodeProcess): Promise<number> {
  return (await node.client.netstats()).height
}

describe('kith snapshot export and import', { timeout: 180_000 }, () => {
  let dir: string
  let validator: NodeProcess
  let alice: Account
  let peerAddr: string
  let file: string
  let exported: Summary

  /** A home for this chain that holds no chain data yet. */
  async function newHome (name: string): Promise<string> {
    const home = join(dir, name)
    await kithInit(home, {})
    await copyFile(join(dir, 'validator', 'genesis.json'), join(home, 'genesis.json'))
    await writeFile(join(home, 'config.json'), JSON.stringify({ p2p_listen: ['/ip4/127.0.0.1/tcp/0'], peers: [peerAddr] }))
    return home
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kith-snapshot-'))
    alice = newAccount()
    const home = join(dir, 'validator')
    await kithInit(home, { alloc: [{ pub: alice.pub, amountUt: 1_000_000_000 }] })
    const port = await pickBasePort(1)
    await writeFile(join(home, 'config.json'), JSON.stringify({ p2p_listen: [`/ip4/127.0.0.1/tcp/${port}`] }))
    validator = await startNode({ home, blockIntervalMs: 100 })
    const info = await validator.client.request<{ node_id: string }>('GET', '/api/network-info')
    peerAddr = `/ip4/127.0.0.1/tcp/${port}/p2p/${info.node_id}`
    const payments = Array.from({ length: 5 }, (_, i) => transfer(alice, newAccount().pub, 1000 + i))
    for (const tx of payments) await validator.client.submit(tx)
    for (const tx of payments) await validator.client.waitForConfirmation(tx.id, { timeoutMs: 20_000 })
    file = join(dir, 'state.snapshot')
  })

  after(async () => {
    await stopAllNodes()
    await rm(dir, { recursive: true, force: true })
  })

  test('a snapshot of a running node fills a new home, which follows from its height with the same state', async () => {
    const out = await kith(['snapshot', 'export', file, '--home', join(dir, 'validator')])
    assert.equal(out.code, 0, out.stderr)
    exported = JSON.parse(out.stdout) as Summary
    assert.ok(exported.height >= 1 && exported.entries > 5 && exported.chunks === 1, out.stdout)
    const atHeight = await validator.client.request<{ hash: string, state_hash: string }>('GET', `/api/blocks/${exported.height}`)
    assert.equal(exported.block_hash, atHeight.hash)
    assert.equal(exported.state_hash, atHeight.state_hash)

    const home = await newHome('restored')
    const imported = await kith(['snapshot', 'import', file, '--home', home])
    assert.equal(imported.code, 0, imported.stderr)
    assert.deepEqual({ ...JSON.parse(imported.stdout) as Summary, file: '' }, { ...exported, file: '' })
    assert.ok(!existsSync(join(home, 'data', '.snapshot-import')), 'the staging directory is gone')

    const restored = await startNode({ home, blockIntervalMs: 100 })
    assert.ok(await height(restored) >= exported.height, 'it starts at the snapshot\'s height')
    const target = await height(validator) + 3
    await waitFor(async () => (await height(restored)) >= target, 20_000, { message: 'the restored node follows the chain' })
    const hashes = await Promise.all([restored, validator].map(async (n) => (await n.client.request<{ state_hash?: string }>('GET', `/api/blocks/${target}`)).state_hash))
    assert.match(hashes[0] ?? '', /^[0-9a-f]{64}$/)
    assert.equal(hashes[0], hashes[1], `state hash at ${target}`)
    assert.equal((await restored.client.address(alice.pub)).balance_ut, (await validator.client.address(alice.pub)).balance_ut)
    const old = await http(restored.url, 'GET', '/api/blocks/1')
    assert.equal(old.status, 404)
    assert.match(old.text, new RegExp(`keeps blocks from height ${exported.height + 1} on`))
    const pay = transfer(alice, newAccount().pub, 777)
    await validator.client.submit(pay)
    await restored.client.waitForConfirmation(pay.id, { timeoutMs: 20_000 })
    await restored.stop()
  })

  test('a damaged chunk is refused with its number, and the home is left without chain data', async () => {
    const text = await readFile(file, 'utf8')
    const start = text.indexOf('\n') + 1
    // the first digit of the supply changed (1,000,000,000 µT: alice's allocation), the length kept: only the lanes can tell
    const at = text.indexOf('["supply",1', start) + '["supply",'.length
    assert.ok(at > start)
    const damaged = join(dir, 'damaged.snapshot')
    await writeFile(damaged, text.slice(0, at) + '2' + text.slice(at + 1))
    const home = await newHome('damaged')
    const out = await kith(['snapshot', 'import', damaged, '--home', home])
    assert.equal(out.code, 1)
    assert.match(out.stderr, /chunk 0 does not match its lanes in the manifest/)
    assert.ok(!existsSync(join(home, 'data', 'data.mdb')) && !existsSync(join(home, 'data', '.snapshot-import')), 'nothing left behind')
  })

  test('a forged manifest, a truncated file, and a snapshot of another chain are refused before any state is written', async () => {
    const text = await readFile(file, 'utf8')
    const newline = text.indexOf('\n')
    const manifest = JSON.parse(text.slice(0, newline)) as { header: { state_hash: string }, chunks: Array<{ lanes: string }> }
    const cases: Array<[string, string, RegExp]> = []
    const forgedHeader = { ...manifest, header: { ...manifest.header, state_hash: 'ab'.repeat(32) } }
    cases.push(['header', JSON.stringify(forgedHeader) + text.slice(newline), /header does not hash to the block hash/])
    const lanes = Buffer.from(manifest.chunks[0].lanes, 'base64')
    lanes[0] ^= 1
    const forgedLanes = { ...manifest, chunks: [{ ...manifest.chunks[0], lanes: lanes.toString('base64') }, ...manifest.chunks.slice(1)] }
    cases.push(['lanes', JSON.stringify(forgedLanes) + text.slice(newline), /do not add up to the state hash/])
    cases.push(['truncated', text.slice(0, text.length - 10), /the file is \d+ bytes, its manifest accounts for \d+/])
    cases.push(['garbage', 'not a snapshot\n', /not JSON: not a kith snapshot/])
    for (const [name, content, error] of cases) {
      const forged = join(dir, `${name}.snapshot`)
      await writeFile(forged, content)
      const home = await newHome(`forged-${name}`)
      const out = await kith(['snapshot', 'import', forged, '--home', home])
      assert.equal(out.code, 1, name)
      assert.match(out.stderr, error, name)
      assert.ok(!existsSync(join(home, 'data', 'data.mdb')), `${name}: no chain data written`)
    }
    const other = join(dir, 'other-chain')
    await kithInit(other, {})
    const out = await kith(['snapshot', 'import', file, '--home', other])
    assert.equal(out.code, 1)
    assert.match(out.stderr, /genesis/)
  })

  test('a home that already holds a chain is not overwritten; a bad --trust-hash is refused', async () => {
    const out = await kith(['snapshot', 'import', file, '--home', join(dir, 'validator')])
    assert.equal(out.code, 1)
    assert.match(out.stderr, /already holds a chain store/)
    const home = await newHome('trust')
    const wrong = await kith(['snapshot', 'import', file, '--home', home, '--trust-hash', 'cd'.repeat(32)])
    assert.equal(wrong.code, 1)
    assert.match(wrong.stderr, /not the trusted/)
    const malformed = await kith(['snapshot', 'import', file, '--home', home, '--trust-hash', 'nope'])
    assert.match(malformed.stderr, /--trust-hash expects a block hash/)
    const trusted = await kith(['snapshot', 'import', file, '--home', home, '--trust-hash', exported.block_hash])
    assert.equal(trusted.code, 0, trusted.stderr)
  })

  test('kill -9 during an import leaves no chain data; the import run again completes, and the node goes on from the snapshot\'s height', async () => {
    // a large state, so the import is still running when it is killed: the genesis state of a
    // new home plus 100,000 balances, at height 1, certified by the home's own validator key
    const home = join(dir, 'crash')
    await kithInit(home, {})
    const big = join(dir, 'big.snapshot')
    const manifest = await writeSyntheticSnapshot(home, 100_000, big)

    const staging = join(home, 'data', '.snapshot-import')
    const child = spawn(KITH_BIN, ['snapshot', 'import', big, '--home', home], { cwd: REPO_ROOT, env: childEnv({}), stdio: 'ignore' })
    const exited = new Promise((resolve) => child.once('exit', resolve))
    // killed once part of the state is written (the whole is ~8 MiB of entries)
    await waitFor(() => existsSync(join(staging, 'data.mdb')) && statSync(join(staging, 'data.mdb')).size >= 2 * 2 ** 20, 60_000, { intervalMs: 5, message: 'the import wrote 2 MiB' })
    child.kill('SIGKILL')
    await exited
    assert.ok(!existsSync(join(home, 'data', 'data.mdb')), 'a killed import leaves no chain store in place')

    const again = await kith(['snapshot', 'import', big, '--home', home])
    assert.equal(again.code, 0, again.stderr)
    assert.equal((JSON.parse(again.stdout) as Summary).entries, manifest.entries)
    assert.ok(!existsSync(staging), 'the staging directory left by the crash is gone')
    // the home's validator is the chain's only one: it commits the next block on the restored state
    const node = await startNode({ home, blockIntervalMs: 100 })
    await waitFor(async () => (await height(node)) >= 3, 20_000, { message: 'blocks after the snapshot\'s height' })
    // a restored validator no other can commit without: the restore guard steps aside and says so (src/node/restore-guard.ts)
    assert.ok(node.logs.some((l) => typeof l.msg === 'string' && l.msg.startsWith('restored validator signs now: the other validators cannot commit without it')), 'the guard says it cannot wait')
    assert.equal((await node.client.address(syntheticAccount(99_999))).balance_ut, 100_000)
    await node.stop()
  })
})
