import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { createServer, type Server } from 'node:http'
import { Writable } from 'node:stream'
import Koa from 'koa'
import { pino } from 'pino'
import { errorMiddleware } from '../../../src/api/errors.js'
import { chooseRequestId, requestId, requestLog } from '../../../src/api/request-id.js'
import { KithError } from '../../../src/errors/index.js'

describe('chooseRequestId', () => {
  test('keeps a sane incoming id', () => {
    for (const id of ['abc', 'a1b2-c3.d4_e5:f6', '0'.repeat(128), '3fa85f64-5717-4562-b3fc-2c963f66afa6']) assert.equal(chooseRequestId(id), id)
  })

  test('replaces a missing, overlong or unsafe id with a fresh UUID', () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
    for (const bad of [undefined, '', '0'.repeat(129), 'has space', 'quote"d', 'new\nline', 'ünï']) {
      assert.match(chooseRequestId(bad), uuid, JSON.stringify(bad))
    }
    assert.notEqual(chooseRequestId(undefined), chooseRequestId(undefined))
  })
})

describe('request id middleware over HTTP', () => {
  const lines: Array<Record<string, unknown>> = []
  let server: Server
  let url = ''

  before(async () => {
    const sink = new Writable({ write (chunk: Buffer, _enc, done) { lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>); done() } })
    const log = pino({ level: 'info' }, sink)
    const app = new Koa()
    app.use(requestId())
    app.use(errorMiddleware(log))
    app.use((ctx) => {
      if (ctx.path === '/boom') throw new Error('a bug')
      if (ctx.path === '/refused') throw new KithError('BAD_REQUEST', 'no')
      if (ctx.path === '/log') requestLog(ctx, log).info('handler says hi')
      ctx.body = { ok: true }
    })
    server = createServer(app.callback())
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })

  after(() => { server.close() })

  test('every answer carries an id; a sane incoming one comes back unchanged, an unsafe one is replaced', async () => {
    const generated = (await fetch(`${url}/ok`)).headers.get('x-request-id')
    assert.ok(generated !== null && generated.length > 0)
    assert.equal((await fetch(`${url}/ok`, { headers: { 'x-request-id': 'client-42' } })).headers.get('x-request-id'), 'client-42')
    const replaced = (await fetch(`${url}/ok`, { headers: { 'x-request-id': 'a"b' } })).headers.get('x-request-id')
    assert.ok(replaced !== null && replaced !== 'a"b')
    assert.ok((await fetch(`${url}/refused`)).headers.get('x-request-id'), 'error answers carry it too')
  })

  test('the 500 answer and its "request failed" log line carry the same id', async () => {
    const res = await fetch(`${url}/boom`)
    assert.equal(res.status, 500)
    const id = res.headers.get('x-request-id')
    const logged = lines.find((l) => l.msg === 'request failed' && l.path === '/boom')
    assert.ok(logged !== undefined, 'the failure was logged')
    assert.equal(logged.reqId, id)
  })

  test('a handler\'s own log line carries the id', async () => {
    const res = await fetch(`${url}/log`, { headers: { 'x-request-id': 'trace-me' } })
    assert.equal(res.status, 200)
    assert.equal(lines.find((l) => l.msg === 'handler says hi')?.reqId, 'trace-me')
  })
})
