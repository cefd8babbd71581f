/** The admission gate: closed for a while after the event loop lagged, and a node behind a closed gate answers NODE_BUSY before any other check. */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { accountFrom, transfer } from '../../../src/client/index.js'
import { KithError } from '../../../src/errors.js'
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

test('while the gate is closed, a submission is answered NODE_BUSY (503) before its signature or the mempool is looked at', async () => {
  await withTempDir(async (dir) => {
    const alice = accountFrom(aliceKey)
    await initHome(join(dir, 'home'), { alloc: [{ pub_key: alice.pub, amount_ut: 1_000_000 }] })
    const home = await loadHome(join(dir, 'home'))
    const lagGate = new LagGate({ maxLagMs: 100, holdMs: 60_000 })
    const node = await KithNode.open({ dataDir: home.dataDir, genesis: home.genesis, validatorKey: home.validatorKey, blockIntervalMs: 1000, logger: silent, lagGate })
    try {
      const tx = transfer(alice, alice.pub, 1)
      lagGate.observe(400, Date.now())
      await assert.rejects(node.submitTx({ ...tx, signature: Buffer.alloc(64).toString('base64') }), (err: unknown) => err instanceof KithError && err.code === 'NODE_BUSY')
      assert.equal(node.mempoolSize(), 0)
    } finally {
      await node.stop()
    }
  })
})
