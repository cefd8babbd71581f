/** `bin/kith start` flags through a real process. */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { startNode, stopAllNodes } from '../helpers/node-process.js'

describe('kith start', () => {
  after(stopAllNodes)

  test('--stats-addr, the HTTP listener\'s old name, still sets the listener and warns that it is deprecated', async () => {
    const node = await startNode({ args: ['--stats-addr', '127.0.0.1:0'] })
    const res = await fetch(`${node.url}/api/netstats`)
    assert.equal(res.status, 200)
    assert.ok(node.rawOutput.some((line) => line.includes('"stats_addr" (--stats-addr) is deprecated; use "http_addr" (--http-addr)')), node.tail())
  })
})
