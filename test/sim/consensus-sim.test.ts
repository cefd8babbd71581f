/**
 * 1,000 seeded simulations of the Tendermint engine (N = 1, 4, 7) with loss, delay, reordering,
 * duplication, partitions, crash-restart and an equivocating validator. Each checks agreement,
 * chain validity and no honest double-sign at every step, and progress after healing.
 * Replay a failing seed with `npm run sim -- --seed S --seeds 1`.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { optionsForSeed, simulate } from './simulator.js'

const SEEDS = 1000
const SHARDS = 4

for (let shard = 0; shard < SHARDS; shard++) {
  const first = 1 + shard * (SEEDS / SHARDS)
  test(`seeds ${first}..${first + SEEDS / SHARDS - 1} keep safety and make progress`, () => {
    const failures: string[] = []
    const kinds = new Set<string>()
    for (let seed = first; seed < first + SEEDS / SHARDS; seed++) {
      const opts = optionsForSeed(seed)
      kinds.add(`n${opts.validators}${opts.byzantine ? '+byz' : ''}${opts.crashes ? '+crash' : ''}${opts.partitions ? '+part' : ''}`)
      const result = simulate(opts)
      if (!result.ok) failures.push(`seed ${seed}: ${result.violation}`)
    }
    assert.deepEqual(failures, [])
    // the shard really exercised every validator count and fault kind
    for (const n of [1, 4, 7]) assert.ok([...kinds].some((k) => k.startsWith(`n${n}`)), `no seed with ${n} validators`)
    for (const fault of ['+byz', '+crash', '+part']) assert.ok([...kinds].some((k) => k.includes(fault)), `no seed with ${fault}`)
  })
}

test('the simulator catches a double sign: an engine that forgets its record on restart fails', async () => {
  const { TendermintEngine } = await import('../../src/consensus/index.js')
  const proto = TendermintEngine.prototype as unknown as { handle: (input: { type: string, restore?: unknown }) => unknown }
  const original = proto.handle
  proto.handle = function (this: unknown, input) {
    // amnesia: drop the persisted record, as a node that persists nothing would
    return original.call(this, input.type === 'new-height' ? { ...input, restore: undefined } : input)
  }
  try {
    const failures = []
    for (let seed = 1; seed <= 200; seed++) {
      const result = simulate(optionsForSeed(seed))
      if (!result.ok) failures.push(result.violation ?? '')
    }
    assert.ok(failures.some((f) => f.includes('double-signed')), 'amnesia went unnoticed')
  } finally {
    proto.handle = original
  }
})

/** Seeds where a restart may lose the consensus record: always crashes, and never a single validator (none could wait). */
function storeLossOptions (seed: number, guard: boolean): ReturnType<typeof optionsForSeed> {
  const opts = optionsForSeed(seed)
  return { ...opts, validators: opts.validators === 1 ? 4 : opts.validators, crashes: true, storeLoss: true, storeLossGuard: guard }
}

test('a restart that loses the consensus record (a store restored from a snapshot) never double-signs under the restore guard: seeds 7001..7200', () => {
  const failures: string[] = []
  let losses = 0
  for (let seed = 7001; seed <= 7200; seed++) {
    const result = simulate(storeLossOptions(seed, true))
    losses += result.storeLosses
    if (!result.ok) failures.push(`seed ${seed}: ${result.violation}`)
  }
  assert.deepEqual(failures, [])
  assert.ok(losses >= 100, `only ${losses} restarts lost their record`)
})

test('without the restore guard, a lost record double-signs and the simulator catches it', () => {
  const failures: string[] = []
  for (let seed = 7001; seed <= 7200; seed++) {
    const result = simulate(storeLossOptions(seed, false))
    if (!result.ok) failures.push(result.violation ?? '')
  }
  assert.ok(failures.some((f) => f.includes('double-signed')), `no double sign found: ${failures.slice(0, 3).join('; ')}`)
})

/** Seeds with empty blocks off: half without a heartbeat, half with one of 1.5 virtual s. */
function idleOptions (seed: number): ReturnType<typeof optionsForSeed> {
  return { ...optionsForSeed(seed), emptyBlocks: false, emptyBlockInterval: seed % 2 === 0 ? 0 : 1500 }
}

test('with empty blocks off, seeds 5001..5200 keep safety, commit every transaction, and an idle chain grows by heartbeats only', () => {
  const failures: string[] = []
  let transactions = 0
  for (let seed = 5001; seed <= 5200; seed++) {
    const result = simulate(idleOptions(seed))
    transactions += result.transactions
    if (!result.ok) failures.push(`seed ${seed}: ${result.violation}`)
  }
  assert.deepEqual(failures, [])
  assert.ok(transactions > 200 * 5, `the runs carried transactions (${transactions})`)
})

test('the simulator catches an idle chain that keeps committing: an engine that ignores empty blocks off fails', async () => {
  const { TendermintEngine } = await import('../../src/consensus/index.js')
  const proto = TendermintEngine.prototype as unknown as { afterInterval: (now: number, out: unknown[]) => void, startRound: (round: number, out: unknown[]) => void }
  const original = proto.afterInterval
  proto.afterInterval = function (this: typeof proto, _now, out) { this.startRound(0, out) }
  try {
    const failures = []
    for (let seed = 5002; seed <= 5020; seed += 2) { // no heartbeat: any block in the quiet spell is one too many
      const result = simulate(idleOptions(seed))
      if (!result.ok) failures.push(result.violation ?? '')
    }
    assert.ok(failures.length > 0 && failures.every((f) => f.includes('on an idle chain')), `unexpected: ${failures.join(' | ')}`)
  } finally {
    proto.afterInterval = original
  }
})
