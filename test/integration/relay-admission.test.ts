/**
 * Hostile clients of the relay mailbox, through HTTP against real nodes (issue 25, items 5 and
 * 9): a client that invents a sender key per envelope is limited by its address and the
 * mailbox, the owner's real contact (another address: loopback is 127.0.0.0/8) still gets
 * through, and signed inbox reads spend a node-issued nonce, so a captured proof opens nothing.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { request } from 'node:http'
import nacl from 'tweetnacl'
import { buildTx, newAccount, type Account } from '../../src/client/index.js'
import { inboxAuthHeader, inboxReadText } from '../../src/relay/read-auth.js'
import { sign, toBase64, toHex } from '../../src/crypto/index.js'
import { envelopeFor } from '../helpers/envelopes.js'
import { errorMessage, startNode, stopAllNodes, type HttpResult, type NodeProcess } from '../helpers/node-process.js'

/** An HTTP request from a chosen loopback address, so that one test can be several clients. */
async function from (localAddress: string, node: NodeProcess, method: string, path: string, opts: { body?: unknown, headers?: Record<string, string> } = {}): Promise<HttpResult> {
  const url = new URL(path, node.url)
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body)
  return await new Promise((resolve, reject) => {
    const req = request({
      host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method, localAddress,
      headers: { ...opts.headers, ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {}) }
    }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let json: unknown
        try { json = text === '' ? undefined : JSON.parse(text) } catch { json = undefined }
        const headers = new Headers()
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') headers.set(name, value)
        resolve({ status: res.statusCode ?? 0, text, json, headers })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

const broadcast = async (address: string, node: NodeProcess, recipient: Uint8Array, text = 'hi'): ReturnType<typeof from> =>
  await from(address, node, 'POST', '/relay/broadcast', { body: { envelope: envelopeFor(recipient, '', text) } })

const count = async (node: NodeProcess, pub: string): Promise<number> =>
  ((await from('127.0.0.1', node, 'GET', `/relay/inbox/count?pub=${pub}`)).json as { count: number }).count

describe('hostile relay clients', { timeout: 120_000 }, () => {
  /** default limits */
  let plain: NodeProcess
  /** signed reads; the admission rates off and a stored cap of 40, so that the cap alone is at work and the test is quick */
  let node: NodeProcess
  const owner: Account = newAccount()
  const mailbox = nacl.box.keyPair()
  const other = nacl.box.keyPair()
  const pub = toHex(mailbox.publicKey)
  const otherPub = toHex(other.publicKey)

  before(async () => {
    // one after the other: two starting at once on a busy 2-core host can outlast the helper's start timeout
    plain = await startNode()
    node = await startNode({
      alloc: [{ pub: owner.pub, amountUt: 1_000_000 }],
      env: { SVC_RELAY_READ_AUTH: 'true', SVC_RELAY_CLIENT_MAILBOX_PER_MIN: '0', SVC_RELAY_MAILBOX_PER_MIN: '0', SVC_RELAY_CLIENT_MAILBOX_MAX: '40', SVC_RELAY_SENDER_RPS: '0' }
    })
    await node.client.submitAndWait(buildTx(owner, { type: 'REGISTER_KEY', payload: { x25519_pub: pub, nickname: 'owner' } }))
    await node.client.submitAndWait(buildTx(owner, { type: 'LINK_DEVICE', payload: { device_x25519_pub: otherPub, device_name: 'tablet' } }))
  })

  after(async () => { await stopAllNodes() })

  test('30 envelopes from 30 invented senders, one client, one mailbox: a minute\'s allowance stored, the rest 429 naming the limit; a contact elsewhere gets through', async () => {
    const node = plain
    const limits = (await from('127.0.0.1', node, 'GET', '/api/limits')).json as { relay: { client_mailbox_per_min: number, client_mailbox_max: number, mailbox_per_min: number } }
    assert.deepEqual([limits.relay.client_mailbox_per_min, limits.relay.client_mailbox_max, limits.relay.mailbox_per_min], [20, 1000, 600])
    const victim = nacl.box.keyPair()
    const answers = await Promise.all(Array.from({ length: 30 }, async (_, i) => await broadcast('127.0.0.1', node, victim.publicKey, `spam ${i}`)))
    const stored = answers.filter((a) => a.status === 200).length
    const refused = answers.filter((a) => a.status === 429)
    assert.equal(stored, 20)
    assert.equal(refused.length, 10)
    assert.match(errorMessage(refused[0]), /at most 20 a minute \(SVC_RELAY_CLIENT_MAILBOX_PER_MIN\)/)
    assert.equal(refused[0].headers.get('retry-after'), '3')

    const contact = await broadcast('127.0.0.2', node, victim.publicKey, 'a real message')
    assert.equal(contact.status, 200, contact.text)
    // the same client is not held back from other mailboxes: a fan-out to 16 device keys passes
    const devices = Array.from({ length: 16 }, () => nacl.box.keyPair())
    const fanOut = await Promise.all(devices.map(async (d) => (await broadcast('127.0.0.1', node, d.publicKey)).status))
    assert.deepEqual(fanOut, new Array<number>(16).fill(200))
    assert.equal(await count(node, toHex(victim.publicKey)), 21)
  })

  test('one address cannot fill a stranger\'s mailbox: its share is capped, later uploads refused, the owner\'s contact and the stored envelopes untouched', async () => {
    const victim = other
    const before = await broadcast('127.0.0.2', node, victim.publicKey, 'from a friend, before')
    assert.equal(before.status, 200)
    const statuses: number[] = []
    let refusal: HttpResult | undefined
    for (let i = 0; i < 60; i++) {
      const res = await broadcast('127.0.0.1', node, victim.publicKey, `spam ${i}`)
      statuses.push(res.status)
      if (res.status !== 200) refusal = res
    }
    assert.equal(statuses.filter((s) => s === 200).length, 40)
    assert.deepEqual(statuses.slice(40), new Array<number>(20).fill(429))
    assert.ok(refusal !== undefined)
    assert.match(errorMessage(refusal), /already stored 40 envelopes in mailbox .* \(SVC_RELAY_CLIENT_MAILBOX_MAX\)/)
    assert.ok(Number(refusal.headers.get('retry-after')) > 3600, 'room again only as its envelopes leave the retention time')

    const afterwards = await broadcast('127.0.0.2', node, victim.publicKey, 'from a friend, after')
    assert.equal(afterwards.status, 200, afterwards.text)
    const ids = (await node.client.inbox(otherPub, { limit: 100, reader: owner })).items.map((item) => item.id)
    assert.equal(ids.length, 42)
    for (const id of [(before.json as { id: string }).id, (afterwards.json as { id: string }).id]) assert.ok(ids.includes(id))
    // another mailbox is open to the same address
    assert.equal((await broadcast('127.0.0.1', node, mailbox.publicKey, 'private')).status, 200)
  })

  const nonceFor = async (mailboxPub: string, address = '127.0.0.1'): Promise<{ nonce: string, node: string, pub: string }> => {
    const res = await from(address, node, 'POST', '/relay/inbox/nonce', { body: { pub: mailboxPub } })
    assert.equal(res.status, 200, res.text)
    return res.json as { nonce: string, node: string, pub: string }
  }
  const header = (issued: { nonce: string, node: string }, endpoint: 'GET /relay/inbox' | 'GET /relay/inbox/count', mailboxPub: string): Record<string, string> => ({
    'Kith-Inbox-Auth': inboxAuthHeader(owner.pub, issued.nonce, toBase64(sign(Buffer.from(inboxReadText(issued.node, endpoint, mailboxPub, issued.nonce), 'utf8'), owner.keyPair.secretKey)))
  })

  test('signed reads: a read proven once is served; the same proof replayed is refused', async () => {
    const proof = header(await nonceFor(pub), 'GET /relay/inbox', pub)
    const read = await from('127.0.0.1', node, 'GET', `/relay/inbox?pub=${pub}`, { headers: proof })
    assert.equal(read.status, 200, read.text)
    assert.equal((read.json as { count: number }).count, 1)
    const replay = await from('127.0.0.3', node, 'GET', `/relay/inbox?pub=${pub}`, { headers: proof })
    assert.equal(replay.status, 401)
    assert.match(errorMessage(replay), /unknown, expired or already used.*POST \/relay\/inbox\/nonce/)
    // the client library does the same dance
    assert.equal((await node.client.inbox(pub, { reader: owner })).count, 1)
    assert.equal((await node.client.inboxCount(pub, owner)).count, 1)
  })

  test('signed reads: a proof for one endpoint or one mailbox opens no other; the old query proof is refused with a pointer', async () => {
    const forInbox = header(await nonceFor(pub), 'GET /relay/inbox', pub)
    const onCount = await from('127.0.0.1', node, 'GET', `/relay/inbox/count?pub=${pub}`, { headers: forInbox })
    assert.equal(onCount.status, 403)
    assert.match(errorMessage(onCount), /not a valid signature/)
    // a nonce minted for the owner's other mailbox, signed for it: not for this one
    const forOther = header(await nonceFor(otherPub), 'GET /relay/inbox', otherPub)
    const onThis = await from('127.0.0.1', node, 'GET', `/relay/inbox?pub=${pub}`, { headers: forOther })
    assert.equal(onThis.status, 403)
    assert.match(errorMessage(onThis), /issued for another mailbox/)
    // refused proofs did not spend the nonces: each still opens what it was made for
    assert.equal((await from('127.0.0.1', node, 'GET', `/relay/inbox?pub=${pub}`, { headers: forInbox })).status, 200)
    assert.equal((await from('127.0.0.1', node, 'GET', `/relay/inbox?pub=${otherPub}`, { headers: forOther })).status, 200)

    const ts = Math.floor(Date.now() / 1000)
    const legacy = new URLSearchParams({ pub, ed25519_pub: owner.pub, ts: String(ts), sig: toBase64(sign(Buffer.from(`inbox-read:${pub}:${ts}`, 'utf8'), owner.keyPair.secretKey)) })
    const old = await from('127.0.0.1', node, 'GET', `/relay/inbox?${legacy.toString()}`)
    assert.equal(old.status, 401)
    assert.match(errorMessage(old), /no longer take ed25519_pub, ts and sig in the query.*Kith-Inbox-Auth/)
  })

  test('signed reads: minting nonces is bounded per client address; the owner elsewhere still reads', async () => {
    const limits = (await from('127.0.0.1', node, 'GET', '/api/limits')).json as { relay: { read_auth_required: boolean, read_nonce: { max_per_client: number, ttl_s: number } } }
    assert.equal(limits.relay.read_auth_required, true)
    const { max_per_client: perClient, ttl_s: ttl } = limits.relay.read_nonce
    for (let i = 0; i < perClient; i++) await nonceFor(toHex(nacl.box.keyPair().publicKey), '127.0.0.9')
    const refused = await from('127.0.0.9', node, 'POST', '/relay/inbox/nonce', { body: { pub } })
    assert.equal(refused.status, 429)
    assert.match(errorMessage(refused), /unused inbox read nonces/)
    const retry = Number(refused.headers.get('retry-after'))
    assert.ok(retry >= 1 && retry <= ttl, `Retry-After ${retry}`)
    const proof = header(await nonceFor(pub, '127.0.0.4'), 'GET /relay/inbox', pub)
    assert.equal((await from('127.0.0.4', node, 'GET', `/relay/inbox?pub=${pub}`, { headers: proof })).status, 200)
  })
})
