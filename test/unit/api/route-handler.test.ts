/**
 * routeHandler over a real Koa app and real HTTP: the declared body schema is parsed before the
 * handler runs, so the handler sees only the parsed value; a route without one gets no body.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Koa from 'koa'
import Router from '@koa/router'
import pino from 'pino'
import { z } from 'zod'
import { errorMiddleware } from '../../../src/api/errors.js'
import { jsonBody } from '../../../src/api/middleware.js'
import { koaPath, route, type AnyRoute } from '../../../src/api/route.js'
import { routeHandler } from '../../../src/api/serving.js'

const seen: unknown[] = []
let handChecked = 0

const routes: AnyRoute[] = [
  route({
    method: 'post',
    path: '/strict',
    tag: 't',
    summary: 'a body with a bounded integer and a lowercased key',
    body: z.object({ n: z.number().int().min(0).max(10), key: z.string().regex(/^[0-9a-fA-F]{4}$/).transform((s) => s.toLowerCase()) }),
    responses: {},
    handler: ({ body }) => { seen.push(body); return { ok: true } }
  }),
  route({
    method: 'delete',
    path: '/optional',
    tag: 't',
    summary: 'a body that may be left out',
    body: z.object({ sig: z.string() }).optional(),
    responses: {},
    handler: ({ body }) => { seen.push(body); return { ok: true } }
  }),
  route({
    method: 'post',
    path: '/hand',
    tag: 't',
    summary: 'a body with a hand check tried first: it takes only an already-lowercase key',
    body: z.object({ key: z.string().regex(/^[0-9a-fA-F]{4}$/).transform((s) => s.toLowerCase()) }),
    plainBody: (raw) => {
      handChecked++
      const key = (raw as { key?: unknown } | null)?.key
      return typeof key === 'string' && /^[0-9a-f]{4}$/.test(key) ? { key } : undefined
    },
    responses: {},
    handler: ({ body }) => { seen.push(body); return { ok: true } }
  }),
  route({
    method: 'post',
    path: '/none',
    tag: 't',
    summary: 'no body declared',
    responses: {},
    handler: ({ body }) => { seen.push(body); return { ok: true } }
  })
]

describe('routeHandler: edge validation of bodies', () => {
  let server: Server
  let url = ''
  before(async () => {
    const app = new Koa()
    app.use(errorMiddleware(pino({ level: 'silent' })))
    app.use(jsonBody(1024))
    const router = new Router()
    for (const r of routes) router[r.method](koaPath(r.path), routeHandler(r, { token: undefined, private: false }))
    app.use(router.routes())
    server = createServer(app.callback())
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  after(() => { server.close() })

  const send = async (method: string, path: string, body?: string): Promise<{ status: number, json: Record<string, unknown> }> => {
    const res = await fetch(`${url}${path}`, { method, ...(body !== undefined ? { body, headers: { 'content-type': 'application/json' } } : {}) })
    return { status: res.status, json: await res.json() as Record<string, unknown> }
  }

  test('a body that fails its schema is a 400 naming the field, and the handler never runs', async () => {
    seen.length = 0
    for (const [body, field] of [
      ['{}', /^n: /], ['{"n": 11, "key": "abcd"}', /^n: /], ['{"n": 1.5, "key": "abcd"}', /^n: /], ['{"n": "1", "key": "abcd"}', /^n: /],
      ['{"n": 1, "key": "xyz!"}', /^key: /], ['[]', /object/], ['null', /object/], ['"n"', /object/], ['{"n": 1e999, "key": "abcd"}', /^n: /]
    ] as const) {
      const res = await send('POST', '/strict', body)
      assert.equal(res.status, 400, body)
      assert.match(res.json.error as string, field, body)
    }
    const missing = await send('POST', '/strict')
    assert.equal(missing.status, 400)
    assert.match(missing.json.error as string, /request body: required/)
    assert.deepEqual(seen, [], 'no invalid body reached the handler')
  })

  test('the handler gets the parsed value: transforms applied, unknown and built-in members dropped', async () => {
    seen.length = 0
    const res = await send('POST', '/strict', '{"n": 3, "key": "ABCD", "extra": 1, "__proto__": {"n": 99}, "constructor": "x"}')
    assert.equal(res.status, 200)
    assert.deepEqual(seen, [{ n: 3, key: 'abcd' }])
    assert.equal(Object.getPrototypeOf(seen[0]), Object.prototype)
  })

  test('an optional body may be left out, but a body that is sent must match', async () => {
    seen.length = 0
    assert.equal((await send('DELETE', '/optional')).status, 200)
    assert.equal((await send('DELETE', '/optional', '{"sig": "s"}')).status, 200)
    const bad = await send('DELETE', '/optional', '{"sig": 5}')
    assert.equal(bad.status, 400)
    assert.match(bad.json.error as string, /^sig: /)
    assert.deepEqual(seen, [undefined, { sig: 's' }])
  })

  test('a route that declares no body ignores what is sent', async () => {
    seen.length = 0
    assert.equal((await send('POST', '/none', '{"anything": [1, 2]}')).status, 200)
    assert.deepEqual(seen, [undefined])
  })

  test('a route\'s hand check (plainBody) is tried first; what it does not take goes to the schema, which accepts it or names the fault', async () => {
    seen.length = 0
    handChecked = 0
    assert.equal((await send('POST', '/hand', '{"key": "ab12", "extra": 1}')).status, 200)
    assert.equal((await send('POST', '/hand', '{"key": "AB12"}')).status, 200, 'the schema takes what the hand check leaves')
    const bad = await send('POST', '/hand', '{"key": "zz"}')
    assert.equal(bad.status, 400)
    assert.match(bad.json.error as string, /^key: /)
    assert.equal((await send('POST', '/hand')).status, 400, 'no body: refused before any check')
    assert.deepEqual(seen, [{ key: 'ab12' }, { key: 'ab12' }])
    assert.equal(handChecked, 3)
  })
})
