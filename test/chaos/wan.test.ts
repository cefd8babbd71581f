/**
 * Chaos over an emulated WAN (test/netns/wan.ts): four validators (`bin/kith testnet`, 200 ms
 * blocks), each `bin/kith start` in its own network namespace on a bridge, 20 ms RTT ± 2 ms
 * between any two as the baseline. Faults are made in the network (iptables drops, the delay
 * line), never inside the node: no KITH_DENY_PEERS_FILE here.
 *
 * (a) a 2|2 split for 20 s: no block is committed while split (every height stays within +1);
 *     healed, commits resume within HEAL_BOUND_MS;
 * (b) node 3 behind 300 ms (RTT 310 ms to each other node) for 30 s: no commit gap above
 *     gapBound(one-way delay);
 * (c) 5 % loss on every link, each direction, for 30 s: the same gap bound, with TCP's
 *     retransmissions counted in.
 * After each: every transaction answered `accepted` is in the same block on every node, no
 * fork at any height, no equivocation.
 *
 * The bounds (liveness only; speed is the benchmark's, bench/wan.ts):
 * - gapBound: 3 block intervals, then round 0 timing out (propose + prevote + precommit
 *   waits) and round 1's propose timeout, i.e. no height needs a third round; plus, for the two
 *   rounds, three message hops each (proposal, prevote, precommit) at the slowest one-way delay,
 *   each hop allowed two TCP retransmissions (Linux's minimum RTO is 200 ms, doubling: 600 ms).
 * - HEAL_BOUND_MS: a real partition (unlike the deny hook) lets libp2p's ping fail and close
 *   the connections, and every failed dial doubles the redial wait up to REDIAL_MAX_MS (30 s);
 *   a dial launched during the split may hang for its 10 s timeout. Both sides redial, so the
 *   links are back within REDIAL_MAX_MS + the dial timeout; then the nodes, stuck in round 0
 *   (2 of 4 never see 2f+1 prevotes, so no round timeout fires), exchange votes through the
 *   status announcements (every STATUS_INTERVAL, 1 s) and finish within gapBound.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { DEFAULT_TIMEOUTS } from '../../src/consensus/index.js'
import { REDIAL_MAX_MS } from '../../src/p2p/redialer.js'
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../../src/p2p/host.js'
import { waitFor } from '../helpers/node-process.js'
import { WanNetwork, wanUnavailable } from '../netns/wan.js'
import {
  ExitWatch, LoadGenerator, blockAt, confirmEverywhere, equivocationLines, heights, mapLimit, note, sleep, startTestnet, type Testnet
} from './harness.js'

const BLOCK_MS = 200
const BASE_RTT_SHARE_MS = 10
const BASE_JITTER_MS = 2
const SPLIT_MS = 20_000
const SLOW_MS = 300
const PHASE_MS = 30_000
const LOSS = 0.05
const DRAIN_TIMEOUT_MS = 60_000
const TCP_RETRANSMIT_ALLOWANCE_MS = 200 + 400
const STATUS_INTERVAL_MS = 1000

function gapBound (oneWayMs: number): number {
  const rounds = 3 * BLOCK_MS + DEFAULT_TIMEOUTS.propose + 2 * DEFAULT_TIMEOUTS.vote + DEFAULT_TIMEOUTS.propose + DEFAULT_TIMEOUTS.proposeDelta
  return rounds + 2 * 3 * (oneWayMs + TCP_RETRANSMIT_ALLOWANCE_MS)
}
const HEAL_BOUND_MS = REDIAL_MAX_MS + DEFAULT_REQUEST_TIMEOUT_MS + STATUS_INTERVAL_MS + gapBound(BASE_RTT_SHARE_MS + BASE_JITTER_MS)

const maxOf = (hs: Array<number | undefined>): number => Math.max(...hs.map((h) => h ?? 0))
const minOf = (hs: Array<number | undefined>): number => Math.min(...hs.map((h) => h ?? 0))

const unavailable = wanUnavailable()

describe('chaos: emulated WAN (network namespaces)', { timeout: 420_000, skip: unavailable }, () => {
  let wan: WanNetwork | undefined
  let net: Testnet | undefined
  let watch: ExitWatch | undefined

  before(async () => {
    wan = await WanNetwork.create(4)
    wan.shapeAll({ rttMs: BASE_RTT_SHARE_MS, jitterMs: BASE_JITTER_MS })
    net = await startTestnet({ prefix: 'wan', blockIntervalMs: BLOCK_MS, accounts: 8, wan })
    const nodes = net.nodes
    watch = new ExitWatch(nodes)
    await waitFor(async () => (await heights(nodes)).every((h) => h !== undefined && h >= 2), 60_000, { message: 'the testnet never reached height 2' })
    note(`wan: 4 nodes up in ${wan.ns(0)}.. on ${wan.subnet}.0/24`)
  })

  after(async () => {
    await net?.close()
    wan?.destroy()
  })

  /** longest time between consecutive blocks' header times on node 0, and blocks decided after round 0 */
  async function commitGaps (from: number, to: number): Promise<{ maxGapMs: number, late: number, maxRound: number }> {
    assert.ok(net !== undefined)
    const node = net.nodes[0]
    const blocks = await mapLimit(Array.from({ length: Math.max(0, to - from + 1) }, (_, k) => from + k), 8, async (h) => await blockAt(node, h))
    let maxGapMs = 0
    for (let k = 1; k < blocks.length; k++) maxGapMs = Math.max(maxGapMs, Date.parse(blocks[k].time) - Date.parse(blocks[k - 1].time))
    const rounds = blocks.map((b) => b.commit?.round ?? 0)
    return { maxGapMs, late: rounds.filter((r) => r > 0).length, maxRound: Math.max(0, ...rounds) }
  }

  /** the end-of-phase safety checks */
  async function assertSafe (load: LoadGenerator, label: string): Promise<Record<string, unknown>> {
    assert.ok(net !== undefined && watch !== undefined)
    const report = await confirmEverywhere(net.nodes, load.accepted.keys(), DRAIN_TIMEOUT_MS)
    const summary = {
      accepted: load.stats.accepted, sent: load.stats.sent, refused: load.stats.refused, no_answer: load.stats.failed,
      drain_ms: report.waitedMs, missing_per_node: report.missing.map((m) => m.length), mismatched: report.mismatched.length,
      forks: report.forks.length, common_height: report.commonHeight
    }
    watch.assertNone()
    assert.ok(load.stats.accepted > 0, `${label}: no transaction was accepted (the phase exercised nothing)`)
    assert.deepEqual(report.forks, [], `${label}: nodes hold different blocks at the same height`)
    assert.deepEqual(report.missing.map((m) => m.slice(0, 5)), net.nodes.map(() => []),
      `${label}: accepted transactions not in any block after ${DRAIN_TIMEOUT_MS} ms (counts per node ${JSON.stringify(summary.missing_per_node)})`)
    assert.deepEqual(report.mismatched.slice(0, 10), [], `${label}: GET /api/tx disagrees between nodes for ${report.mismatched.length} ids`)
    assert.deepEqual(equivocationLines(net.nodes), [])
    return summary
  }

  test('(a) a 2|2 split in the network commits nothing; healed, commits resume within the bound', async (t) => {
    assert.ok(net !== undefined && wan !== undefined && watch !== undefined)
    const { nodes, accounts } = net
    await waitFor(async () => {
      const hs = await heights(nodes)
      return hs.every((h) => h !== undefined && h === hs[0])
    }, 20_000, { intervalMs: 100, message: 'the four nodes never stood at one height before the split' })
    const load = new LoadGenerator(() => nodes, accounts, { ratePerSec: 10, maxTxs: 10 * 120, maxMs: 120_000 })
    load.start()
    let splitHeight: number
    let maxDuringSplit: number
    let healHeight: number
    let resumeMs: number | undefined
    let allPastMs: number | undefined
    try {
      await sleep(1000)
      wan.partition([[0, 1], [2, 3]])
      // a block whose last votes were in flight may still land: take the height after that
      await sleep(1000)
      splitHeight = maxOf(await heights(nodes))
      maxDuringSplit = splitHeight
      const until = Date.now() + SPLIT_MS
      while (Date.now() < until) {
        await sleep(250)
        watch.assertNone()
        maxDuringSplit = Math.max(maxDuringSplit, maxOf(await heights(nodes)))
      }
      healHeight = maxOf(await heights(nodes))
      wan.heal()
      const healAt = Date.now()
      while (Date.now() - healAt < HEAL_BOUND_MS + 10_000) {
        const hs = await heights(nodes)
        if (resumeMs === undefined && maxOf(hs) > healHeight) resumeMs = Date.now() - healAt
        if (minOf(hs) > healHeight) { allPastMs = Date.now() - healAt; break }
        await sleep(100)
      }
      note(`wan (a): split at ${splitHeight}, max during split ${maxDuringSplit}; healed at ${healHeight}: first new block after ${resumeMs ?? 'never'} ms, ` +
        `every node past it after ${allPastMs ?? 'never'} ms (bound ${HEAL_BOUND_MS} ms)`)
      await sleep(2000)
    } finally {
      await load.stop()
    }
    const summary = { split_height: splitHeight, max_during_split: maxDuringSplit, heal_height: healHeight, resume_ms: resumeMs ?? null, all_past_ms: allPastMs ?? null, heal_bound_ms: HEAL_BOUND_MS, ...await assertSafe(load, '(a)') }
    note(`wan (a) summary: ${JSON.stringify(summary)}`)
    t.diagnostic(JSON.stringify(summary))
    assert.ok(maxDuringSplit <= splitHeight + 1, `a 2|2 split committed: height ${maxDuringSplit}, split at ${splitHeight}`)
    assert.ok(allPastMs !== undefined && allPastMs <= HEAL_BOUND_MS,
      `commits did not resume on every node within ${HEAL_BOUND_MS} ms of healing (first new block: ${resumeMs ?? 'never'} ms, all: ${allPastMs ?? 'never'} ms)`)
  })

  async function shapedPhase (label: string, shape: () => void, oneWayMs: number): Promise<Record<string, unknown>> {
    assert.ok(net !== undefined && wan !== undefined && watch !== undefined)
    const { nodes, accounts } = net
    const load = new LoadGenerator(() => nodes, accounts, { ratePerSec: 20, maxTxs: 20 * 60, maxMs: PHASE_MS })
    shape()
    const from = minOf(await heights(nodes))
    load.start()
    let to: number
    let slowFrom: number
    let slowTo: number
    try {
      slowFrom = (await heights([nodes[3]]))[0] ?? 0
      const until = Date.now() + PHASE_MS
      while (Date.now() < until) {
        await sleep(1000)
        watch.assertNone()
      }
      to = minOf(await heights(nodes.slice(0, 3)))
      slowTo = (await heights([nodes[3]]))[0] ?? 0
    } finally {
      await load.stop()
      wan.shapeAll({ rttMs: BASE_RTT_SHARE_MS, jitterMs: BASE_JITTER_MS, loss: 0 })
    }
    const gaps = await commitGaps(from, to)
    const bound = gapBound(oneWayMs)
    const summary = { from_height: from, to_height: to, blocks: to - from, node3_blocks: slowTo - slowFrom, max_gap_ms: gaps.maxGapMs, gap_bound_ms: bound, late_blocks: gaps.late, max_round: gaps.maxRound, ...await assertSafe(load, label) }
    note(`wan ${label} summary: ${JSON.stringify(summary)}`)
    assert.ok(to - from > 0, `${label}: no block committed in ${PHASE_MS} ms`)
    assert.ok(gaps.maxGapMs <= bound, `${label}: ${gaps.maxGapMs} ms between two blocks (bound ${bound} ms: no height may need a third round)`)
    assert.ok(slowTo > slowFrom, `${label}: node 3 committed nothing in ${PHASE_MS} ms`)
    return summary
  }

  test('(b) one node behind 300 ms: no height needs a third round', async (t) => {
    assert.ok(wan !== undefined)
    const w = wan
    // node 3's share of the RTT is 300 ms: 310 ms to any other node, 155 ms one way
    const summary = await shapedPhase('(b)', () => w.shape(3, { rttMs: SLOW_MS }), (SLOW_MS + BASE_RTT_SHARE_MS) / 2 + BASE_JITTER_MS)
    t.diagnostic(JSON.stringify(summary))
  })

  test('(c) 5 % loss on every link: no height needs a third round', async (t) => {
    assert.ok(wan !== undefined)
    const w = wan
    const summary = await shapedPhase('(c)', () => w.shapeAll({ loss: LOSS }), BASE_RTT_SHARE_MS + BASE_JITTER_MS)
    t.diagnostic(JSON.stringify(summary))
  })
})
