/** The admission gate: closed for a while after the event loop lagged, and a node behind a closed gate answers NODE_BUSY before any other check. */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { accountFrom, transfer } from '../../../src/client/index.js'
import { MAX_BLOCK_TXS } from '../../../src/chain/index.js'
import { KithError } from '../../../src/errors/index.js'
import { KithNode, LagGate, initHome, loadHome } from '../../../src/node/index.js'
import { aliceKey } from '../../helpers/fixtures.js'
import { silent, withTempDir } from '../relay/helpers.js'

test('a window that lagged more than maxLagMs closes the gate for holdMs; shorter lags do not', () => {
  const gate = new LagGate({ maxLagMs: 100, holdMs: 250 })
  assert.equal(gate.isOpen(1000), true)
  gate.observe(100, 1000)
  assert.equal(gate.isOpen(1000), true, 'at the limit is not over it')
  gate.observe(180, 2000)
  assert.equal(gate.isOpen(2000), false)
  assert.equal(gate.isOpen(2249), false)
  assert.equal(gate.isOpen(2250), true)
  gate.observe(500, 3000)
  gate.observe(20, 3100)
  assert.equal(gate.isOpen(3200), false, 'a calm window does not reopen it early')
})

test('while the gate is closed and a backlog waits, a submission is answered NODE_BUSY (503) before its signature is looked at; without a backlog it is admitted', async () => {
  await withTempDir(async (dir) => {
    const alice = accountFrom(aliceKey)
    await initHome(join(dir, 'home'), { alloc: [{ pub_key: alice.pub, amount_ut: 100_000_000_000 }] })
    const home = await loadHome(join(dir, 'home'))
    const lagGate = new LagGate({ maxLagMs: 100, holdMs: 60_000 })
    // no block for a minute: what is admitted stays pending
    const node = await KithNode.open({ dataDir: home.dataDir, genesis: home.genesis, validatorKey: home.validatorKey, blockIntervalMs: 60_000, logger: silent, lagGate, mempool: { maxPerSender: 10_000 } })
    try {
      lagGate.observe(400, Date.now())
      const backlog = MAX_BLOCK_TXS / 5
      for (let i = 0; i < backlog; i++) await node.submitTx(transfer(alice, alice.pub, 1))
      assert.equal(node.mempoolSize(), backlog, 'a lagging node with no backlog still admits')
      const tx = transfer(alice, alice.pub, 1)
      await assert.rejects(node.submitTx({ ...tx, signature: Buffer.alloc(64).toString('base64') }), (err: unknown) => err instanceof KithError && err.code === 'NODE_BUSY')
      assert.equal(node.mempoolSize(), backlog)
    } finally {
      await node.stop()
    }
  })
})
