/**
 * A pruned node and block sync: a peer asking for heights whose transactions were dropped gets no
 * blocks (and asks another peer), while the kept heights are served whole. An in-process
 * single-validator node; the request goes through the node's network handlers as a peer's would.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { KithNode, initHome, loadHome } from '../../../src/node/index.js'
import { silent, withTempDir } from '../relay/helpers.js'

const KEEP = 3

test('a pruned node serves block sync only from the earliest height it holds', async () => {
  await withTempDir(async (dir) => {
    await initHome(join(dir, 'home'), {})
    const home = await loadHome(join(dir, 'home'))
    const node = await KithNode.open({
      dataDir: home.dataDir, genesis: home.genesis, validatorKey: home.validatorKey, blockIntervalMs: 20, emptyBlocks: true, pruneKeepBlocks: KEEP, logger: silent
    })
    try {
      node.start()
      for (let i = 0; i < 500 && node.earliestBlockBody() < 6; i++) await new Promise((resolve) => setTimeout(resolve, 20))
      const earliest = node.earliestBlockBody()
      assert.ok(earliest >= 6, `pruned up to ${earliest}`)
      assert.ok(earliest >= node.head().height - KEEP - 8 + 1, 'pruning keeps up with the head')
      const ask = async (from: number): Promise<Array<{ block: { header: { height: number } } }>> => {
        const answer = await node.networkHandlers().onRequest(Buffer.from(JSON.stringify({ type: 'blocks', from, count: 4 })), 'peer')
        return (JSON.parse(Buffer.from(answer).toString('utf8')) as { blocks: Array<{ block: { header: { height: number } } }> }).blocks
      }
      assert.deepEqual(await ask(1), [], 'nothing from the pruned heights')
      // the block below the head is inside the kept window however far pruning has got
      const from = node.head().height - 1
      const kept = await ask(from)
      assert.ok(kept.length >= 1, 'the kept heights are served')
      assert.equal(kept[0].block.header.height, from)
    } finally {
      await node.stop()
    }
  })
})
