/** The driver's propose timeout waits for a proposal whose check is under way, up to one more timeout. */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import pino from 'pino'
import type { ConsensusEffect, ConsensusEngine, ConsensusInput } from '../../../src/consensus/index.js'
import { ConsensusDriver, type DriverHost } from '../../../src/node/consensus-driver.js'

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

/** An engine that schedules one propose timeout at start and records what reaches it. */
class RecordingEngine implements ConsensusEngine {
  readonly seen: string[] = []
  constructor (private readonly delayMs: number) {}
  handle (input: ConsensusInput): ConsensusEffect[] {
    this.seen.push(input.type)
    if (input.type === 'new-height') return [{ type: 'schedule-timeout', height: 1, round: 0, step: 'propose', delayMs: this.delayMs }]
    return []
  }
}

function host (proposalCheck: DriverHost['proposalCheck']): DriverHost {
  return {
    now: () => Date.now(),
    buildBlock: () => { throw new Error('not used') },
    persist: async () => {},
    broadcastProposal: () => {},
    broadcastVote: () => {},
    commitBlock: async () => {},
    nextHeightInput: () => ({ type: 'new-height', height: 1, now: Date.now(), prevBlockTime: 0, validators: [] }),
    ...(proposalCheck !== undefined ? { proposalCheck } : {})
  }
}

async function until (condition: () => boolean): Promise<void> {
  while (!condition()) await sleep(2)
}

describe('ConsensusDriver propose timeout', () => {
  test('without a check under way the timeout reaches the engine', async () => {
    const engine = new RecordingEngine(5)
    const driver = new ConsensusDriver(engine, host(() => undefined), pino({ level: 'silent' }))
    driver.start()
    await until(() => engine.seen.includes('timeout'))
    await driver.stop()
  })

  test('a check under way when the timeout fires is waited for: the timeout follows its end', async () => {
    // the cap (one more timeout) is long, so only the check's end can release the timeout here
    const engine = new RecordingEngine(500)
    const events: string[] = []
    let release = (): void => {}
    const check = new Promise<void>((resolve) => { release = resolve })
    const asked: Array<[number, number]> = []
    const driver = new ConsensusDriver(engine, host((height, round) => { asked.push([height, round]); return check }), pino({ level: 'silent' }))
    driver.start()
    await until(() => asked.length > 0)
    await sleep(20)
    assert.ok(!engine.seen.includes('timeout'), 'the timeout waits while the check runs')
    events.push('check ended')
    release()
    await until(() => engine.seen.includes('timeout'))
    events.push('timeout')
    assert.deepEqual(events, ['check ended', 'timeout'])
    assert.deepEqual(asked, [[1, 0]])
    await driver.stop()
  })

  test('a check that never ends delays the timeout by one more timeout, no longer', async () => {
    const engine = new RecordingEngine(5)
    const never = new Promise<void>(() => {})
    const driver = new ConsensusDriver(engine, host(() => never), pino({ level: 'silent' }))
    driver.start()
    await until(() => engine.seen.includes('timeout'))
    await driver.stop()
  })

  test('stop() while waiting for a check: no timeout reaches the engine afterwards', async () => {
    const engine = new RecordingEngine(5)
    let release = (): void => {}
    const check = new Promise<void>((resolve) => { release = resolve })
    let asked = false
    const driver = new ConsensusDriver(engine, host(() => { asked = true; return check }), pino({ level: 'silent' }))
    driver.start()
    await until(() => asked)
    await driver.stop()
    release()
    await sleep(20)
    assert.ok(!engine.seen.includes('timeout'))
  })
})
