/**
 * The committed reads an HTTP edge thread answers itself (src/api/edge/edge-app.ts): the edge app
 * in this process over a real chain store on disk, opened read-only as an edge opens it, and
 * real HTTP requests. The core's private listener is a stand-in here (a plain HTTP server that
 * records what reaches it), so the test can tell what the edge answered from what it handed on;
 * test/integration/http-edge.test.ts runs the same routes end to end through a real node.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { connect, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { createEdgeApp, type EdgeApp } from '../../../src/api/edge/edge-app.js'
import { EDGE_SECRET_HEADER, type EdgeCall, type HttpObservation } from '../../../src/api/edge/protocol.js'
import { StateKeys, addressOf, encodePayload, formatTimestamp, signTx, type Block, type Transaction } from '../../../src/chain/index.js'
import { readEnv } from '../../../src/node/index.js'
import { ChainReader, ChainStore } from '../../../src/storage/index.js'
import { ALICE, BOB, CAROL, aliceKey } from '../../helpers/fixtures.js'

function tx (id: string, to: string): Transaction {
  return signTx({ id, type: 'TRANSFER', from: ALICE, to, amount: 1, fee: 1000, payload: encodePayload({}), timestamp: formatTimestamp(0) }, aliceKey.secretKey)
}

function block (height: number, txs: Transaction[]): Block {
  return {
    header: { chain_id: 'c', height, time: height * 1000, prev_hash: `p${height}`, tx_root: 't', state_root: `r${height}`, proposer: CAROL, last_commit_hash: '' },
    txs,
    last_commit: null
  }
}

interface Answer { status: number, headers: Headers, json: unknown, text: string }

describe('committed reads answered on an HTTP edge thread', () => {
  let dir = ''
  let store: ChainStore
  let reader: ChainReader
  let core: Server
  let edge: EdgeApp
  let base = ''
  let refusedFor: number | undefined
  const reachedCore: IncomingMessage[] = []
  const answeredFor: string[] = []
  const calls: EdgeCall[] = []
  const observed: HttpObservation[] = []

  const get = async (path: string, method = 'GET'): Promise<Answer> => {
    const res = await fetch(`${base}${path}`, { method })
    const text = await res.text()
    let json: unknown
    try { json = JSON.parse(text) } catch { json = undefined }
    return { status: res.status, headers: res.headers, json, text }
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kith-edge-reads-'))
    store = ChainStore.open(dir)
    await store.init({ chainId: 'c', genesisHash: 'g', genesisTime: 0, build: () => ({ state: new Map([[StateKeys.balance(ALICE), 10_000]]), stateRoot: 'r0' }) })
    await store.commitBlock({ block: block(1, [tx('t1', BOB)]), hash: 'b1', commit: null, writes: new Map([[StateKeys.balance(ALICE), 8_999], [StateKeys.txSeen('t1'), 1]]), stateRoot: 'r1', removePending: [] })
    reader = ChainReader.openReadOnly(dir)
    // stand-in for the core's private listener: records what the edge hands on
    core = createServer((req, res) => {
      reachedCore.push(req)
      res.writeHead(200, { 'Content-Type': 'application/json' })
      res.end(JSON.stringify({ answered_by: 'core' }))
    })
    await new Promise<void>((resolve) => core.listen(0, '127.0.0.1', resolve))
    edge = createEdgeApp({
      env: { ...readEnv({}), rateLimitRps: 100 },
      corePort: (core.address() as AddressInfo).port,
      secret: 's3cret',
      maxQueuedBytes: 1 << 20,
      logger: pino({ level: 'silent' }),
      calls: ['submit-tx'],
      call: async (call) => { calls.push(call); return null },
      observe: (o) => observed.push(o),
      chain: reader,
      readAnswered: (ip) => answeredFor.push(ip),
      readRefusedFor: () => refusedFor
    })
    base = `http://127.0.0.1:${await edge.listen('127.0.0.1', 0)}`
  })

  after(async () => {
    await edge.stop()
    await new Promise<void>((resolve) => core.close(() => resolve()))
    await reader.close()
    await store.close()
    await rm(dir, { recursive: true, force: true })
  })

  test('a confirmed transaction, an address and a block are answered without the core, and each is drawn on the core\'s bucket', async () => {
    const before = reachedCore.length
    const drawn = answeredFor.length
    const found = await get('/api/tx/t1')
    assert.equal(found.status, 200)
    assert.equal((found.json as { block_index: number }).block_index, 1)
    const address = await get(`/api/address/${addressOf(ALICE)}?limit=5`)
    assert.equal(address.status, 200)
    const summary = address.json as { balance_ut: number, tx_count: number, transactions: Array<{ id: string }> }
    assert.equal(summary.balance_ut, 8_999)
    assert.equal(summary.tx_count, 1)
    assert.deepEqual(summary.transactions.map((t) => t.id), ['t1'])
    const latest = await get('/api/blocks/latest')
    assert.equal(latest.status, 200)
    assert.deepEqual((latest.json as { tx_ids: string[] }).tx_ids, ['t1'])
    assert.equal(reachedCore.length, before, 'nothing reached the core')
    assert.deepEqual(answeredFor.slice(drawn), ['127.0.0.1', '127.0.0.1', '127.0.0.1'])
    assert.deepEqual(calls, [], 'a read makes no call of the core: it never waits for the core\'s turn')
    // counted by route template, never by the concrete path
    assert.deepEqual(observed.slice(-3).map((o) => [o.route, o.status]), [['/api/tx/{id}', 200], ['/api/address/{pubkey}', 200], ['/api/blocks/{height}', 200]])
  })

  test('a transaction no committed block holds goes on to the core, with the edge secret, and is counted and drawn there only', async () => {
    const before = reachedCore.length
    const countedBefore = observed.length
    const drawn = answeredFor.length
    const answer = await get('/api/tx/waiting-in-the-mempool')
    assert.deepEqual(answer.json, { answered_by: 'core' })
    assert.equal(reachedCore.length, before + 1)
    const forwarded = reachedCore.at(-1) as IncomingMessage
    assert.equal(forwarded.url, '/api/tx/waiting-in-the-mempool')
    assert.equal(forwarded.headers[EDGE_SECRET_HEADER], 's3cret')
    assert.equal(observed.length, countedBefore)
    assert.equal(answeredFor.length, drawn)
  })

  test('a block committed since the last request is seen by the next one', async () => {
    assert.equal((await get('/api/blocks/2')).status, 404)
    await store.commitBlock({ block: block(2, [tx('t2', BOB)]), hash: 'b2', commit: null, writes: new Map([[StateKeys.balance(ALICE), 7_998], [StateKeys.txSeen('t2'), 2]]), stateRoot: 'r2', removePending: [] })
    assert.equal((await get('/api/blocks/latest')).json !== undefined && ((await get('/api/blocks/latest')).json as { height: number }).height, 2)
    assert.equal(((await get('/api/tx/t2')).json as { block_index: number }).block_index, 2)
    assert.equal(((await get(`/api/address/${ALICE}`)).json as { balance_ut: number }).balance_ut, 7_998)
  })

  test('refusals are the core\'s: bad input 400, unknown block 404, the bucket\'s 429 with Retry-After, all JSON', async () => {
    const bad = await get('/api/address/not-a-key')
    assert.equal(bad.status, 400)
    assert.match((bad.json as { error: string }).error, /neither an Ed25519 pubkey/)
    const missing = await get('/api/blocks/99')
    assert.equal(missing.status, 404)
    assert.deepEqual(missing.json, { error: 'no block at height 99' })
    const badHeight = await get('/api/blocks/minus-one')
    assert.equal(badHeight.status, 400)
    // once the core said this address's bucket is empty, every read is refused without touching the store or the core
    refusedFor = 3
    const drawn = answeredFor.length
    try {
      const refused = await get('/api/tx/t1')
      assert.equal(refused.status, 429)
      assert.equal(refused.headers.get('retry-after'), '3')
      assert.match((refused.json as { error: string }).error, /too many requests/)
      assert.equal(answeredFor.length, drawn)
    } finally {
      refusedFor = undefined
    }
    assert.equal((await get('/api/tx/t1')).status, 200)
  })

  test('garbage and connections cut mid-request (a read, a miss on its way to the core) leave the edge serving', async () => {
    const port = Number(new URL(base).port)
    const exchange = async (text: string, cut: boolean): Promise<string> => await new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(text)
        if (cut) { socket.destroy(); resolve('') }
      })
      let got = ''
      socket.on('data', (chunk: Buffer) => { got += chunk.toString('latin1') })
      socket.on('close', () => resolve(got))
      socket.on('error', () => resolve(got))
      setTimeout(() => { socket.destroy(); resolve(got) }, 2000)
    })
    assert.match(await exchange('GET /api/blocks/1 HTTP/1.1\r\nHost: x\r\n', true), /^$/)
    assert.match(await exchange('GET /api/tx/never-committed HTTP/1.1\r\nHost: x\r\n\r\n', true), /^$/)
    const garbage = await exchange('\u0000\u0001 nonsense\r\n\r\n', false)
    assert.match(garbage, /^HTTP\/1\.1 400/)
    assert.match(garbage, /"error"/)
    for (let i = 0; i < 20; i++) await exchange(`GET /api/address/${ALICE} HTTP/1.1\r\nHost: x\r\n`, true)
    assert.equal((await get('/api/blocks/1')).status, 200)
    assert.equal((await get('/api/tx/t1')).status, 200)
  })

  test('HEAD is answered with the GET\'s headers and no body; other methods and paths go on to the core', async () => {
    const head = await get('/api/blocks/1', 'HEAD')
    assert.equal(head.status, 200)
    assert.equal(head.text, '')
    const before = reachedCore.length
    await get('/api/tx/t1', 'DELETE')
    await get('/api/netstats')
    assert.deepEqual(reachedCore.slice(before).map((req) => `${req.method ?? ''} ${req.url ?? ''}`), ['DELETE /api/tx/t1', 'GET /api/netstats'])
  })
})
