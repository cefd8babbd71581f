/**
 * Hostile input through the public interface: every operation of the node's own OpenAPI
 * document and every WebSocket operation get generated bad input (test/helpers/fuzz.ts). The
 * node must answer each with a 4xx `{"error": string}` (never a 5xx, never a hang), keep
 * running and keep answering. A bounded run: KITH_FUZZ_RUNS (default 20 requests per operation,
 * ten times that over the WebSocket) and KITH_FUZZ_SEED (random; printed on failure) tune it;
 * `npm run chaos` runs the same longer (test/chaos/fuzz.test.ts).
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { fuzzHttp, fuzzOversized, fuzzSettings, fuzzWebSocket, startFuzzNode } from '../helpers/fuzz-run.js'
import { http, stopAllNodes, type NodeProcess } from '../helpers/node-process.js'
import { BUILTIN_NAMES } from '../helpers/fuzz.js'

const settings = fuzzSettings(20)

describe('fuzz: hostile input at the edge', () => {
  let node: NodeProcess
  before(async () => {
    node = await startFuzzNode()
    console.log(`fuzz seed ${settings.seed}, ${settings.runs} runs (KITH_FUZZ_SEED=${settings.seed} replays)`)
  })
  after(async () => { await stopAllNodes() })

  test('built-in property names are plain unknown names: 404 for assets, 400 for ids, never 500', async () => {
    for (const name of BUILTIN_NAMES) {
      for (const path of [`/swagger/assets/${name}`, `/explorer/${name}`]) {
        const res = await http(node.url, 'GET', path)
        assert.equal(res.status, 404, `${path}: ${res.text}`)
        assert.deepEqual(Object.keys(res.json as object), ['error'], path)
      }
    }
    const known = await http(node.url, 'GET', '/swagger/assets/swagger-ui.css')
    assert.equal(known.status, 200, 'a real asset is still served')
    // a body cap looked up by path must not find Object's members either
    const proto = await http(node.url, 'POST', '/__proto__', { body: {} })
    assert.equal(proto.status, 404, proto.text)
  })

  test('a member whose length is an object without a callable toString (it threw inside zod\'s checks) is a 400, never 500', async () => {
    // found by this fuzzer (KITH_FUZZ_SEED=544618202)
    const hostile = { length: { toString: 'y' } }
    for (const [path, body] of [['/api/onboarding/claim', { pub_key: hostile }], ['/api/tx', { id: hostile }], ['/relay/broadcast', { ciphertext: hostile }]] as const) {
      const res = await http(node.url, 'POST', path, { body })
      assert.equal(res.status, 400, `${path}: ${res.text}`)
      assert.deepEqual(Object.keys(res.json as object), ['error'], path)
    }
  })

  test('HEAD /api/events answers the stream\'s headers and ends (it opened a stream that never ended)', async () => {
    // found by the chaos fuzzer (KITH_FUZZ_SEED=309940201)
    const res = await fetch(`${node.url}/api/events?topics=blocks`, { method: 'HEAD', signal: AbortSignal.timeout(5000) })
    assert.equal(res.status, 200)
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/)
  })

  test('every HTTP operation: no 5xx, errors as {"error": string}, no hang, the node keeps answering', async () => {
    const sent = await fuzzHttp(node, settings)
    console.log(`fuzz: ${sent} requests`)
  })

  test('bodies far over the cap are refused 413 on every operation that takes one', async () => {
    await fuzzOversized(node)
  })

  test('every WebSocket operation: answered or closed, failures 4xx, the node keeps answering', async () => {
    await fuzzWebSocket(node, settings)
  })
})
