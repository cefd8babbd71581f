/**
 * Hostile-input generators (fast-check) and a raw HTTP client for fuzzing a node through its
 * public interface. Requests are built from the node's own OpenAPI document: every operation's
 * path parameters, query parameters and JSON body get values near the declared schema and far
 * from it (wrong types, missing and extra members, huge, negative and fractional numbers, long
 * and odd Unicode, lone surrogates, NUL, JavaScript built-in property names), bodies come as good
 * and bad JSON under right, wrong and missing content types, sometimes oversized.
 *
 * Requests go over raw TCP (node:net) so that bytes no well-behaved client sends (an undecodable
 * percent escape, a lone surrogate in a path, a duplicated query parameter, a chunked body past
 * the cap) reach the node as they are.
 */
import fc from 'fast-check'
import { connect } from 'node:net'

/** Names that a lookup in a plain object finds on Object.prototype. */
export const BUILTIN_NAMES = [
  '__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf',
  'propertyIsEnumerable', 'toLocaleString', '__defineGetter__', '__lookupGetter__', 'then', 'length'
] as const

const ODD_TEXTS = [
  '', ' ', '\u0000', 'a\u0000b', '\uD800', 'x\uDC00', '\uDBFF\uDFFF', '\uFFFE', '\u202Eevil', '🙂', 'e\u0301', '\r\n', '\t',
  '../../etc/passwd', '%', '%00', '%zz', 'null', 'undefined', 'NaN', 'Infinity', '-Infinity', '-1', '-0', '0', '0.5', '1e999', '0x10',
  '9007199254740993', 'latest', 'true', '[]', '{}', '<script>', '"', '\\', '*'
]

/** Short odd strings and long ones. */
export const oddText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...BUILTIN_NAMES) },
  { weight: 3, arbitrary: fc.constantFrom(...ODD_TEXTS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('a', 'é', '🙂', '\u0000', '0', '\uD800'), fc.integer({ min: 200, max: 20_000 })).map(([c, n]) => c.repeat(n)) }
)

/** Numbers a schema bound should catch. (JSON has no NaN or Infinity: see RAW_NUMBERS.) */
export const oddNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -1, -0, 0.5, -0.5, 1.5, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 53 + 2, 2 ** 64, 1e21, 1e308, -1e308, Number.MIN_VALUE, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true })
)

/** Number literals that JSON.parse turns into Infinity, -0, 0 or an inexact value. */
const RAW_NUMBERS = ['1e999', '-1e999', '1e-999', '-0', '123456789012345678901234567890', '9007199254740993', '1.0', '0.1e1', '4294967296']

/** A key for an extra member: a built-in name, an odd text or a plain word. */
export const oddKey: fc.Arbitrary<string> = fc.oneof(fc.constantFrom(...BUILTIN_NAMES), fc.constantFrom(...ODD_TEXTS), fc.string({ maxLength: 12 }))

/** Any JSON value, odd ones likely, nested a little. */
export const oddValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    oddText,
    oddNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(oddKey, tie('value'), { maxKeys: 4 })
  )
})).value

// ---- the OpenAPI document ----

interface JsonSchema {
  $ref?: string
  type?: string | string[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  items?: JsonSchema
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  allOf?: JsonSchema[]
  enum?: unknown[]
  const?: unknown
  pattern?: string
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  exclusiveMinimum?: number
  exclusiveMaximum?: number
  default?: unknown
}

interface OpenApiDoc {
  paths: Record<string, Record<string, {
    parameters?: Array<{ name: string, in: string, schema?: JsonSchema }>
    requestBody?: { content?: Record<string, { schema?: JsonSchema }> }
  }>>
  components?: { schemas?: Record<string, JsonSchema> }
}

export interface Operation {
  method: string
  /** OpenAPI form, /api/tx/{id} */
  path: string
  pathParams: Array<{ name: string, schema: JsonSchema }>
  queryParams: Array<{ name: string, schema: JsonSchema }>
  body: JsonSchema | undefined
}

export function operationsOf (doc: unknown): { operations: Operation[], schemas: Record<string, JsonSchema> } {
  const d = doc as OpenApiDoc
  const schemas = d.components?.schemas ?? {}
  const operations: Operation[] = []
  for (const [path, methods] of Object.entries(d.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const params = op.parameters ?? []
      operations.push({
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path').map((p) => ({ name: p.name, schema: p.schema ?? {} })),
        queryParams: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema ?? {} })),
        body: op.requestBody?.content?.['application/json']?.schema
      })
    }
  }
  return { operations, schemas }
}

function compiled (pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern)
  } catch {
    return undefined
  }
}

/**
 * Values that satisfy `schema` or nearly: the shape a well-formed client would send, so that
 * mutations of it get past the first check and reach deeper ones.
 */
export function nearValue (schema: JsonSchema, schemas: Record<string, JsonSchema>, depth = 0): fc.Arbitrary<unknown> {
  if (depth > 6) return oddValue
  if (schema.$ref !== undefined) {
    const target = schemas[schema.$ref.replace('#/components/schemas/', '')]
    return target === undefined ? oddValue : nearValue(target, schemas, depth + 1)
  }
  const choices = schema.anyOf ?? schema.oneOf
  if (choices !== undefined && choices.length > 0) return fc.oneof(...choices.map((c) => nearValue(c, schemas, depth + 1)))
  if (schema.allOf !== undefined && schema.allOf.length > 0) return nearValue(schema.allOf[0], schemas, depth + 1)
  if (schema.const !== undefined) return fc.constant(schema.const)
  if (schema.enum !== undefined && schema.enum.length > 0) return fc.constantFrom(...schema.enum)
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  switch (type) {
    case 'string': {
      const re = schema.pattern !== undefined ? compiled(schema.pattern) : undefined
      if (re !== undefined) return fc.stringMatching(re)
      const minLength = schema.minLength ?? 0
      return fc.string({ minLength, maxLength: Math.max(minLength, Math.min(schema.maxLength ?? 64, 200)) })
    }
    case 'integer': {
      const min = Math.max(schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : -1e6), Number.MIN_SAFE_INTEGER)
      const max = Math.min(schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : 1e12), Number.MAX_SAFE_INTEGER)
      return min <= max ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) }) : oddNumber
    }
    case 'number': return fc.double({ noNaN: true, noDefaultInfinity: true, min: schema.minimum ?? -1e9, max: schema.maximum ?? 1e9 })
    case 'boolean': return fc.boolean()
    case 'null': return fc.constant(null)
    case 'array': return fc.array(nearValue(schema.items ?? {}, schemas, depth + 1), { maxLength: 3 })
    case 'object': {
      const props = Object.entries(schema.properties ?? {})
      const required = new Set(schema.required ?? [])
      const record: Record<string, fc.Arbitrary<unknown>> = {}
      for (const [name, sub] of props) record[name] = nearValue(sub, schemas, depth + 1)
      const requiredKeys = props.map(([name]) => name).filter((name) => required.has(name))
      return fc.record(record, { requiredKeys })
    }
    default: return oddValue
  }
}

type Mutation =
  | { kind: 'keep' }
  | { kind: 'drop', pick: number }
  | { kind: 'replace', pick: number, value: unknown }
  | { kind: 'extra', key: string, value: unknown }
  | { kind: 'whole', value: unknown }

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ kind: 'keep' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('drop' as const), pick: fc.nat() }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('replace' as const), pick: fc.nat(), value: oddValue }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('extra' as const), key: oddKey, value: oddValue }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('whole' as const), value: oddValue }) }
)

function mutate (value: unknown, change: Mutation): unknown {
  if (change.kind === 'keep') return value
  if (change.kind === 'whole' || value === null || typeof value !== 'object' || Array.isArray(value)) return change.kind === 'whole' ? change.value : value
  // defineProperty: `__proto__` becomes an own member, as JSON.parse makes it
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true })
  const keys = Object.keys(out)
  if (change.kind === 'extra') {
    Object.defineProperty(out, change.key, { value: change.value, enumerable: true, writable: true, configurable: true })
    return out
  }
  if (keys.length === 0) return out
  const key = keys[change.pick % keys.length]
  if (change.kind === 'drop') Reflect.deleteProperty(out, key)
  else out[key] = change.value
  return out
}

/** A value near `schema`, mutated once or twice (or left whole: the node must take those too). */
export function mutatedValue (schema: JsonSchema, schemas: Record<string, JsonSchema>): fc.Arbitrary<unknown> {
  return fc.tuple(nearValue(schema, schemas), fc.array(mutation, { minLength: 1, maxLength: 2 }))
    .map(([value, changes]) => changes.reduce(mutate, value))
}

// ---- encoding ----

/** Percent-encodes each UTF-16 code unit's WTF-8 bytes: a lone surrogate goes out as the bytes a careless client sends. */
export function percentEncode (text: string): string {
  let out = ''
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    const next = text.charCodeAt(i + 1)
    let cp = unit
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      cp = 0x10000 + ((unit - 0xd800) << 10) + (next - 0xdc00)
      i++
    }
    if (cp < 0x80 && /[A-Za-z0-9\-._~]/.test(String.fromCharCode(cp))) { out += String.fromCharCode(cp); continue }
    const bytes = cp < 0x80 ? [cp]
      : cp < 0x800 ? [0xc0 | (cp >> 6), 0x80 | (cp & 63)]
        : cp < 0x10000 ? [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)]
          : [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)]
    for (const b of bytes) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/** Raw path segments and query texts as they may come over the wire, escaped wrongly or not at all. */
const RAW_SEGMENTS = ['%', '%zz', '%ff', '%FF%FE', '%ED%A0%80', '%C0%AF', '%00', '..', '.', '%2e%2e', '%2F', 'a%2Fb', '%25', '+', ';', '%3B', '@']

/** A path parameter: near its schema, an odd text, or raw bytes. */
function segment (schema: JsonSchema, schemas: Record<string, JsonSchema>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: nearValue(schema, schemas).map((v) => percentEncode(typeof v === 'string' ? v : JSON.stringify(v) ?? '')) },
    { weight: 4, arbitrary: oddText.filter((s) => s !== '').map(percentEncode) },
    { weight: 2, arbitrary: fc.constantFrom(...RAW_SEGMENTS) }
  )
}

function queryValue (schema: JsonSchema, schemas: Record<string, JsonSchema>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: nearValue(schema, schemas).map((v) => percentEncode(typeof v === 'string' ? v : JSON.stringify(v) ?? '')) },
    { weight: 3, arbitrary: oddText.map(percentEncode) },
    { weight: 1, arbitrary: oddNumber.map((n) => percentEncode(String(n))) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_SEGMENTS) }
  )
}

/** The query string: declared parameters (some left out, some twice), extra ones, raw junk. */
function queryString (op: Operation, schemas: Record<string, JsonSchema>): fc.Arbitrary<string> {
  const declared = op.queryParams.map((p) => fc.tuple(fc.constantFrom(0, 1, 1, 1, 2), fc.array(queryValue(p.schema, schemas), { minLength: 2, maxLength: 2 }))
    .map(([times, values]) => values.slice(0, times).map((v) => `${encodeURIComponent(p.name)}=${v}`)))
  const extra = fc.array(fc.tuple(oddKey, oddText).map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`), { maxLength: 2 })
  const junk = fc.constantFrom('', '', '', '&', '&&=&', '=', 'a', 'a=%', '%=%', '__proto__[x]=1', 'constructor.prototype=1', '?')
  return fc.tuple(fc.tuple(...declared), extra, junk).map(([parts, more, j]) => [...parts.flat(), ...more, ...(j === '' ? [] : [j])].join('&'))
}

const CONTENT_TYPES = [
  'application/json', 'application/json', 'application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x', 'application/json; charset=utf-16', 'application/octet-stream', '*/*', ';;;', undefined
]

/** The body's bytes: JSON of a value near the declared schema (or anything, for routes with none), or not JSON at all. */
function bodyBytes (op: Operation, schemas: Record<string, JsonSchema>): fc.Arbitrary<Buffer | undefined> {
  const value = op.body !== undefined ? mutatedValue(op.body, schemas) : oddValue
  const json = value.map((v) => JSON.stringify(v) ?? 'null')
  return fc.oneof(
    { weight: 8, arbitrary: json.map((text) => Buffer.from(text, 'utf8')) },
    // a number literal JSON.parse turns into Infinity, -0 or an inexact value, in place of one member
    { weight: 2, arbitrary: fc.tuple(json, fc.constantFrom(...RAW_NUMBERS)).map(([text, n]) => Buffer.from(text.replace(/:("[^"]*"|-?[\d.eE+-]+|true|false|null)/, `:${n}`), 'utf8')) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: json.map((text) => Buffer.from(text.slice(0, Math.max(0, text.length - 1)), 'utf8')) },
    { weight: 1, arbitrary: fc.constantFrom('{', '}', '{"a":1,}', "{'a':1}", 'undefined', 'NaN', '\u0000', '{"a":1} x', '[[[[[[[[[[', '"\\ud800"', `${'['.repeat(5000)}${']'.repeat(5000)}`).map((t) => Buffer.from(t, 'utf8')) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)) },
    // JSON with invalid UTF-8 inside a string
    { weight: 1, arbitrary: fc.constant(Buffer.concat([Buffer.from('{"pub_key":"'), Buffer.from([0xff, 0xfe, 0xed, 0xa0, 0x80]), Buffer.from('"}')])) }
  )
}

export interface FuzzRequest {
  method: string
  /** the request target, raw */
  target: string
  headers: Array<[string, string]>
  body: Buffer | undefined
  /** how the body goes: Content-Length, chunked, or a Content-Length far larger than what is sent */
  framing: 'length' | 'chunked' | 'overstated'
}

/** Requests to one operation of the OpenAPI document. */
export function requestsFor (op: Operation, schemas: Record<string, JsonSchema>): fc.Arbitrary<FuzzRequest> {
  const segments = fc.tuple(...op.pathParams.map((p) => segment(p.schema, schemas)))
  const method = fc.oneof({ weight: 12, arbitrary: fc.constant(op.method) }, { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'HEAD') })
  const hasBody = op.method !== 'GET'
  const body = hasBody ? bodyBytes(op, schemas) : fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: bodyBytes(op, schemas) })
  const headers = fc.tuple(
    fc.constantFrom(...CONTENT_TYPES),
    fc.constantFrom(undefined, undefined, undefined, 'Bearer x', 'Bearer', 'Basic Og==', 'Bearer \u00ff'),
    fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom('websocket', 'h2c') }),
    fc.constantFrom(undefined, undefined, '0', 'abc', '99999999999999999999')
  )
  const framing = fc.constantFrom<FuzzRequest['framing']>('length', 'length', 'length', 'length', 'length', 'chunked', 'overstated')
  return fc.tuple(method, segments, queryString(op, schemas), body, headers, framing).map(([m, segs, query, b, [type, auth, upgrade, lastEventId], f]) => {
    let i = 0
    const path = op.path.replace(/\{[^}]+\}/g, () => segs[i++])
    const h: Array<[string, string]> = []
    if (b !== undefined && type !== undefined) h.push(['Content-Type', type])
    if (auth !== undefined) h.push(['Authorization', auth.replace(/[^\x20-\x7e]/g, '?')])
    if (upgrade !== undefined) h.push(['Upgrade', upgrade], ['Connection', 'Upgrade'])
    if (lastEventId !== undefined) h.push(['Last-Event-ID', lastEventId])
    return { method: m, target: query === '' ? path : `${path}?${query}`, headers: h, body: b, framing: f }
  })
}

/** A body far over any cap, sent chunked (no Content-Length to refuse it by). */
export function oversizedRequest (path: string, bytes: number): FuzzRequest {
  return { method: 'POST', target: path, headers: [['Content-Type', 'application/json']], body: Buffer.alloc(bytes, 0x20), framing: 'chunked' }
}

// ---- the raw client ----

export interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: Buffer
}

function encodeRequest (req: FuzzRequest, host: string): Buffer {
  // A body the node may refuse before reading it all goes on a keep-alive connection: asked to
  // close, node closes as soon as it answered, and the body still arriving makes the kernel
  // reset the connection, which can drop the answer before the client reads it.
  const keepAlive = req.body !== undefined && req.framing !== 'length'
  const lines = [`${req.method} ${req.target} HTTP/1.1`, `Host: ${host}`, ...(keepAlive ? [] : ['Connection: close']), ...req.headers.map(([k, v]) => `${k}: ${v}`)]
  if (req.body === undefined) return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1')
  if (req.framing === 'chunked') {
    lines.push('Transfer-Encoding: chunked')
    const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1')
    const parts: Buffer[] = [head]
    for (let off = 0; off < req.body.length; off += 65_536) {
      const chunk = req.body.subarray(off, off + 65_536)
      parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'))
    }
    parts.push(Buffer.from('0\r\n\r\n'))
    return Buffer.concat(parts)
  }
  const declared = req.framing === 'overstated' ? 512 * 1024 * 1024 : req.body.length
  lines.push(`Content-Length: ${declared}`)
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), req.body])
}

/**
 * Sends one request on a fresh connection and reads the answer: its head, then the body by
 * Content-Length (or until the node closes). An event stream counts as answered once its head
 * is in. Rejects when no answer comes within `timeoutMs`: a hang is a failure.
 */
export async function sendRaw (port: number, req: FuzzRequest, timeoutMs: number): Promise<RawAnswer> {
  return await new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    let settled = false
    const finish = (err: Error | undefined, answer?: RawAnswer): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      if (err !== undefined) reject(err)
      else resolve(answer as RawAnswer)
    }
    const timer = setTimeout(() => finish(new Error(`no answer within ${timeoutMs} ms to ${req.method} ${req.target.slice(0, 200)}`)), timeoutMs)
    const parse = (ended: boolean): void => {
      const all = Buffer.concat(chunks)
      const end = all.indexOf('\r\n\r\n')
      if (end < 0) {
        if (ended) finish(new Error(`connection closed without an answer (${all.length} bytes) to ${req.method} ${req.target.slice(0, 200)}`))
        return
      }
      const [statusLine, ...headerLines] = all.subarray(0, end).toString('latin1').split('\r\n')
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? NaN)
      const headers: Record<string, string> = {}
      for (const line of headerLines) {
        const colon = line.indexOf(':')
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
      }
      const body = all.subarray(end + 4)
      if ((headers['content-type'] ?? '').startsWith('text/event-stream') || status === 101) return finish(undefined, { status, headers, body })
      const length = headers['content-length'] !== undefined ? Number(headers['content-length']) : undefined
      if (req.method === 'HEAD' || status === 204 || status === 304) return finish(undefined, { status, headers, body: Buffer.alloc(0) })
      if (length !== undefined && body.length >= length) return finish(undefined, { status, headers, body: body.subarray(0, length) })
      if (ended) finish(undefined, { status, headers, body })
    }
    socket.on('data', (chunk: Buffer) => { chunks.push(chunk); parse(false) })
    socket.on('end', () => parse(true))
    socket.on('close', () => parse(true))
    // the node may answer (413) and close before it read all we send: keep what came
    socket.on('error', () => parse(true))
    // In pieces, yielding between them, stopping once an answer comes: a node that refuses a
    // large body answers and closes before reading it all, and a socket that then fails a write
    // (EPIPE) is destroyed before it reads what the node sent.
    const bytes = encodeRequest(req, `127.0.0.1:${port}`)
    const PIECE = 64 * 1024
    const writeFrom = (off: number): void => {
      if (settled || chunks.length > 0 || off >= bytes.length || socket.destroyed) return
      socket.write(bytes.subarray(off, off + PIECE), () => setImmediate(() => writeFrom(off + PIECE)))
    }
    writeFrom(0)
  })
}

/** Why an answer breaks the rules for bad input, or undefined when it keeps them. */
export function answerFault (answer: RawAnswer, method: string, allowed5xx: readonly number[] = []): string | undefined {
  if (!Number.isInteger(answer.status)) return 'no status line'
  if (answer.status >= 500 && !allowed5xx.includes(answer.status)) return `status ${answer.status}: ${answer.body.toString('utf8').slice(0, 300)}`
  // a HEAD answer has no body to check
  if (answer.status >= 400 && method !== 'HEAD') {
    let parsed: unknown
    try {
      parsed = JSON.parse(answer.body.toString('utf8'))
    } catch {
      return `status ${answer.status} with a body that is not JSON: ${JSON.stringify(answer.body.toString('utf8').slice(0, 200))}`
    }
    const keys = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? Object.keys(parsed) : []
    if (keys.length !== 1 || keys[0] !== 'error' || typeof (parsed as { error: unknown }).error !== 'string') {
      return `status ${answer.status} with a body that is not {"error": string}: ${answer.body.toString('utf8').slice(0, 200)}`
    }
    if ((parsed as { error: string }).error === 'internal error') return `status ${answer.status} reads "internal error"`
  }
  return undefined
}

// ---- WebSocket messages ----

export const WS_OPS = ['submit_tx', 'subscribe', 'unsubscribe', 'typing', 'ping', 'auth'] as const

/** A WebSocket message: near one of the client messages' schemas and mutated, any JSON, or not JSON. */
export function wsMessages (schemas: Record<string, JsonSchema>): fc.Arbitrary<{ text: string } | { binary: Buffer }> {
  const clientSchemas = Object.entries(schemas).filter(([name]) => /^Ws(Subscribe|Unsubscribe|SubmitTx|Typing|Ping|Auth)/.test(name)).map(([, s]) => s)
  const near = clientSchemas.length > 0 ? fc.oneof(...clientSchemas.map((s) => mutatedValue(s, schemas))) : oddValue
  const withOp = fc.tuple(fc.oneof(fc.constantFrom(...WS_OPS), oddText), fc.option(oddText, { nil: undefined }), fc.dictionary(oddKey, oddValue, { maxKeys: 4 }))
    .map(([op, req, rest]) => ({ ...rest, op, ...(req !== undefined ? { req } : {}) }))
  return fc.oneof(
    { weight: 5, arbitrary: near.map((v) => ({ text: JSON.stringify(v) ?? 'null' })) },
    { weight: 3, arbitrary: withOp.map((v) => ({ text: JSON.stringify(v) })) },
    { weight: 1, arbitrary: oddValue.map((v) => ({ text: JSON.stringify(v) ?? 'null' })) },
    { weight: 1, arbitrary: fc.constantFrom('{', '', 'null', '[]', '{"op":', '\u0000', '{"op":"ping"} trailing').map((text) => ({ text })) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => ({ binary: Buffer.from(b) })) },
    // past the message cap (1 MiB by default): the node closes with 1009
    { weight: 1, arbitrary: fc.constantFrom(300_000, 1_100_000).map((n) => ({ text: JSON.stringify({ op: 'ping', pad: 'x'.repeat(n) }) })) }
  )
}
