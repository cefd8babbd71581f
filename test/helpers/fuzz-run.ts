/**
 * The fuzzing run shared by test/integration/fuzz.test.ts (bounded, in `npm test`) and
 * test/chaos/fuzz.test.ts (longer, in `npm run chaos`): one real node with onboarding, relay and
 * feed on, every operation of its own OpenAPI document and every WebSocket operation hit with
 * generated bad input. Seeded: KITH_FUZZ_SEED replays a run; every failure names its seed.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import WebSocket from 'ws'
import { newAccount } from '../../src/client/index.js'
import { seedOf, toHex } from '../../src/crypto/index.js'
import { answerFault, operationsOf, oversizedRequest, requestsFor, sendRaw, wsMessages, type Operation } from './fuzz.js'
import { kithInit, startNode, type NodeProcess } from './node-process.js'

/** Over every body cap, the upload cap of /feed/publish (16 MiB by default) included. */
const OVERSIZED_BYTES = 24 * 1024 * 1024

/** An answer to bad input must come within this; a hang fails the run. */
const ANSWER_TIMEOUT_MS = 10_000

/**
 * 5xx answers that depend on the node's configuration, not on the input, and so are expected
 * for any input: the update check has no release source configured here (503). Nothing else
 * may answer 5xx to bad input.
 */
const CONFIG_5XX: Readonly<Record<string, readonly number[]>> = { 'GET /api/update-check': [503] }

export interface FuzzSettings {
  /** generated requests per operation; ten times as many WebSocket messages */
  runs: number
  seed: number
}

export function fuzzSettings (defaultRuns: number): FuzzSettings {
  const seedText = process.env.KITH_FUZZ_SEED
  const seed = seedText !== undefined && seedText !== '' ? Number(seedText) : Math.floor(Math.random() * 2 ** 31)
  if (!Number.isSafeInteger(seed)) throw new Error(`KITH_FUZZ_SEED must be an integer, got ${seedText ?? ''}`)
  const runsText = process.env.KITH_FUZZ_RUNS
  const runs = runsText !== undefined && runsText !== '' ? Number(runsText) : defaultRuns
  if (!Number.isSafeInteger(runs) || runs < 1) throw new Error(`KITH_FUZZ_RUNS must be a positive integer, got ${runsText ?? ''}`)
  return { runs, seed }
}

/** The node under fuzz: onboarding (a funded faucet), relay, feed, real-time; private mode off. */
export async function startFuzzNode (): Promise<NodeProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'kith-fuzz-'))
  const home = join(dir, 'home')
  const faucet = newAccount()
  await kithInit(home, { alloc: [{ pub: faucet.pub, amountUt: 1_000_000_000 }] })
  await writeFile(join(home, 'faucet.json'), JSON.stringify({ pub_key: faucet.pub, seed: toHex(seedOf(faucet.keyPair)) }))
  const config = JSON.parse(await readFile(join(home, 'config.json'), 'utf8')) as Record<string, unknown>
  await writeFile(join(home, 'config.json'), JSON.stringify({
    ...config,
    p2p_listen: ['/ip4/127.0.0.1/tcp/0'],
    onboarding: { key_file: 'faucet.json', enabled: true, amount_ut: 20_000, per_ip_interval_s: 0, per_key_interval_s: 0 }
  }))
  // many messages a second: the fuzzer should reach the handlers, not the rate limit
  return await startNode({ home, blockIntervalMs: 200, env: { SVC_WS_MESSAGES_PER_SECOND: '100000' } })
}

/** Runs `check` and says which seed replays it when it fails. */
async function replayable (what: string, seed: number, check: () => Promise<void>): Promise<void> {
  try {
    await check()
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    // fast-check keeps the property's own failure as the cause
    const cause = err instanceof Error && err.cause instanceof Error ? `\n${err.cause.message}` : ''
    throw new Error(`${what} failed; replay with KITH_FUZZ_SEED=${seed}\n${message}${cause}`, { cause: err })
  }
}

async function nodeAnswers (node: NodeProcess): Promise<void> {
  assert.equal(node.isRunning, true, 'the node process is still running')
  const res = await fetch(`${node.url}/api/netstats`, { signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS) })
  assert.equal(res.status, 200, 'GET /api/netstats still answers')
  await res.arrayBuffer()
}

export async function openApiOperations (node: NodeProcess): Promise<{ operations: Operation[], schemas: ReturnType<typeof operationsOf>['schemas'] }> {
  const res = await fetch(`${node.url}/swagger/openapi.json`)
  assert.equal(res.status, 200)
  return operationsOf(await res.json())
}

/**
 * Every operation of the document, `runs` generated requests each (seed + the operation's
 * index: each replays alone). After every request: no 5xx beyond CONFIG_5XX, errors as
 * `{"error": string}`, an answer within the timeout, the node still answering.
 */
export async function fuzzHttp (node: NodeProcess, settings: FuzzSettings): Promise<number> {
  const { operations, schemas } = await openApiOperations(node)
  assert.ok(operations.length >= 30, `the document lists the node's routes (${operations.length})`)
  let sent = 0
  for (const [index, op] of operations.entries()) {
    const seed = settings.seed + index
    const allowed = CONFIG_5XX[`${op.method} ${op.path}`] ?? []
    await replayable(`${op.method} ${op.path}`, settings.seed, async () => {
      await fc.assert(fc.asyncProperty(requestsFor(op, schemas), async (req) => {
        const answer = await sendRaw(node.port, req, ANSWER_TIMEOUT_MS)
        sent++
        // HEAD is GET without the body: the same configuration 5xx
        const sameOperation = req.method === op.method || (req.method === 'HEAD' && op.method === 'GET')
        const fault = answerFault(answer, req.method, sameOperation ? allowed : [])
        assert.equal(fault, undefined, `${req.method} ${req.target.slice(0, 300)} (${req.framing}, ${req.body?.length ?? 0} body bytes): ${fault ?? ''}`)
        await nodeAnswers(node)
      }), { seed, numRuns: settings.runs, endOnFailure: true })
    })
  }
  return sent
}

/** Bodies far over the cap, sent chunked, to every operation that takes one: 413, not a crash. */
export async function fuzzOversized (node: NodeProcess): Promise<void> {
  const { operations } = await openApiOperations(node)
  for (const op of operations.filter((o) => o.method !== 'GET')) {
    const path = op.path.replace(/\{[^}]+\}/g, 'x')
    const answer = await sendRaw(node.port, oversizedRequest(path, OVERSIZED_BYTES), ANSWER_TIMEOUT_MS)
    assert.equal(answerFault(answer, op.method), undefined, `${op.method} ${path} with ${OVERSIZED_BYTES} bytes`)
    assert.equal(answer.status, 413, `${op.method} ${path} with ${OVERSIZED_BYTES} bytes: ${answer.body.toString('utf8')}`)
  }
  await nodeAnswers(node)
}

interface WsSession {
  ws: WebSocket
  received: Array<Record<string, unknown>>
  /** received[0 .. checked) passed checkFailures */
  checked: number
  closed: boolean
  wake: () => void
}

/** Failures the node sent (`error`, a rejected `submit_ack`): a string, a 4xx code, never "internal error". */
function checkFailures (session: WsSession, shown: string): void {
  for (const m of session.received.slice(session.checked)) {
    if (m.error === undefined && m.code === undefined) continue
    assert.equal(typeof m.error, 'string', `${shown}: error member is a string: ${JSON.stringify(m)}`)
    assert.notEqual(m.error, 'internal error', `${shown}: the node failed inside: ${JSON.stringify(m)}`)
    assert.ok(typeof m.code === 'number' && m.code >= 400 && m.code < 500, `${shown}: a 4xx code: ${JSON.stringify(m)}`)
  }
  session.checked = session.received.length
}

async function openWs (node: NodeProcess): Promise<WsSession> {
  const ws = new WebSocket(`${node.url.replace(/^http/, 'ws')}/api/ws`)
  const session: WsSession = { ws, received: [], checked: 0, closed: false, wake: () => {} }
  ws.on('message', (data, isBinary) => {
    assert.equal(isBinary, false, 'the node sends text frames only')
    session.received.push(JSON.parse(String(data)) as Record<string, unknown>)
    session.wake()
  })
  ws.on('close', () => { session.closed = true; session.wake() })
  ws.on('error', () => {})
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('error', reject)
  })
  return session
}

async function until (session: WsSession, done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + ANSWER_TIMEOUT_MS
  while (!done()) {
    const left = deadline - Date.now()
    if (left <= 0) throw new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms: ${what}`)
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, left)
      session.wake = () => { clearTimeout(timer); resolve() }
    })
  }
}

/**
 * `runs` × 10 generated messages over WebSockets: after each, a ping with a fresh `req` must be
 * answered (or the node must have closed the socket: a new one is opened). Every `error` the
 * node sends is a string and never "internal error"; the node still answers HTTP.
 */
export async function fuzzWebSocket (node: NodeProcess, settings: FuzzSettings): Promise<void> {
  const { schemas } = await openApiOperations(node)
  let session = await openWs(node)
  let probe = 0
  try {
    await replayable('WebSocket', settings.seed, async () => {
      await fc.assert(fc.asyncProperty(wsMessages(schemas), async (message) => {
        if (session.closed) session = await openWs(node)
        if ('binary' in message) session.ws.send(message.binary, { binary: true })
        else session.ws.send(message.text)
        const req = `probe-${++probe}`
        session.ws.send(JSON.stringify({ op: 'ping', req }))
        const shown = 'binary' in message ? `binary ${message.binary.toString('hex')}` : message.text.slice(0, 300)
        await until(session, () => session.closed || session.received.some((m) => m.event === 'pong' && m.req === req), shown)
        // everything since the last check: a submit_ack may come after the pong
        checkFailures(session, shown)
        await nodeAnswers(node)
      }), { seed: settings.seed, numRuns: settings.runs * 10, endOnFailure: true })
    })
  } finally {
    session.ws.terminate()
  }
}
