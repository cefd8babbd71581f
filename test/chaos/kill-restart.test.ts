/**
 * Chaos: kill -9 under load. Four validators (`bin/kith testnet`, 200 ms blocks) take a steady
 * open-loop stream of signed TRANSFERs spread over the nodes; every 15 s one validator, chosen
 * at random, is killed with SIGKILL and started again at once, eight times (about two minutes).
 *
 * Asserted at the end:
 * - no accepted transaction is lost: every id a node answered `accepted` is in a block on every
 *   node, and GET /api/tx/{id} names the same block index and hash on all four;
 * - no fork: GET /api/blocks/{h} has the same hash on every node for every height up to the
 *   common height;
 * - each restarted validator is back at the head (its height >= the highest height of the other
 *   three when the restart began) within 10 s of the restart (spawn to caught up, measured);
 * - no node died on its own and none was seen signing two different votes.
 *
 * KITH_CHAOS_SEED=<n> replays the same choice of victims.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { waitFor } from '../helpers/node-process.js'
import { rng } from '../sim/simulator.js'
import {
  ExitWatch, LoadGenerator, confirmEverywhere, equivocationLines, heights, heightOf, note, percentile, sleep, startTestnet, type Testnet
} from './harness.js'

const BLOCK_MS = 200
const KILLS = 8
const KILL_EVERY_MS = 15_000
const RATE_PER_SEC = 80
const CATCH_UP_LIMIT_MS = 10_000
/** how long a restart is watched before giving up (longer than the limit, to measure the figure) */
const CATCH_UP_WATCH_MS = 30_000
const DRAIN_TIMEOUT_MS = 60_000


interface Restart {
  kill: number
  node: number
  /** highest height of the other three when the restart began */
  target: number
  /** spawn → "http listening" */
  readyMs: number
  /** spawn → height >= target; undefined when not reached within CATCH_UP_WATCH_MS */
  catchUpMs: number | undefined
}

describe('chaos: kill -9 and restart validators under load', { timeout: 330_000 }, () => {
  let net: Testnet | undefined

  before(async () => {
    net = await startTestnet({ prefix: 'kill', blockIntervalMs: BLOCK_MS, accounts: 16 })
    const nodes = net.nodes
    await waitFor(async () => (await heights(nodes)).every((h) => h !== undefined && h >= 2), 30_000, { message: 'the testnet never reached height 2' })
  })

  after(async () => {
    await net?.close()
  })

  test('8 kills in 2 minutes at 80 tx/s: no accepted tx lost, no fork, each restart at the head within 10 s', async (t) => {
    assert.ok(net !== undefined)
    const { nodes, accounts } = net
    const seed = Number(process.env.KITH_CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31))
    const random = rng(seed)
    note(`kill-restart: seed ${seed}`)
    const watch = new ExitWatch(nodes)
    const load = new LoadGenerator(() => nodes, accounts, {
      ratePerSec: RATE_PER_SEC, maxTxs: RATE_PER_SEC * 200, maxMs: KILLS * KILL_EVERY_MS + 60_000
    })
    const startHeight = Math.max(...(await heights(nodes)).map((h) => h ?? 0))
    const restarts: Restart[] = []
    const t0 = Date.now()
    load.start()
    try {
      for (let k = 1; k <= KILLS; k++) {
        const wait = t0 + k * KILL_EVERY_MS - Date.now()
        if (wait > 0) await sleep(wait)
        watch.assertNone()
        const victim = Math.floor(random() * nodes.length)
        watch.expect(nodes[victim])
        await nodes[victim].kill9()
        const others = nodes.filter((_, i) => i !== victim)
        const target = Math.max(...await Promise.all(others.map(heightOf)))
        const spawnAt = Date.now()
        await nodes[victim].start()
        const readyMs = Date.now() - spawnAt
        watch.watch(nodes[victim], victim)
        let catchUpMs: number | undefined
        while (Date.now() - spawnAt < CATCH_UP_WATCH_MS) {
          const h = await heightOf(nodes[victim]).catch(() => -1)
          if (h >= target) { catchUpMs = Date.now() - spawnAt; break }
          await sleep(100)
        }
        restarts.push({ kill: k, node: victim, target, readyMs, catchUpMs })
        note(`kill ${k}: node${victim} at t=${((spawnAt - t0) / 1000).toFixed(1)} s, target height ${target}, ready ${readyMs} ms, ` +
          `caught up ${catchUpMs === undefined ? `NOT within ${CATCH_UP_WATCH_MS} ms` : `${catchUpMs} ms`}; ` +
          `load: ${load.stats.accepted} accepted of ${load.stats.sent}`)
      }
      // a little more load after the last restart, so it too serves and forwards transactions
      await sleep(5000)
    } finally {
      await load.stop()
    }
    const chaosSeconds = (Date.now() - t0) / 1000
    watch.assertNone()

    const report = await confirmEverywhere(nodes, load.accepted.keys(), DRAIN_TIMEOUT_MS)
    const endHeight = report.commonHeight
    const catchUps = restarts.map((r) => r.catchUpMs ?? Infinity)
    const summary = {
      seed,
      chaos_s: Number(chaosSeconds.toFixed(1)),
      sent: load.stats.sent,
      accepted: load.stats.accepted,
      refused: load.stats.refused,
      no_answer: load.stats.failed,
      blocks: endHeight - startHeight,
      blocks_per_s: Number(((endHeight - startHeight) / chaosSeconds).toFixed(2)),
      drain_ms: report.waitedMs,
      missing_per_node: report.missing.map((m) => m.length),
      mismatched: report.mismatched.length,
      forks: report.forks.length,
      restarts: restarts.map((r) => `node${r.node}: ready ${r.readyMs} ms, at head ${r.catchUpMs ?? 'never'} ms`),
      catch_up_max_ms: Math.max(...catchUps),
      catch_up_p50_ms: percentile(catchUps, 0.5)
    }
    note(`kill-restart summary: ${JSON.stringify(summary)}`)
    t.diagnostic(JSON.stringify(summary))

    watch.assertNone()
    assert.equal(restarts.length, KILLS)
    assert.ok(load.stats.accepted >= RATE_PER_SEC * KILLS * KILL_EVERY_MS / 1000 * 0.5,
      `too little load got through to mean anything: ${load.stats.accepted} accepted of ${load.stats.sent}`)
    assert.deepEqual(report.forks, [], 'nodes hold different blocks at the same height')
    assert.deepEqual(report.missing.map((m) => m.slice(0, 5)), nodes.map(() => []),
      `accepted transactions not in any block after ${DRAIN_TIMEOUT_MS} ms (first ids per node shown; counts ${JSON.stringify(summary.missing_per_node)})`)
    assert.deepEqual(report.mismatched.slice(0, 10), [], `GET /api/tx disagrees between nodes for ${report.mismatched.length} ids`)
    assert.deepEqual(equivocationLines(nodes), [], 'a validator was seen signing two different votes')
    const slow = restarts.filter((r) => r.catchUpMs === undefined || r.catchUpMs > CATCH_UP_LIMIT_MS)
    assert.deepEqual(slow.map((r) => `kill ${r.kill}: node${r.node} ${r.catchUpMs ?? 'never'} ms (target ${r.target})`), [],
      `restarted validators not at the head within ${CATCH_UP_LIMIT_MS} ms`)
  })
})
