/** The benchmarks' raw-socket load client against a real node:http server. */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { RawHttpConnection } from '../../../bench/lib/raw-http.js'

describe('RawHttpConnection', () => {
  let server: http.Server
  let port = 0
  let connections = 0

  before(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString()
        if (req.url === '/echo') {
          res.writeHead(201, { 'Content-Length': Buffer.byteLength(body) })
          res.end(body)
        } else if (req.url === '/pieces') {
          // one answer in three writes, so the client sees it in several chunks
          res.writeHead(200, { 'Content-Length': 12 })
          res.write('abcd')
          setTimeout(() => { res.write('efgh'); setTimeout(() => res.end('ijkl'), 5) }, 5)
        } else if (req.url === '/close') {
          res.writeHead(200, { 'Content-Length': 2, Connection: 'close' })
          res.end('ok')
        } else if (req.url === '/whoami') {
          const from = req.socket.remoteAddress ?? ''
          res.writeHead(200, { 'Content-Length': Buffer.byteLength(from) })
          res.end(from)
        } else if (req.url === '/chunked') {
          res.write('no length')
          res.end()
        } else {
          res.writeHead(404, { 'Content-Length': 0 })
          res.end()
        }
      })
    })
    server.on('connection', () => { connections++ })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })

  after(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  test('sends a body and reads status and body; requests reuse the connection', async () => {
    const c = new RawHttpConnection(port)
    const before = connections
    const a = await c.request('POST', '/echo', Buffer.from('{"x":1}'))
    assert.equal(a.status, 201)
    assert.equal(a.body.toString(), '{"x":1}')
    const b = await c.request('GET', '/nowhere')
    assert.equal(b.status, 404)
    assert.equal(b.body.length, 0)
    assert.equal(connections - before, 1)
    c.close()
  })

  test('an answer that arrives in pieces is read whole', async () => {
    const c = new RawHttpConnection(port)
    const a = await c.request('GET', '/pieces')
    assert.equal(a.body.toString(), 'abcdefghijkl')
    c.close()
  })

  test('after `Connection: close` the next request opens a new connection', async () => {
    const c = new RawHttpConnection(port)
    const before = connections
    assert.equal((await c.request('GET', '/close')).body.toString(), 'ok')
    assert.equal((await c.request('POST', '/echo', Buffer.from('again'))).body.toString(), 'again')
    assert.equal(connections - before, 2)
    c.close()
  })

  test('an answer without Content-Length is refused with a clear error, and the connection recovers', async () => {
    const c = new RawHttpConnection(port)
    await assert.rejects(c.request('GET', '/chunked'), /without Content-Length/)
    assert.equal((await c.request('POST', '/echo', Buffer.from('fine'))).body.toString(), 'fine')
    c.close()
  })

  test('a second request while one is in flight is refused', async () => {
    const c = new RawHttpConnection(port)
    const first = c.request('GET', '/pieces')
    await assert.rejects(c.request('GET', '/pieces'), /already in flight/)
    assert.equal((await first).status, 200)
    c.close()
  })

  test('connects from the given local address', async () => {
    const c = new RawHttpConnection(port, '127.0.0.1', '127.0.0.9')
    assert.equal((await c.request('GET', '/whoami')).body.toString(), '127.0.0.9')
    c.close()
  })
})
