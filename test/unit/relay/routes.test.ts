import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { openApiDocument } from '../../../src/api/openapi.js'
import { relayRoutes } from '../../../src/api/routes/relay.js'
import { MAX_CIPHERTEXT_BYTES, type RelayService } from '../../../src/relay/index.js'
import { deleteText } from '../../../src/relay/envelope.js'
import { inboxAuthHeader, inboxReadText } from '../../../src/relay/read-auth.js'
import { generateSealKey } from '../../../src/relay/seal.js'
import { FakeRegistry, T0, call, fakeClock, newClient, newService, openEnvelope, sealEnvelope, signText, startApp, withTempDir, type TestApp } from './helpers.js'

const T0S = T0 / 1000

async function withApp (opts: { registry?: FakeRegistry, requireReadAuth?: boolean, rateLimitPerSender?: number }, fn: (app: TestApp, service: RelayService) => Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    const service = newService(dir, { identity: opts.registry, requireReadAuth: opts.requireReadAuth })
    const app = await startApp(service, { rateLimitPerSender: opts.rateLimitPerSender ?? 0, now: () => T0 })
    try {
      await fn(app, service)
    } finally {
      await app.close()
      await service.stop()
    }
  })
}

describe('relay routes', () => {
  test('broadcast, inbox paging, count and delete over HTTP', async () => {
    const registry = new FakeRegistry()
    await withApp({ registry }, async ({ url }) => {
      const alice = newClient()
      const bob = newClient()
      registry.link(bob.edPub, bob.pub)
      const ids: string[] = []
      for (let i = 0; i < 3; i++) {
        const res = await call(`${url}/relay/broadcast`, 'POST', { envelope: sealEnvelope(alice, bob.pub, `hello ${i}`) })
        assert.equal(res.status, 200)
        assert.equal(res.body.status, 'broadcast')
        ids.push(res.body.id as string)
      }
      const count = await call(`${url}/relay/inbox/count?pub=${bob.pub}`, 'GET')
      assert.deepEqual(count.body, { pub: bob.pub, count: 3 })

      const page = await call(`${url}/relay/inbox?pub=${bob.pub}&limit=2`, 'GET')
      assert.equal(page.status, 200)
      // written as it is (not through Koa's body handling): the headers must still be right
      assert.equal(page.headers.get('content-type'), 'application/json; charset=utf-8')
      assert.equal(Number(page.headers.get('content-length')), Buffer.byteLength(JSON.stringify(page.body)))
      const head = await fetch(`${url}/relay/inbox?pub=${bob.pub}&limit=2`, { method: 'HEAD' })
      assert.equal(head.status, 200)
      assert.equal(await head.text(), '')
      assert.equal(page.body.pub, bob.pub)
      assert.equal(page.body.count, 2)
      assert.equal(page.body.has_more, true)
      const items = page.body.items as Array<{ id: string, sent_at: number, nonce: string, ciphertext: string, sender_pub: string, sent_at_human: string }>
      assert.equal(items[0].sent_at, T0S)
      assert.equal(items[0].sent_at_human, '2026-01-02T03:04:05Z')
      assert.match(openEnvelope(items[0], bob) ?? '', /^hello /)
      const last = items[1]
      const rest = await call(`${url}/relay/inbox?pub=${bob.pub}&since=${last.sent_at}&after=${last.id}&limit=2`, 'GET')
      assert.equal(rest.body.count, 1)
      assert.equal(rest.body.has_more, false)
      assert.deepEqual(new Set([...items.map((i) => i.id), (rest.body.items as Array<{ id: string }>)[0].id]), new Set(ids))
      // default page size
      assert.equal((await call(`${url}/relay/inbox?pub=${bob.pub}`, 'GET')).body.count, 3)

      const id = ids[0]
      const del = await call(`${url}/relay/inbox/${id}?pub=${bob.pub}`, 'DELETE', { ed25519_pub: bob.edPub, sig: signText(bob, deleteText(id, bob.pub, T0S)), ts: T0S })
      assert.deepEqual({ status: del.status, body: del.body }, { status: 200, body: { id, status: 'deleted' } })
      // the signature may also come as query parameters, for clients that cannot send a DELETE body
      const id2 = ids[1]
      const q = new URLSearchParams({ pub: bob.pub, ed25519_pub: bob.edPub, ts: String(T0S), sig: signText(bob, deleteText(id2, bob.pub, T0S)) })
      assert.equal((await call(`${url}/relay/inbox/${id2}?${q.toString()}`, 'DELETE')).status, 200)
      assert.equal((await call(`${url}/relay/inbox/count?pub=${bob.pub}`, 'GET')).body.count, 1)
    })
  })

  test('error statuses and {"error"} bodies', async () => {
    const registry = new FakeRegistry()
    await withApp({ registry }, async ({ url }) => {
      const alice = newClient()
      const bob = newClient()
      registry.link(bob.edPub, bob.pub)
      const expect = async (path: string, method: string, body: unknown, status: number, pattern: RegExp): Promise<void> => {
        const res = await call(`${url}${path}`, method, body)
        assert.equal(res.status, status, `${method} ${path}: ${JSON.stringify(res.body)}`)
        assert.deepEqual(Object.keys(res.body), ['error'])
        assert.match(res.body.error as string, pattern)
      }
      await expect('/relay/broadcast', 'POST', {}, 400, /^envelope/)
      await expect('/relay/broadcast', 'POST', { envelope: { ...sealEnvelope(alice, bob.pub, 'x'), nonce: 'AAAA' } }, 400, /^envelope\.nonce/)
      await expect('/relay/broadcast', 'POST', { envelope: { ...sealEnvelope(alice, bob.pub, 'x'), ciphertext: Buffer.alloc(MAX_CIPHERTEXT_BYTES + 1).toString('base64') } }, 413, /exceeds the limit of 65536 bytes/)
      await expect('/relay/broadcast', 'POST', 'not json', 400, /JSON/)
      await expect('/relay/send', 'POST', { recipient_pub: 'x', msg_b64: 'aGk=' }, 400, /^recipient_pub/)
      await expect('/relay/inbox', 'GET', undefined, 400, /^pub/)
      await expect('/relay/inbox?pub=abc', 'GET', undefined, 400, /^pub/)
      await expect(`/relay/inbox?pub=${bob.pub}&limit=0`, 'GET', undefined, 400, /^limit/)
      await expect(`/relay/inbox?pub=${bob.pub}&since=yesterday`, 'GET', undefined, 400, /^since/)
      await expect('/relay/inbox/count', 'GET', undefined, 400, /^pub/)

      const { body } = await call(`${url}/relay/broadcast`, 'POST', { envelope: sealEnvelope(alice, bob.pub, 'x') })
      const id = body.id as string
      const path = `/relay/inbox/${id}?pub=${bob.pub}`
      const mallory = newClient()
      await expect(path, 'DELETE', { ed25519_pub: bob.edPub, sig: signText(mallory, deleteText(id, bob.pub, T0S)), ts: T0S }, 403, /signature/)
      await expect(path, 'DELETE', { ed25519_pub: mallory.edPub, sig: signText(mallory, deleteText(id, bob.pub, T0S)), ts: T0S }, 403, /not linked/)
      await expect(path, 'DELETE', { ed25519_pub: bob.edPub, sig: signText(bob, deleteText(id, bob.pub, T0S - 600)), ts: T0S - 600 }, 400, /timestamp/)
      await expect(path, 'DELETE', undefined, 400, /^ed25519_pub/)
      const unknown = 'ab'.repeat(16)
      await expect(`/relay/inbox/${unknown}?pub=${bob.pub}`, 'DELETE', { ed25519_pub: bob.edPub, sig: signText(bob, deleteText(unknown, bob.pub, T0S)), ts: T0S }, 404, /no envelope/)
      await expect('/relay/nothing', 'GET', undefined, 404, /no route/)
    })
    await withApp({}, async ({ url }) => {
      const bob = newClient()
      const id = 'ab'.repeat(16)
      const res = await call(`${url}/relay/inbox/${id}?pub=${bob.pub}`, 'DELETE', { ed25519_pub: bob.edPub, sig: signText(bob, deleteText(id, bob.pub, T0S)), ts: T0S })
      assert.equal(res.status, 503)
      assert.match(res.body.error as string, /identity resolver/)
    })
  })

  test('per-sender rate limit on broadcast: 429 with Retry-After; another sender is not affected', async () => {
    await withApp({ rateLimitPerSender: 2 }, async ({ url }) => {
      const spammer = newClient()
      const friend = newClient()
      const bob = newClient()
      const statuses: number[] = []
      for (let i = 0; i < 6; i++) statuses.push((await call(`${url}/relay/broadcast`, 'POST', { envelope: sealEnvelope(spammer, bob.pub, `s${i}`) })).status)
      assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429])
      const limited = await call(`${url}/relay/broadcast`, 'POST', { envelope: sealEnvelope(spammer, bob.pub, 'again') })
      assert.equal(limited.headers.get('retry-after'), '1')
      assert.match(limited.body.error as string, /too many envelopes/)
      assert.equal((await call(`${url}/relay/broadcast`, 'POST', { envelope: sealEnvelope(friend, bob.pub, 'hi') })).status, 200)
    })
  })

  test('a full mailbox answers 429 RELAY_MAILBOX_FULL; /relay/send seals with the node key', async () => {
    await withTempDir(async (dir) => {
      const nodeKey = generateSealKey()
      const service = newService(dir, { clock: fakeClock(), limits: { maxPerSender: 1 }, nodeSealKey: nodeKey })
      const app = await startApp(service)
      try {
        const alice = newClient()
        const bob = newClient()
        assert.equal((await call(`${app.url}/relay/broadcast`, 'POST', { envelope: sealEnvelope(alice, bob.pub, '1') })).status, 200)
        const full = await call(`${app.url}/relay/broadcast`, 'POST', { envelope: sealEnvelope(alice, bob.pub, '2') })
        assert.equal(full.status, 429)
        assert.match(full.body.error as string, /mailbox/)

        const carol = newClient()
        const sent = await call(`${app.url}/relay/send`, 'POST', { recipient_pub: carol.pub, msg_b64: Buffer.from('legacy').toString('base64') })
        assert.equal(sent.status, 200)
        assert.equal(sent.body.status, 'sent')
        assert.equal(sent.body.recipient_pub, carol.pub)
        const item = (await call(`${app.url}/relay/inbox?pub=${carol.pub}`, 'GET')).body.items as Array<{ id: string, nonce: string, ciphertext: string, sender_pub: string }>
        assert.equal(item[0].id, sent.body.id)
        assert.equal(item[0].sender_pub, Buffer.from(nodeKey.publicKey).toString('hex'))
        assert.equal(openEnvelope(item[0], carol), 'legacy')
      } finally {
        await app.close()
        await service.stop()
      }
    })
  })

  test('signed reads when required: 401 without, the old query proof refused with a pointer, a nonce and the header read once', async () => {
    const registry = new FakeRegistry()
    await withApp({ registry, requireReadAuth: true }, async ({ url }) => {
      const bob = newClient()
      registry.link(bob.edPub, bob.pub)
      assert.equal((await call(`${url}/relay/inbox?pub=${bob.pub}`, 'GET')).status, 401)
      assert.equal((await call(`${url}/relay/inbox/count?pub=${bob.pub}`, 'GET')).status, 401)
      const legacy = new URLSearchParams({ pub: bob.pub, ed25519_pub: bob.edPub, ts: String(T0S), sig: 'x' })
      const old = await call(`${url}/relay/inbox?${legacy.toString()}`, 'GET')
      assert.equal(old.status, 401)
      assert.match(old.body.error as string, /POST \/relay\/inbox\/nonce.*Kith-Inbox-Auth/)

      const issued = await call(`${url}/relay/inbox/nonce`, 'POST', { pub: bob.pub.toUpperCase() })
      assert.equal(issued.status, 200)
      assert.equal(issued.body.pub, bob.pub)
      assert.equal(issued.body.required, true)
      assert.equal(issued.body.expires_at, T0S + 60)
      const nonce = issued.body.nonce as string
      const header = inboxAuthHeader(bob.edPub, nonce, signText(bob, inboxReadText(issued.body.node as string, 'GET /relay/inbox', bob.pub, nonce)))
      const read = async (): Promise<Response> => await fetch(`${url}/relay/inbox?pub=${bob.pub}`, { headers: { 'Kith-Inbox-Auth': header } })
      const ok = await read()
      assert.equal(ok.status, 200)
      assert.equal(((await ok.json()) as { count: number }).count, 0)
      const replay = await read()
      assert.equal(replay.status, 401)
      assert.match(((await replay.json()) as { error: string }).error, /already used/)
      assert.equal((await call(`${url}/relay/inbox/nonce`, 'POST', { pub: 'nope' })).status, 400)
    })
  })

  test('the route declarations produce an OpenAPI document', async () => {
    await withTempDir(async (dir) => {
      const service = newService(dir)
      const doc = openApiDocument(relayRoutes(service, { rateLimitPerSender: 1 })) as { paths: Record<string, Record<string, unknown>> }
      assert.deepEqual(Object.keys(doc.paths).sort(), ['/relay/broadcast', '/relay/inbox', '/relay/inbox/count', '/relay/inbox/nonce', '/relay/inbox/{envID}', '/relay/send'])
      assert.ok(doc.paths['/relay/inbox/{envID}'].delete !== undefined)
      await service.stop()
    })
  })
})
