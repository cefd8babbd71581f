/**
 * A validator restored from a snapshot does not sign at heights its lost store may have signed
 * (src/node/restore-guard.ts), real processes. Two validators: V with power 3, which commits
 * alone (3/4 > 2/3), and R with power 1, which proposes one height in four. R loses its store
 * (kill -9, data removed) and comes back by state sync from V. It proposes nothing, and the heights
 * it should have proposed go to V in round 1, until the chain commits a block later than R's
 * start plus the guard's margin (KITH_RESTORE_GUARD_MS=4000 instead of the 60 s block-time drift,
 * so the test takes seconds); then it proposes again, and a restart does not wait again.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { existsSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { kithInit, pickBasePort, startNode, stopAllNodes, waitFor, type LogLine, type NodeProcess } from '../helpers/node-process.js'
import { proposerFor, type Validator } from '../../src/consensus/index.js'
import { blockAt, heightOf } from './harness.js'

const GUARD_MS = 4000

interface Block { height: number, time: string, proposer: string, commit: { round: number } | null }

async function block (node: NodeProcess, height: number): Promise<Block> {
  return await blockAt(node, height) as unknown as Block
}

describe('a restored validator', { timeout: 180_000 }, () => {
  let dir: string
  let v: NodeProcess
  let vAddr: string
  let rHome: string
  let rKey: string
  let validators: Validator[]

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kith-restore-guard-'))
    const vHome = join(dir, 'v')
    rHome = join(dir, 'r')
    const vInit = await kithInit(vHome, {})
    const rInit = await kithInit(rHome, {})
    rKey = rInit.validator_key
    const genesisFile = join(vHome, 'genesis.json')
    const genesis = JSON.parse(await readFile(genesisFile, 'utf8')) as { validators: Array<{ pub_key: string, power: number }> }
    validators = [{ pub_key: vInit.validator_key, power: 3 }, { pub_key: rKey, power: 1 }]
    genesis.validators = validators
    await writeFile(genesisFile, JSON.stringify(genesis, null, 2))
    await copyFile(genesisFile, join(rHome, 'genesis.json'))
    const port = await pickBasePort(1)
    await writeFile(join(vHome, 'config.json'), JSON.stringify({ p2p_listen: [`/ip4/127.0.0.1/tcp/${port}`] }))
    v = await startNode({ home: vHome, blockIntervalMs: 100, args: ['--snapshot-interval', '10'] })
    const id = (await v.client.request<{ node_id: string }>('GET', '/api/network-info')).node_id
    vAddr = `/ip4/127.0.0.1/tcp/${port}/p2p/${id}`
    await writeFile(join(rHome, 'config.json'), JSON.stringify({ p2p_listen: ['/ip4/127.0.0.1/tcp/0'], peers: [vAddr] }))
  })

  after(async () => {
    await stopAllNodes()
    await rm(dir, { recursive: true, force: true })
  })

  /** Heights in [from, to] that R proposed, read from V's blocks. */
  async function proposedByR (from: number, to: number): Promise<Block[]> {
    const blocks = await Promise.all(Array.from({ length: to - from + 1 }, async (_, i) => await block(v, from + i)))
    return blocks.filter((b) => b.proposer === rKey)
  }

  test('signs nothing until a block later than its start plus the margin, then proposes again; a restart does not wait again', async () => {
    // R takes part from genesis: it proposes its share of heights
    let r = await startNode({ home: rHome, blockIntervalMs: 100 })
    await waitFor(async () => (await proposedByR(1, await heightOf(v))).length >= 2, 30_000, { message: 'R proposes blocks' })
    await r.kill9()
    await rm(join(rHome, 'data'), { recursive: true, force: true })
    await waitFor(() => existsSync(join(dir, 'v', 'data', 'snapshots')) && readdirSync(join(dir, 'v', 'data', 'snapshots')).some((f) => f.endsWith('.snapshot')), 30_000, { message: 'V offers a snapshot' })

    const logs: LogLine[] = []
    const env = { KITH_RESTORE_GUARD_MS: String(GUARD_MS) }
    r = await startNode({ home: rHome, blockIntervalMs: 100, env, args: ['--state-sync'], onLog: (l) => logs.push(l) })
    const guard = logs.find((l) => typeof l.msg === 'string' && l.msg.startsWith('this store was restored from a snapshot'))
    assert.ok(guard !== undefined, 'the guard says why it waits')
    const restoredAt = guard.restored_at as number
    const signsAfter = Date.parse(guard.signs_after as string)
    await waitFor(() => logs.some((l) => l.msg === 'restored validator signs again: this height began after it started'), 60_000, { message: 'R signs again' })
    const again = logs.find((l) => l.msg === 'restored validator signs again: this height began after it started')?.height as number
    await waitFor(async () => (await proposedByR(again, await heightOf(v))).length >= 2, 30_000, { message: 'R proposes again after the guard' })

    // every height that began after R's start and before signs_after went without R (the heights
    // just after the snapshot may hold the old R's proposals: the loss is what the guard is for)
    const startedAt = signsAfter - GUARD_MS
    const since = await Promise.all(Array.from({ length: again - restoredAt }, async (_, i) => await block(v, restoredAt + i)))
    const guarded = since.slice(1).filter((_, i) => Date.parse(since[i].time) >= startedAt)
    const rSlots = guarded.filter((b) => proposerFor(validators, b.height, 0) === rKey)
    assert.ok(rSlots.length >= 1, `the guard spanned heights R proposes at in round 0 (${guarded.length} heights)`)
    for (const b of guarded) assert.notEqual(b.proposer, rKey, `R proposed nothing at ${b.height}`)
    for (const b of rSlots) assert.ok(b.commit !== null && b.commit.round > 0, `R's height ${b.height} went to V in a later round`)
    assert.ok(Date.parse(since.at(-1)?.time ?? '') > signsAfter, 'the first height R signs at follows a block later than signs_after')
    assert.ok(Date.parse(since.at(-2)?.time ?? '') <= signsAfter, 'and the height before it did not')

    // the mark is cleared once it signed: a restart does not wait again
    await r.stop()
    const restartLogs: LogLine[] = []
    r = await startNode({ home: rHome, blockIntervalMs: 100, env, onLog: (l) => restartLogs.push(l) })
    const h = await heightOf(v)
    await waitFor(async () => (await proposedByR(h, await heightOf(v))).length >= 1, 30_000, { message: 'R proposes after a restart' })
    assert.ok(!restartLogs.some((l) => typeof l.msg === 'string' && l.msg.startsWith('this store was restored')), 'no guard after a restart')
    await r.stop()
  })
})
