/**
 * Chaos: the edge fuzzer of test/integration/fuzz.test.ts run longer (KITH_FUZZ_RUNS, default
 * 400 requests per operation and ten times that over the WebSocket: about three minutes). Same
 * assertions: no 5xx, errors as {"error": string}, no hang, no crash, the node keeps answering.
 */
import { after, before, describe, test } from 'node:test'
import { fuzzHttp, fuzzOversized, fuzzSettings, fuzzWebSocket, startFuzzNode } from '../helpers/fuzz-run.js'
import { stopAllNodes, type NodeProcess } from '../helpers/node-process.js'

const settings = fuzzSettings(400)

describe('chaos: fuzzing the edge at length', () => {
  let node: NodeProcess
  before(async () => {
    node = await startFuzzNode()
    console.log(`fuzz seed ${settings.seed}, ${settings.runs} runs (KITH_FUZZ_SEED=${settings.seed} replays)`)
  })
  after(async () => { await stopAllNodes() })

  test('every HTTP operation', { timeout: 20 * 60_000 }, async () => {
    console.log(`fuzz: ${await fuzzHttp(node, settings)} requests`)
    await fuzzOversized(node)
  })

  test('every WebSocket operation', { timeout: 10 * 60_000 }, async () => {
    await fuzzWebSocket(node, settings)
  })
})
