/**
 * `--prune-keep-blocks N` through `bin/kith start` and the HTTP API: the transactions of blocks
 * older than the newest N are dropped, and asking for them answers 404 naming the earliest
 * height the node holds; newer blocks and transactions read as before, the address history
 * keeps only the kept transactions, a duplicate of a pruned transaction is still refused, and all
 * of it holds after a kill -9 and restart.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { newAccount, transfer, type Transaction } from '../../src/client/index.js'
import { http, startNode, stopAllNodes, waitFor, type NodeProcess } from '../helpers/node-process.js'

const ALLOC_UT = 1_000_000_000_000
const KEEP = 4

async function height (node: NodeProcess): Promise<number> {
  return ((await http(node.url, 'GET', '/api/netstats')).json as { height: number }).height
}

async function confirmedAt (node: NodeProcess, tx: Transaction): Promise<number> {
  const res = await http(node.url, 'POST', '/api/tx', { body: tx })
  assert.equal(res.status, 200, res.text)
  return await waitFor(async () => {
    const r = await http(node.url, 'GET', `/api/tx/${tx.id}`)
    const index = (r.json as { block_index?: number } | undefined)?.block_index
    return r.status === 200 && typeof index === 'number' ? index : undefined
  }, 30_000, { intervalMs: 50, message: `${tx.id} confirmed` })
}

describe('pruning old blocks', { timeout: 180_000 }, () => {
  after(async () => { await stopAllNodes() })

  test('old blocks answer 404 naming the earliest height held; new ones, headers and duplicates work as before, across kill -9', async () => {
    const sender = newAccount()
    const recipient = newAccount()
    const node = await startNode({ blockIntervalMs: 100, alloc: [{ pub: sender.pub, amountUt: ALLOC_UT }], args: ['--prune-keep-blocks', String(KEEP)] })
    const old = transfer(sender, recipient.pub, 5000, { fee: 1000 })
    const oldHeight = await confirmedAt(node, old)
    // the chain moves on (a block every 100 ms) until the old block is well behind the kept window
    await waitFor(async () => await height(node) >= oldHeight + KEEP + 3, 60_000, { intervalMs: 100, message: 'the chain moved on' })
    const recent = transfer(sender, recipient.pub, 6000, { fee: 1000 })
    const recentHeight = await confirmedAt(node, recent)

    const check = async (): Promise<void> => {
      const earliest = await waitFor(async () => {
        const res = await http(node.url, 'GET', `/api/blocks/${oldHeight}`)
        return res.status === 404 ? res : undefined
      }, 20_000, { intervalMs: 100, message: `block ${oldHeight} pruned` })
      const message = (earliest.json as { error: string }).error
      const match = /block \d+ was pruned: this node keeps blocks from height (\d+) on \(--prune-keep-blocks\)/.exec(message)
      assert.ok(match !== null, message)
      const head = await height(node)
      assert.ok(Number(match[1]) > oldHeight && Number(match[1]) >= head - KEEP - 8, `earliest ${match[1]} at head ${head}`)

      const tx = await http(node.url, 'GET', `/api/tx/${old.id}`)
      assert.equal(tx.status, 404)
      assert.match((tx.json as { error: string }).error, new RegExp(`unknown transaction ${old.id} \\(this node keeps transactions from height \\d+ on: --prune-keep-blocks\\)`))
      assert.equal((await http(node.url, 'GET', '/api/blocks/latest')).status, 200)
      assert.equal((await http(node.url, 'GET', `/api/blocks/${head + 50}`)).status, 404)
      assert.match((await http(node.url, 'GET', `/api/blocks/${head + 50}`)).text, /no block at height/)

      // the sender's history holds what is kept: the recent transfer, not the pruned one
      const history = (await http(node.url, 'GET', `/api/address/${sender.pub}`)).json as { transactions: Array<{ id: string }> }
      const ids = history.transactions.map((t) => t.id)
      assert.ok(!ids.includes(old.id), 'the pruned transfer left the history')
      // sending the pruned transaction again is still a duplicate: the state remembers its id
      const again = await http(node.url, 'POST', '/api/tx', { body: old })
      assert.ok(again.status >= 400 && again.status < 500, `a pruned transaction resent: ${again.status} ${again.text}`)
    }
    await check()
    // the recent one is still whole, until it too falls behind
    const block = await http(node.url, 'GET', `/api/blocks/${recentHeight}`)
    if (await height(node) < recentHeight + KEEP - 1) assert.equal(block.status, 200, block.text)

    await node.kill9()
    await node.start()
    await check()
  })
})
