import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import pino from 'pino'
import { MAX_BLOCK_TIME_DRIFT_MS } from '../../../src/node/blocks.js'
import { RestoreGuard } from '../../../src/node/restore-guard.js'

const SELF = 'a'.repeat(64)
const OTHER = 'b'.repeat(64)
const START = 1_000_000

/** A stand-in for the chain store's restore mark. */
function mark (restoredAt: number | undefined): { restoredAt: () => number | undefined, signedSinceRestore: () => Promise<void>, cleared: number } {
  const store = {
    cleared: 0,
    restoredAt: () => restoredAt,
    signedSinceRestore: async () => { store.cleared += 1; restoredAt = undefined }
  }
  return store
}

const silent = pino({ level: 'silent' })

describe('RestoreGuard', () => {
  const set = [{ pub_key: SELF, power: 1 }, { pub_key: OTHER, power: 3 }]

  test('a store that was never restored signs at once', () => {
    const guard = new RestoreGuard(mark(undefined), SELF, START, silent)
    assert.equal(guard.abstainAt(5, START - 10_000, set), false)
  })

  test('a restored validator abstains until a height whose previous block is later than its start plus the drift, then clears the mark', () => {
    const store = mark(100)
    const guard = new RestoreGuard(store, SELF, START, silent)
    assert.equal(guard.abstainAt(101, START - 5000, set), true, 'a height that may have begun before the loss')
    assert.equal(guard.abstainAt(140, START + MAX_BLOCK_TIME_DRIFT_MS, set), true, 'a block at the edge of the drift may predate the start')
    assert.equal(store.cleared, 0)
    assert.equal(guard.abstainAt(141, START + MAX_BLOCK_TIME_DRIFT_MS + 1, set), false)
    assert.equal(store.cleared, 1, 'the mark is cleared once it signs')
    assert.equal(guard.abstainAt(142, START - 5000, set), false, 'and it does not abstain again')
  })

  test('a key outside the set has nothing to guard, and the mark stays for when it joins', () => {
    const store = mark(100)
    const guard = new RestoreGuard(store, SELF, START, silent)
    assert.equal(guard.abstainAt(101, START, [{ pub_key: OTHER, power: 3 }]), false)
    assert.equal(store.cleared, 0)
    assert.equal(guard.abstainAt(102, START, set), true)
  })

  test('--restore-guard false: it signs at once and the mark is cleared', () => {
    const store = mark(100)
    const guard = new RestoreGuard(store, SELF, START, silent, { enabled: false })
    assert.equal(guard.abstainAt(101, START - 5000, set), false)
    assert.equal(store.cleared, 1)
  })

  test('a guard that waits twice its margin with nothing committed says how to end the wait', async () => {
    const lines: Array<{ level: number, msg: string }> = []
    const log = pino({ level: 'info' }, { write: (line: string) => { lines.push(JSON.parse(line) as { level: number, msg: string }) } })
    const guard = new RestoreGuard(mark(100), SELF, Date.now(), log, { marginMs: 20 })
    assert.equal(guard.abstainAt(101, Date.now() - 5000, set), true)
    await new Promise((resolve) => setTimeout(resolve, 80))
    const stuck = lines.find((l) => l.msg.startsWith('restored validator still waits'))
    assert.ok(stuck !== undefined && stuck.level === 50 && stuck.msg.includes('--restore-guard false'), JSON.stringify(lines))
    // once it signs, no such line: a second guard that ends its wait in time stays quiet
    lines.length = 0
    const quiet = new RestoreGuard(mark(100), SELF, Date.now(), log, { marginMs: 20 })
    assert.equal(quiet.abstainAt(102, Date.now() + 1000, set), false)
    await new Promise((resolve) => setTimeout(resolve, 80))
    assert.ok(!lines.some((l) => l.msg.startsWith('restored validator still waits')))
    guard.stop()
  })

  test('when the others cannot commit without it, it signs (waiting would stop the chain) and keeps the mark', () => {
    for (const validators of [[{ pub_key: SELF, power: 1 }], [{ pub_key: SELF, power: 1 }, { pub_key: OTHER, power: 2 }]]) {
      const store = mark(100)
      const guard = new RestoreGuard(store, SELF, START, silent)
      assert.equal(guard.abstainAt(101, START, validators), false, `others hold ${validators.length - 1 === 0 ? 'nothing' : '2/3 exactly'}`)
      assert.equal(store.cleared, 0)
    }
  })
})
