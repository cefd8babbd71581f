/**
 * The chain API end to end, against real `bin/kith` processes: the transfer user story,
 * address history, discovery routes, the OpenAPI document, error statuses and bodies, the
 * three access modes, the per-IP rate limit and a clean restart on the same home.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { request as httpRequest } from 'node:http'
import { callContract, followTx, newAccount, postActionTx, transfer, type Transaction } from '../../src/client/index.js'
import { errorMessage, http, startNode, stopAllNodes, waitFor, type HttpResult, type NodeProcess } from '../helpers/node-process.js'

const T = 1_000_000
const FUNDED_UT = 10_000 * T
const HEX64 = /^[0-9a-f]{64}$/
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/

interface AddressTx {
  id: string
  type: string
  from: string
  to?: string
  amount_ut: number
  fee_ut: number
  time: string
  block_index: number
}

interface AddressSummary {
  pub_key: string
  address: string
  balance_ut: number
  balance: string
  transactions: AddressTx[]
  tx_count: number
  has_more: boolean
}

interface NetStats {
  height: number
  total_txs: number
  supply: number
  validator_count: number
}

function asRecord (value: unknown): Record<string, unknown> {
  assert.ok(value !== null && typeof value === 'object' && !Array.isArray(value), `expected a JSON object, got ${JSON.stringify(value)}`)
  return value as Record<string, unknown>
}

async function getOk<T> (node: NodeProcess, path: string, headers?: Record<string, string>): Promise<T> {
  const res = await http(node.url, 'GET', path, { headers })
  assert.equal(res.status, 200, `GET ${path}: ${res.status} ${res.text}`)
  return res.json as T
}

async function addressOf (node: NodeProcess, pubOrAddress: string, limit?: number): Promise<AddressSummary> {
  return await getOk<AddressSummary>(node, `/api/address/${pubOrAddress}${limit === undefined ? '' : `?limit=${limit}`}`)
}

async function submit (node: NodeProcess, tx: unknown, headers?: Record<string, string>): Promise<HttpResult> {
  return await http(node.url, 'POST', '/api/tx', { body: tx, headers })
}

async function submitAccepted (node: NodeProcess, tx: Transaction): Promise<void> {
  const res = await submit(node, tx)
  assert.equal(res.status, 200, `submit ${tx.id}: ${res.status} ${res.text}`)
  assert.deepEqual(res.json, { id: tx.id, status: 'accepted' })
}

async function confirmed (node: NodeProcess, id: string): Promise<Record<string, unknown>> {
  return await node.client.waitForConfirmation(id, { timeoutMs: 15_000, intervalMs: 50 })
}

/** Asserts a 4xx/5xx answer with exactly `{"error": string}` and returns the message. */
function assertError (res: HttpResult, status: number, mentions?: RegExp): string {
  assert.equal(res.status, status, `expected ${status}, got ${res.status} ${res.text}`)
  assert.match(res.headers.get('content-type') ?? '', /application\/json/)
  const message = errorMessage(res)
  if (mentions !== undefined) assert.match(message, mentions)
  return message
}

after(async () => { await stopAllNodes() })

describe('chain API on a public node', () => {
  let node: NodeProcess
  const alice = newAccount()
  const bob = newAccount()
  const carol = newAccount()
  const dave = newAccount()
  const erin = newAccount()
  const funded = [alice, bob, carol, dave, erin]

  after(async () => { await stopAllNodes() })

  before(async () => {
    node = await startNode({
      chainId: 'kith-api-test',
      alloc: funded.map((a) => ({ pub: a.pub, amountUt: FUNDED_UT })),
      blockIntervalMs: 150
    })
  })

  test('a TRANSFER to a new account is accepted, confirmed with full detail, and moves both balances', async () => {
    const recipient = newAccount()
    const tx = transfer(alice, recipient.pub, 1_500_000, { fee: 1000, memo: 'lunch' })
    await submitAccepted(node, tx)

    const detail = await confirmed(node, tx.id)
    assert.equal(detail.id, tx.id)
    assert.equal(detail.type, 'TRANSFER')
    assert.equal(detail.from, alice.pub)
    assert.equal(detail.from_addr, alice.address)
    assert.equal(detail.to, recipient.pub)
    assert.equal(detail.to_addr, recipient.address)
    assert.match(alice.address, /^kith1/)
    assert.equal(detail.amount_ut, 1_500_000)
    assert.equal(detail.amount, '1.5 T')
    assert.equal(detail.fee_ut, 1000)
    assert.equal(detail.fee, '0.001 T')
    assert.equal(detail.memo, 'lunch')
    assert.deepEqual(detail.payload, { memo: 'lunch' })
    assert.equal(detail.time, tx.timestamp)
    assert.ok(Number.isInteger(detail.block_index) && (detail.block_index as number) >= 1, `block_index ${String(detail.block_index)}`)
    assert.match(String(detail.block_hash), HEX64)
    assert.match(String(detail.block_time), ISO_UTC)
    assert.ok(Date.parse(String(detail.block_time)) >= Date.parse(tx.timestamp), 'block time is not before the transaction time')
    assert.equal(detail.signature_hex, Buffer.from(tx.signature, 'base64').toString('hex'))

    const sender = await addressOf(node, alice.pub)
    assert.equal(sender.balance_ut, FUNDED_UT - 1_500_000 - 1000)
    assert.equal(sender.balance, '9998.499 T')
    assert.equal(sender.pub_key, alice.pub)
    assert.equal(sender.address, alice.address)
    assert.equal(sender.tx_count, 1)

    const receiver = await addressOf(node, recipient.pub)
    assert.equal(receiver.balance_ut, 1_500_000)
    assert.equal(receiver.balance, '1.5 T')
    assert.equal(receiver.tx_count, 1)
    assert.equal(receiver.has_more, false)
    assert.deepEqual(receiver.transactions, [{
      id: tx.id,
      type: 'TRANSFER',
      from: alice.pub,
      to: recipient.pub,
      amount_ut: 1_500_000,
      fee_ut: 1000,
      time: tx.timestamp,
      block_index: detail.block_index
    }])

    // the address form finds the same account
    const byAddress = await addressOf(node, recipient.address)
    assert.deepEqual(byAddress, receiver)
    const senderByAddress = await addressOf(node, alice.address)
    assert.equal(senderByAddress.balance_ut, sender.balance_ut)
  })

  test('address history is newest first and honours limit, with tx_count and has_more', async () => {
    const recipient = newAccount()
    const first = transfer(bob, recipient.pub, 10_000)
    await submitAccepted(node, first)
    await confirmed(node, first.id)
    const second = transfer(bob, recipient.pub, 20_000)
    const third = transfer(bob, recipient.pub, 30_000, { fee: 1500 })
    await submitAccepted(node, second)
    await submitAccepted(node, third)
    await confirmed(node, second.id)
    await confirmed(node, third.id)

    const all = await addressOf(node, recipient.pub)
    assert.deepEqual(all.transactions.map((t) => t.id), [third.id, second.id, first.id])
    assert.equal(all.tx_count, 3)
    assert.equal(all.has_more, false)
    assert.equal(all.balance_ut, 60_000)
    const heights = all.transactions.map((t) => t.block_index)
    assert.ok(heights[0] >= heights[1] && heights[1] > heights[2], `block indexes newest first: ${heights.join(',')}`)

    const limited = await addressOf(node, recipient.pub, 2)
    assert.deepEqual(limited.transactions.map((t) => t.id), [third.id, second.id])
    assert.equal(limited.tx_count, 3)
    assert.equal(limited.has_more, true)

    const exact = await addressOf(node, recipient.pub, 3)
    assert.equal(exact.has_more, false)

    const sender = await addressOf(node, bob.pub, 1)
    assert.deepEqual(sender.transactions.map((t) => t.id), [third.id])
    assert.equal(sender.tx_count, 3)
    assert.equal(sender.has_more, true)
    assert.equal(sender.balance_ut, FUNDED_UT - 60_000 - 3500)

    const unknown = await addressOf(node, newAccount().pub)
    assert.deepEqual({ balance_ut: unknown.balance_ut, tx_count: unknown.tx_count, has_more: unknown.has_more, transactions: unknown.transactions },
      { balance_ut: 0, tx_count: 0, has_more: false, transactions: [] })
  })

  test('netstats, network-info, validators, peers and well-known-version describe the chain', async () => {
    const stats = await waitFor(async () => {
      const s = await getOk<NetStats>(node, '/api/netstats')
      return s.height > 0 ? s : undefined
    }, 10_000, { message: 'height above 0' })
    assert.ok(Number.isInteger(stats.height))
    assert.equal(stats.supply, funded.length * FUNDED_UT, 'supply is the genesis allocation (no block reward)')
    assert.equal(stats.validator_count, 1)
    assert.ok(Number.isInteger(stats.total_txs) && stats.total_txs >= 0)

    const tx = transfer(erin, newAccount().pub, 1234)
    await submitAccepted(node, tx)
    const detail = await confirmed(node, tx.id)
    const afterStats = await getOk<NetStats>(node, '/api/netstats')
    assert.equal(afterStats.total_txs, stats.total_txs + 1)
    assert.ok(afterStats.height >= (detail.block_index as number))
    assert.equal(afterStats.supply, stats.supply)

    const info = asRecord(await getOk(node, '/api/network-info'))
    assert.equal(info.chain_id, 'kith-api-test')
    assert.match(String(info.genesis_hash), HEX64)
    assert.ok(Array.isArray(info.peers))
    assert.ok(Array.isArray(info.validators))
    assert.ok((info.validators as Array<Record<string, unknown>>).some((v) => v.pub_key === node.validatorPub))
    assert.equal(typeof info.contracts, 'object')

    const validators = asRecord(await getOk(node, '/api/validators'))
    const list = validators.validators as Array<Record<string, unknown>>
    assert.equal(list.length, 1)
    assert.equal(list[0].pub_key, node.validatorPub)
    assert.match(String(list[0].address), /^kith1/)

    const peers = asRecord(await getOk(node, '/api/peers'))
    assert.ok(Array.isArray(peers.peers))

    const version = asRecord(await getOk(node, '/api/well-known-version'))
    assert.equal(version.protocol_version, 1)
    assert.equal(typeof version.node_version, 'string')
    assert.ok(Array.isArray(version.features))
    assert.equal(version.chain_id, 'kith-api-test')
  })

  test('GET /swagger/openapi.json is an OpenAPI 3.1 document of the routes', async () => {
    const doc = asRecord(await getOk(node, '/swagger/openapi.json'))
    assert.match(String(doc.openapi), /^3\.1\./)
    const info = asRecord(doc.info)
    assert.equal(typeof info.title, 'string')
    assert.equal(typeof info.version, 'string')
    const paths = asRecord(doc.paths)
    const expected: Array<[string, string]> = [
      ['/api/tx', 'post'], ['/api/tx/{id}', 'get'], ['/api/address/{pubkey}', 'get'], ['/api/netstats', 'get'],
      ['/api/network-info', 'get'], ['/api/validators', 'get'], ['/api/peers', 'get'], ['/api/well-known-version', 'get']
    ]
    for (const [path, method] of expected) {
      const item = asRecord(paths[path])
      const op = asRecord(item[method])
      assert.ok(op.responses !== undefined, `${method} ${path} has responses`)
    }
    const submitOp = asRecord(asRecord(paths['/api/tx']).post)
    assert.ok(submitOp.requestBody !== undefined, 'POST /api/tx documents its body')
    const txParams = asRecord(asRecord(paths['/api/tx/{id}']).get).parameters as Array<Record<string, unknown>>
    assert.ok(txParams.some((p) => p.name === 'id' && p.in === 'path'), 'GET /api/tx/{id} documents the id parameter')

    const page = await http(node.url, 'GET', '/swagger')
    assert.equal(page.status, 200)
    assert.match(page.headers.get('content-type') ?? '', /text\/html/)
  })

  test('every error answer names its kind in the Kith-Error-Code header, and the OpenAPI document lists the kinds', async () => {
    const code = (res: HttpResult): string | null => res.headers.get('kith-error-code')
    const rejected = async (tx: Transaction): Promise<string | null> => {
      const res = await submit(node, tx)
      assert.equal(res.status, 400, res.text)
      assert.deepEqual(Object.keys(asRecord(res.json)), ['error'], 'the body is the error text alone')
      return code(res)
    }
    assert.equal(await rejected(transfer(carol, newAccount().pub, 5000, { fee: 999 })), 'TX_FEE_TOO_LOW')
    assert.equal(await rejected(followTx(carol, 'FOLLOW', carol.pub)), 'TX_BAD_FIELD')
    assert.equal(await rejected(postActionTx(carol, 'LIKE_POST', 'c'.repeat(32))), 'TX_UNKNOWN_TARGET')
    assert.equal(await rejected(callContract(carol, 'f'.repeat(40), 'run')), 'TX_UNKNOWN_TARGET')
    assert.equal(code(await http(node.url, 'GET', '/api/tx/tx-does-not-exist-123')), 'NOT_FOUND')
    assert.equal(code(await http(node.url, 'POST', '/api/tx', { rawBody: 'not json' })), 'BAD_REQUEST')
    assert.equal(code(await http(node.url, 'GET', '/api/netstats')), null, 'a success names no error')

    const doc = asRecord(await getOk(node, '/swagger/openapi.json'))
    const kinds = asRecord(asRecord(asRecord(asRecord(doc.components).headers).ErrorCode).schema).enum as string[]
    for (const kind of ['TX_FEE_TOO_LOW', 'TX_BAD_FIELD', 'TX_CONFLICT', 'TX_UNKNOWN_TARGET', 'TX_NOT_ALLOWED', 'NOT_FOUND', 'INTERNAL']) assert.ok(kinds.includes(kind), kind)
    const badSubmit = asRecord(asRecord(asRecord(asRecord(asRecord(doc.paths)['/api/tx']).post).responses)['400'])
    assert.deepEqual(asRecord(badSubmit.headers)['Kith-Error-Code'], { $ref: '#/components/headers/ErrorCode' })
  })

  test('a tampered signature is 400 and the message mentions signature', async () => {
    const to = newAccount().pub
    const signed = transfer(carol, to, 5000)
    const changedAmount = { ...signed, amount: 5_000_000 }
    assertError(await submit(node, changedAmount), 400, /signature/)
    const sig = Buffer.from(signed.signature, 'base64')
    sig[10] ^= 0xff
    assertError(await submit(node, { ...signed, signature: sig.toString('base64') }), 400, /signature/)
    const otherSigner = transfer(newAccount(), to, 5000)
    assertError(await submit(node, { ...signed, signature: otherSigner.signature }), 400, /signature/)
    assert.equal((await http(node.url, 'GET', `/api/tx/${signed.id}`)).status, 404, 'a rejected transaction is not stored')
  })

  test('a timestamp 10 minutes away from the node clock is 400 and the message mentions timestamp', async () => {
    const to = newAccount().pub
    assertError(await submit(node, transfer(carol, to, 5000, { time: Date.now() - 10 * 60_000 })), 400, /timestamp/)
    assertError(await submit(node, transfer(carol, to, 5000, { time: Date.now() + 10 * 60_000 })), 400, /timestamp/)
  })

  test('an unknown transaction id is 404 with a JSON error', async () => {
    assertError(await http(node.url, 'GET', '/api/tx/tx-does-not-exist-123'), 404)
  })

  test('an unknown route is 404 with a JSON error', async () => {
    assertError(await http(node.url, 'GET', '/api/no-such-route'), 404)
    assertError(await http(node.url, 'GET', '/nothing/here'), 404)
    assertError(await http(node.url, 'POST', '/api/no-such-route', { body: {} }), 404)
  })

  test('a body that is not valid JSON is 400', async () => {
    assertError(await http(node.url, 'POST', '/api/tx', { rawBody: '{"id": "tx-1", ' }), 400)
    assertError(await http(node.url, 'POST', '/api/tx', { rawBody: 'not json at all' }), 400)
  })

  test('a transaction that is not well formed is 400', async () => {
    const tx = transfer(carol, newAccount().pub, 5000)
    const withoutFee: Partial<Transaction> = { ...tx }
    delete withoutFee.fee
    assertError(await submit(node, withoutFee), 400)
    assertError(await submit(node, { ...tx, to: 'not-a-pubkey' }), 400)
    assertError(await submit(node, { ...tx, amount: -5 }), 400)
    assertError(await submit(node, { ...tx, type: 'NOT_A_TYPE' }), 400)
    assertError(await submit(node, transfer(carol, newAccount().pub, 5000, { fee: 999 })), 400, /fee/)
    assertError(await submit(node, []), 400)
  })

  test('near-valid transactions, which the hand check leaves to the schema, are 400 naming the field; the node goes on accepting', async () => {
    const to = newAccount().pub
    const tx = transfer(carol, to, 5000)
    // the same 64 signature bytes with the unused bits of the last character set: not the canonical spelling
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
    const last = alphabet.indexOf(tx.signature.at(-3) as string)
    const sloppy = `${tx.signature.slice(0, -3)}${alphabet[(last & 0b110000) | 1]}==`
    assert.deepEqual(Buffer.from(sloppy, 'base64'), Buffer.from(tx.signature, 'base64'), 'the same bytes')
    assert.notEqual(sloppy, tx.signature)
    assertError(await submit(node, { ...tx, signature: sloppy }), 400, /^signature: /)
    assertError(await submit(node, { ...tx, timestamp: '2026-02-30T00:00:00Z' }), 400, /^timestamp: /)
    assertError(await submit(node, { ...tx, timestamp: '2026-12-31T23:59:60Z' }), 400, /^timestamp: /)
    assertError(await submit(node, { ...tx, amount: 2 ** 53 }), 400, /^amount: /)
    assertError(await submit(node, { ...tx, memo: '😀'.repeat(257) }), 400, /^memo: /)
    assertError(await submit(node, { ...tx, id: 'a'.repeat(129) }), 400, /^id: /)
    await submitAccepted(node, tx)
  })

  test('insufficient funds is 400', async () => {
    const pauper = newAccount()
    assertError(await submit(node, transfer(pauper, newAccount().pub, 1)), 400, /insufficient|funds|balance/i)
    assertError(await submit(node, transfer(carol, newAccount().pub, FUNDED_UT)), 400, /insufficient|funds|balance/i)
  })

  test('a duplicate id with different content is 400; a byte-identical resubmission is accepted again', async () => {
    const recipient = newAccount()
    const original = transfer(carol, recipient.pub, 7000)
    await submitAccepted(node, original)
    const conflicting = transfer(carol, recipient.pub, 8000, { id: original.id })
    assertError(await submit(node, conflicting), 400, /duplicate/)
    await submitAccepted(node, original)
    await confirmed(node, original.id)
    assertError(await submit(node, conflicting), 400, /duplicate/)
    await submitAccepted(node, original)

    const history = await addressOf(node, recipient.pub)
    assert.equal(history.balance_ut, 7000, 'the transfer applied once')
    assert.deepEqual(history.transactions.map((t) => t.id), [original.id])
  })

  test('a wrong method on a known route is 405 with a JSON error', async () => {
    assertError(await http(node.url, 'GET', '/api/tx'), 405)
    assertError(await http(node.url, 'DELETE', '/api/netstats'), 405)
    assertError(await http(node.url, 'PUT', '/api/tx/some-id', { body: {} }), 405)
  })

  test('HEAD on a GET route answers its headers without a body', async () => {
    const get = await http(node.url, 'GET', '/api/netstats')
    const head = await http(node.url, 'HEAD', '/api/netstats')
    assert.equal(head.status, 200)
    assert.equal(head.text, '')
    assert.equal(head.headers.get('content-type'), get.headers.get('content-type'))
  })

  test('a method the router does not know (PROPFIND, MKCOL) is answered with a JSON error', async () => {
    assertError(await http(node.url, 'PROPFIND', '/api/netstats'), 501)
    assertError(await http(node.url, 'MKCOL', '/api/netstats'), 501)
  })

  test('a malformed address is 400', async () => {
    assertError(await http(node.url, 'GET', '/api/address/not-an-address'), 400)
    assertError(await http(node.url, 'GET', `/api/address/${alice.pub.slice(0, 60)}`), 400)
    const broken = alice.address.slice(0, -1) + (alice.address.endsWith('q') ? 'p' : 'q')
    assertError(await http(node.url, 'GET', `/api/address/${broken}`), 400)
    assertError(await http(node.url, 'GET', `/api/address/${alice.pub}?limit=0`), 400)
  })

  test('a restart (SIGTERM, exit 0) on the same home keeps height, balances and transactions, and blocks continue', async () => {
    const recipient = newAccount()
    const tx = transfer(dave, recipient.pub, 250_000, { memo: 'before restart' })
    await submitAccepted(node, tx)
    const detailBefore = await confirmed(node, tx.id)
    const statsBefore = await getOk<NetStats>(node, '/api/netstats')
    const daveBefore = await addressOf(node, dave.pub)
    const recipientBefore = await addressOf(node, recipient.pub)
    const oldPid = node.pid

    const exit = await node.stop()
    assert.deepEqual(exit, { code: 0, signal: null })
    assert.ok(node.logs.some((l) => l.msg === 'stopped'), 'the node logged a clean stop')
    await node.restart()
    assert.notEqual(node.pid, oldPid)

    const statsAfter = await getOk<NetStats>(node, '/api/netstats')
    assert.ok(statsAfter.height >= statsBefore.height, `height ${statsAfter.height} >= ${statsBefore.height}`)
    assert.equal(statsAfter.total_txs, statsBefore.total_txs)
    assert.equal(statsAfter.supply, statsBefore.supply)
    assert.deepEqual(await node.client.getTx(tx.id), detailBefore)
    assert.deepEqual(await addressOf(node, dave.pub), daveBefore)
    assert.deepEqual(await addressOf(node, recipient.pub), recipientBefore)
    const aliceAfter = await addressOf(node, alice.pub)
    assert.equal(aliceAfter.balance_ut, FUNDED_UT - 1_501_000)

    await waitFor(async () => (await node.client.netstats()).height >= statsAfter.height + 3, 10_000, { message: 'blocks continue after restart' })
    const next = transfer(dave, recipient.pub, 1000)
    await submitAccepted(node, next)
    const nextDetail = await confirmed(node, next.id)
    assert.ok((nextDetail.block_index as number) > (detailBefore.block_index as number))
    assert.equal((await addressOf(node, recipient.pub)).balance_ut, 251_000)
  })
})

describe('swagger disabled and a small body cap', () => {
  let node: NodeProcess
  const sender = newAccount()

  after(async () => { await stopAllNodes() })

  before(async () => {
    node = await startNode({
      alloc: [{ pub: sender.pub, amountUt: FUNDED_UT }],
      env: { SVC_DISABLE_SWAGGER: 'true', SVC_MAX_BODY_BYTES: '2048' }
    })
  })

  test('with SVC_DISABLE_SWAGGER=true /swagger/openapi.json and /swagger are 404', async () => {
    assertError(await http(node.url, 'GET', '/swagger/openapi.json'), 404)
    assertError(await http(node.url, 'GET', '/swagger'), 404)
  })

  test('a body over SVC_MAX_BODY_BYTES is 413 with a JSON error; a normal transaction still fits', async () => {
    const tx = transfer(sender, newAccount().pub, 5000)
    assertError(await submit(node, { ...tx, padding: 'x'.repeat(4096) }), 413)

    // the same without a Content-Length header (chunked), so the cap applies while streaming
    const chunked = await new Promise<HttpResult>((resolve, reject) => {
      const req = httpRequest(`${node.url}/api/tx`, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => { text += chunk })
        res.on('end', () => {
          let json: unknown
          try { json = JSON.parse(text) } catch { json = undefined }
          resolve({ status: res.statusCode ?? 0, headers: new Headers(res.headers as Record<string, string>), text, json })
        })
      })
      req.on('error', reject)
      const body = JSON.stringify({ ...tx, padding: 'y'.repeat(8192) })
      for (let i = 0; i < body.length; i += 1000) req.write(body.slice(i, i + 1000))
      req.end()
    })
    assertError(chunked, 413)

    await submitAccepted(node, tx)
    await confirmed(node, tx.id)
  })
})

describe('token-writes mode (SVC_API_TOKEN set, not private)', () => {
  const TOKEN = 'write-token-5f2a'
  let node: NodeProcess
  const sender = newAccount()

  after(async () => { await stopAllNodes() })

  before(async () => {
    node = await startNode({ alloc: [{ pub: sender.pub, amountUt: FUNDED_UT }], env: { SVC_API_TOKEN: TOKEN }, token: TOKEN })
  })

  test('reads are open without a token', async () => {
    await getOk(node, '/api/netstats')
    await getOk(node, '/api/well-known-version')
    await getOk(node, `/api/address/${sender.pub}`)
  })

  test('POST /api/tx without the bearer token is 401; with `Authorization: Bearer` it is accepted', async () => {
    const tx = transfer(sender, newAccount().pub, 5000)
    assertError(await submit(node, tx), 401)
    assertError(await submit(node, tx, { authorization: 'Bearer wrong-token' }), 401)
    assertError(await submit(node, tx, { authorization: TOKEN }), 401)
    assert.equal((await http(node.url, 'GET', `/api/tx/${tx.id}`)).status, 404, 'an unauthorised submission is not stored')
    const res = await submit(node, tx, { authorization: `Bearer ${TOKEN}` })
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(res.json, { id: tx.id, status: 'accepted' })
    await confirmed(node, tx.id)
  })
})

describe('fully private mode (SVC_API_TOKEN and SVC_API_PRIVATE=true)', () => {
  const TOKEN = 'private-token-93c1'
  let node: NodeProcess
  const sender = newAccount()

  after(async () => { await stopAllNodes() })

  before(async () => {
    node = await startNode({ alloc: [{ pub: sender.pub, amountUt: FUNDED_UT }], env: { SVC_API_TOKEN: TOKEN, SVC_API_PRIVATE: 'true' }, token: TOKEN })
  })

  test('every route needs the token, /api/netstats and /api/well-known-version included', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` }
    for (const path of ['/api/netstats', '/api/well-known-version', '/swagger/openapi.json', `/api/address/${sender.pub}`]) {
      assertError(await http(node.url, 'GET', path), 401)
      assertError(await http(node.url, 'GET', path, { headers: { authorization: 'Bearer nope' } }), 401)
      const ok = await http(node.url, 'GET', path, { headers: auth })
      assert.equal(ok.status, 200, `${path} with the token: ${ok.status} ${ok.text}`)
    }
    const version = asRecord((await http(node.url, 'GET', '/api/well-known-version', { headers: auth })).json)
    assert.equal(version.protocol_version, 1)

    const tx = transfer(sender, newAccount().pub, 5000)
    assertError(await submit(node, tx), 401)
    const res = await submit(node, tx, auth)
    assert.equal(res.status, 200, res.text)
    await confirmed(node, tx.id)
  })
})

describe('per-IP rate limit (SVC_RATE_LIMIT_RPS=5)', () => {
  let node: NodeProcess

  after(async () => { await stopAllNodes() })

  before(async () => {
    node = await startNode({ env: { SVC_RATE_LIMIT_RPS: '5' } })
  })

  test('a burst of 30 GETs gets some 429 answers with a JSON error, and the node keeps serving', async () => {
    const results = await Promise.all(Array.from({ length: 30 }, async () => await http(node.url, 'GET', '/api/netstats')))
    const limited = results.filter((r) => r.status === 429)
    const served = results.filter((r) => r.status === 200)
    assert.ok(limited.length > 0, 'some requests were rate limited')
    assert.ok(served.length > 0, 'some requests were served')
    assert.equal(limited.length + served.length, 30, `only 200 and 429: ${results.map((r) => r.status).join(',')}`)
    for (const r of limited) {
      assertError(r, 429)
      assert.ok(Number(r.headers.get('retry-after')) >= 1, '429 carries Retry-After in seconds')
      assert.equal(r.headers.get('ratelimit-remaining'), '0')
    }
    for (const r of [...limited, ...served]) {
      assert.equal(r.headers.get('ratelimit-limit'), '10', 'the bucket holds two seconds of 5 requests')
      assert.ok(Number(r.headers.get('ratelimit-reset')) >= 0)
    }
    const remaining = served.map((r) => Number(r.headers.get('ratelimit-remaining')))
    assert.ok(remaining.every((n) => n >= 0 && n < 10), `RateLimit-Remaining counts down: ${remaining.join(',')}`)

    const recovered = await waitFor(async () => {
      const r = await http(node.url, 'GET', '/api/netstats')
      return r.status === 200 ? r : undefined
    }, 5000, { intervalMs: 250, message: 'a 200 after the burst' })
    assert.equal(asRecord(recovered.json).validator_count, 1)
  })
})
