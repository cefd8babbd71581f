/**
 * Empty blocks off (the node's default): through `bin/kith start` and the HTTP API, an idle
 * chain stays at its height, a transaction is committed as soon as it arrives (no wait for a
 * block that was never going to come), and the heartbeat (--empty-block-interval-ms) commits
 * a block now and then while nothing happens. `--empty-blocks true` restores a block every
 * interval; a bad value is refused before the node starts.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import { newAccount, transfer } from '../../src/client/index.js'
import { KITH_BIN, childEnv, http, startNode, stopAllNodes, waitFor, type NodeProcess } from '../helpers/node-process.js'

const execFileP = promisify(execFile)
const ALLOC_UT = 1_000_000_000_000

async function height (node: NodeProcess): Promise<number> {
  const res = await http(node.url, 'GET', '/api/netstats')
  assert.equal(res.status, 200, res.text)
  return (res.json as { height: number }).height
}

/** Waits until the height stops moving for `quietMs` (the blocks of start-up are committed), and returns it. */
async function settledHeight (node: NodeProcess, quietMs: number): Promise<number> {
  let last = await height(node)
  let since = Date.now()
  await waitFor(async () => {
    const h = await height(node)
    if (h !== last) { last = h; since = Date.now() }
    return Date.now() - since >= quietMs
  }, 60_000, { intervalMs: 100, message: 'the height never settled' })
  return last
}

describe('empty blocks off', { timeout: 180_000 }, () => {
  after(async () => { await stopAllNodes() })

  test('an idle chain stays at its height, and a transaction is committed as it arrives', async () => {
    const sender = newAccount()
    const recipient = newAccount()
    // the node's own default (the helper's is true), with a heartbeat far beyond this test
    const node = await startNode({ emptyBlocks: false, blockIntervalMs: 100, alloc: [{ pub: sender.pub, amountUt: ALLOC_UT }], args: ['--empty-block-interval-ms', '600000'] })
    const idle = await settledHeight(node, 1000)
    // twenty block intervals without a transaction: not one block
    await sleep(2000)
    assert.equal(await height(node), idle, 'no block while nothing waits')

    const tx = transfer(sender, recipient.pub, 5000, { fee: 1000 })
    const res = await http(node.url, 'POST', '/api/tx', { body: tx })
    assert.equal(res.status, 200, res.text)
    const confirmed = await waitFor(async () => {
      const r = await http(node.url, 'GET', `/api/tx/${tx.id}`)
      return r.status === 200 && typeof (r.json as { block_index?: number }).block_index === 'number' ? r.json as { block_index: number } : undefined
    }, 30_000, { intervalMs: 50, message: 'the transaction was not committed' })
    assert.equal(confirmed.block_index, idle + 1, 'the next block holds it')
    // and the chain goes quiet again
    assert.equal(await settledHeight(node, 1000), idle + 1, 'one block for the transaction, then none')
  })

  test('a stream of submissions from many clients keeps blocks coming: every accepted transaction is committed', async () => {
    // A transaction admitted while the previous height's commit was syncing signalled the next
    // height before the engine entered it, and was forgotten there: the node stopped building
    // blocks at height 2 or 3 and answered 503 once its mempool was full.
    const senders = Array.from({ length: 32 }, () => newAccount())
    const node = await startNode({ emptyBlocks: false, blockIntervalMs: 100, alloc: senders.map((s) => ({ pub: s.pub, amountUt: ALLOC_UT })), args: ['--empty-block-interval-ms', '600000'] })
    const before = (await http(node.url, 'GET', '/api/netstats')).json as { total_txs: number }
    const bodies = senders.flatMap((s, i) => Array.from({ length: 60 }, () => JSON.stringify(transfer(s, senders[(i + 1) % senders.length].pub, 1000, { fee: 1000 }))))
    let next = 0
    let accepted = 0
    await Promise.all(senders.map(async () => {
      while (next < bodies.length) {
        const res = await http(node.url, 'POST', '/api/tx', { rawBody: bodies[next++] })
        if (res.status === 200) accepted++
        else assert.equal(res.status, 503, res.text)
      }
    }))
    assert.ok(accepted > bodies.length / 2, `most submissions accepted: ${accepted} of ${bodies.length}`)
    await waitFor(async () => {
      const stats = (await http(node.url, 'GET', '/api/netstats')).json as { total_txs: number, mempool_size: number }
      return stats.total_txs - before.total_txs === accepted && stats.mempool_size === 0
    }, 30_000, { intervalMs: 100, message: `not every accepted transaction (${accepted}) was committed: blocks stopped coming` })
  })

  test('the heartbeat commits a block while idle, at about its interval', async () => {
    const node = await startNode({ emptyBlocks: false, blockIntervalMs: 100, args: ['--empty-block-interval-ms', '700'] })
    await waitFor(async () => await height(node) >= 1, 30_000, { intervalMs: 100 })
    const h0 = await height(node)
    await sleep(3000)
    const grown = await height(node) - h0
    // a block every 700 ms would be 4 in 3 s; 100 ms blocks would be 30
    assert.ok(grown >= 2 && grown <= 6, `heartbeat blocks in 3 s: ${grown}`)
  })

  test('--empty-blocks true commits a block every interval even when idle', async () => {
    const node = await startNode({ emptyBlocks: true, blockIntervalMs: 100 })
    await waitFor(async () => await height(node) >= 1, 30_000, { intervalMs: 100 })
    const h0 = await height(node)
    await sleep(1500)
    assert.ok(await height(node) - h0 >= 5, 'blocks keep coming')
  })

  test('a value that is not true or false is refused before the node starts', async () => {
    const err = await execFileP(KITH_BIN, ['start', '--dev', '--home', '/nonexistent-kith-home', '--empty-blocks', 'sometimes'], { env: childEnv({}) })
      .then(() => undefined, (e: { code?: number, stderr?: string }) => e)
    assert.ok(err !== undefined, 'kith start refused')
    assert.match(err.stderr ?? '', /--empty-blocks expects true or false, got "sometimes"/)
  })
})
