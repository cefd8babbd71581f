/**
 * Walks every route the node serves in each access mode (spec "Authentication"): public, token
 * writes (SVC_API_TOKEN) and fully private (SVC_API_TOKEN + SVC_API_PRIVATE=true). The routes
 * come from the node's own OpenAPI document, which is built from the same declarations as the
 * router, so a route added later is walked without editing this test.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { request as httpRequest } from 'node:http'
import { randomBytes } from 'node:crypto'
import { newAccount } from '../../src/client/index.js'
import { errorMessage, startNode, stopAllNodes, type HttpResult, type NodeProcess } from '../helpers/node-process.js'

const TOKEN = 'access-walk-token-7e1d'
const WITH_TOKEN = { authorization: `Bearer ${TOKEN}` }

interface Operation {
  method: string
  /** the OpenAPI template, e.g. /api/tx/{id} */
  template: string
  /** the template with its parameters filled */
  path: string
  /** documented as needing the bearer token in token-writes mode */
  write: boolean
}

interface OpenApiOperation {
  parameters?: Array<{ name: string, in: string, schema?: { type?: string, pattern?: string, minLength?: number, maxLength?: number } }>
  security?: Array<Record<string, unknown>>
}

/** Syntactically valid stand-ins for path parameters; the first one a parameter's schema admits is used. */
const DUMMY_CANDIDATES = [newAccount().pub, randomBytes(32).toString('hex'), 'kith', '1']

function dummyValue (schema: NonNullable<OpenApiOperation['parameters']>[number]['schema'] = {}): string {
  if (schema.type === 'integer' || schema.type === 'number') return '1'
  const fits = (value: string): boolean =>
    (schema.pattern === undefined || new RegExp(schema.pattern).test(value)) &&
    value.length >= (schema.minLength ?? 0) && value.length <= (schema.maxLength ?? Infinity)
  return DUMMY_CANDIDATES.find(fits) ?? DUMMY_CANDIDATES[0]
}

/** Every operation of the node's OpenAPI document, read with the token (private mode needs it). */
async function servedOperations (node: NodeProcess): Promise<Operation[]> {
  const res = await fetch(new URL('/swagger/openapi.json', node.url), { headers: WITH_TOKEN })
  assert.equal(res.status, 200, 'the OpenAPI document is served')
  const doc = await res.json() as { paths: Record<string, Record<string, OpenApiOperation>> }
  const operations: Operation[] = []
  for (const [template, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      let path = template
      for (const p of op.parameters ?? []) {
        if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(dummyValue(p.schema)))
      }
      const write = (op.security ?? []).some((requirement) => 'bearer' in requirement)
      operations.push({ method: method.toUpperCase(), template, path, write })
    }
  }
  return operations
}

/**
 * One request; the body is read only for a 401 (the JSON error is asserted), since a route that
 * answers may stream forever (/api/events).
 */
async function call (node: NodeProcess, op: Operation, headers: Record<string, string>): Promise<HttpResult> {
  const abort = new AbortController()
  const hasBody = op.method === 'POST'
  const res = await fetch(new URL(op.path, node.url), {
    method: op.method,
    headers: { ...headers, ...(hasBody ? { 'content-type': 'application/json' } : {}) },
    body: hasBody ? '{}' : undefined,
    signal: abort.signal
  })
  let text = ''
  if (res.status === 401) text = await res.text()
  else abort.abort()
  let json: unknown
  try { json = text === '' ? undefined : JSON.parse(text) } catch { json = undefined }
  return { status: res.status, headers: res.headers, text, json }
}

function assertUnauthorized (res: HttpResult, what: string): void {
  assert.equal(res.status, 401, `${what}: expected 401, got ${res.status}`)
  assert.match(res.headers.get('content-type') ?? '', /application\/json/, `${what}: a JSON error`)
  errorMessage(res)
}

/** The status of a WebSocket upgrade of /api/ws (101 when it opened), with the body of a refusal. */
async function upgrade (node: NodeProcess, query: string, headers: Record<string, string> = {}): Promise<{ status: number, body: string }> {
  return await new Promise((resolve, reject) => {
    const req = httpRequest(new URL(`/api/ws${query}`, node.url), {
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': randomBytes(16).toString('base64'), ...headers }
    })
    req.on('upgrade', (_res, socket) => { socket.destroy(); resolve({ status: 101, body: '' }) })
    req.on('response', (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk: string) => { body += chunk }).on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

const MODES = [
  { name: 'public', env: {} },
  { name: 'token writes', env: { SVC_API_TOKEN: TOKEN } },
  { name: 'fully private', env: { SVC_API_TOKEN: TOKEN, SVC_API_PRIVATE: 'true' } }
] as const

describe('access modes: every served route, HTTP and WebSocket', () => {
  const nodes = new Map<string, NodeProcess>()
  const operations = new Map<string, Operation[]>()

  before(async () => {
    await Promise.all(MODES.map(async (mode) => {
      const node = await startNode({ env: mode.env })
      nodes.set(mode.name, node)
      operations.set(mode.name, await servedOperations(node))
    }))
  })

  after(async () => { await stopAllNodes() })

  test('the walk covers the routes that must not slip through: WebSocket, event stream, metrics, docs, writes', () => {
    for (const mode of MODES) {
      const templates = new Set(operations.get(mode.name)?.map((op) => `${op.method} ${op.template}`))
      for (const needed of ['GET /api/ws', 'GET /api/events', 'GET /metrics', 'GET /swagger', 'GET /swagger/openapi.json', 'GET /', 'GET /explorer/{file}', 'GET /api/well-known-version', 'POST /api/tx']) {
        assert.ok(templates.has(needed), `${mode.name}: ${needed} is walked`)
      }
      assert.ok(operations.get(mode.name)?.some((op) => op.write), `${mode.name}: some route is documented as a write`)
    }
  })

  test('public: no route answers 401, with or without a token', async () => {
    const node = nodes.get('public') as NodeProcess
    for (const op of operations.get('public') ?? []) {
      for (const headers of [{}, WITH_TOKEN]) {
        const res = await call(node, op, headers)
        assert.notEqual(res.status, 401, `${op.method} ${op.path}`)
      }
    }
    assert.equal((await upgrade(node, '')).status, 101, 'the WebSocket opens without a token')
  })

  test('answers carry X-Request-Id, a sane incoming one unchanged, refusals included', async () => {
    const open = await call(nodes.get('public') as NodeProcess, { method: 'GET', template: '/api/netstats', path: '/api/netstats', write: false }, { 'x-request-id': 'walk-1' })
    assert.equal(open.headers.get('x-request-id'), 'walk-1')
    const refused = await call(nodes.get('fully private') as NodeProcess, { method: 'GET', template: '/api/netstats', path: '/api/netstats', write: false }, {})
    assert.equal(refused.status, 401)
    assert.ok((refused.headers.get('x-request-id') ?? '').length > 0, 'a 401 carries a generated id')
  })

  test('token writes: exactly the write routes answer 401 without the token; nothing does with it', async () => {
    const node = nodes.get('token writes') as NodeProcess
    for (const op of operations.get('token writes') ?? []) {
      const what = `${op.method} ${op.path}`
      const anonymous = await call(node, op, {})
      if (op.write) {
        assertUnauthorized(anonymous, what)
        assertUnauthorized(await call(node, op, { authorization: 'Bearer not-the-token' }), `${what} with a wrong token`)
      } else {
        assert.notEqual(anonymous.status, 401, `${what} is a read, open without the token`)
      }
      assert.notEqual((await call(node, op, WITH_TOKEN)).status, 401, `${what} with the token`)
    }
    // reads are open, so is the WebSocket; its submit_tx checks the token per message
    assert.equal((await upgrade(node, '')).status, 101, 'the WebSocket opens without a token')
  })

  test('fully private: every route answers 401 without the token, unknown paths too; nothing does with it', async () => {
    const node = nodes.get('fully private') as NodeProcess
    for (const op of operations.get('fully private') ?? []) {
      const what = `${op.method} ${op.path}`
      assertUnauthorized(await call(node, op, {}), what)
      assertUnauthorized(await call(node, op, { authorization: 'Bearer not-the-token' }), `${what} with a wrong token`)
      assertUnauthorized(await call(node, op, { authorization: `Bearer ${TOKEN}x` }), `${what} with the token plus a character`)
      assert.notEqual((await call(node, op, WITH_TOKEN)).status, 401, `${what} with the token`)
    }
    // no route discovery without the token: an unknown path is 401, not 404
    assertUnauthorized(await call(node, { method: 'GET', template: '/nope', path: '/nope', write: false }, {}), 'GET /nope')
  })

  test('fully private: the WebSocket upgrade needs the token (401 JSON error), by query or bearer header', async () => {
    const node = nodes.get('fully private') as NodeProcess
    for (const [query, headers] of [['', {}], ['?token=wrong', {}], ['', { authorization: 'Bearer wrong' }]] as const) {
      const refused = await upgrade(node, query, headers)
      assert.equal(refused.status, 401, `upgrade ${query} ${JSON.stringify(headers)}`)
      assert.equal(typeof (JSON.parse(refused.body) as { error?: unknown }).error, 'string')
    }
    assert.equal((await upgrade(node, `?token=${TOKEN}`)).status, 101, 'opens with ?token=')
    assert.equal((await upgrade(node, '', WITH_TOKEN)).status, 101, 'opens with the bearer header')
  })
})
