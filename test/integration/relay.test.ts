/**
 * The relay user story across two real nodes: Alice registers her key and links two devices;
 * Bob looks her up, seals a message once per device key with NaCl box (tweetnacl, as app
 * clients do), broadcasts each envelope to node A; each device finds its copy in its inbox on
 * node B, opens it with its own key, and deletes it with a signed DELETE.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import nacl from 'tweetnacl'
import { buildTx, newAccount } from '../../src/client/index.js'
import { sign, toBase64, toHex } from '../../src/crypto/index.js'
import { http, KITH_BIN, pickBasePort, REPO_ROOT, startNode, stopAllNodes, waitFor, type NodeProcess } from '../helpers/node-process.js'

const run = promisify(execFile)
const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64')

interface InboxItem { id: string, sender_pub: string, sender_ed25519_pub: string, nonce: string, ciphertext: string }

describe('relay mailbox across two nodes', { timeout: 120_000 }, () => {
  let dir: string
  let a: NodeProcess
  let b: NodeProcess
  const alice = newAccount()
  const bob = newAccount()
  const phone = nacl.box.keyPair()
  const laptop = nacl.box.keyPair()
  const bobBox = nacl.box.keyPair()

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kith-relay-'))
    const basePort = await pickBasePort(2)
    await run(KITH_BIN, ['testnet', '--validators', '2', '--output', join(dir, 'net'), '--base-port', String(basePort),
      '--alloc', `${alice.pub}=1000000`, '--alloc', `${bob.pub}=1000000`], {
      cwd: REPO_ROOT, env: { ...process.env, PATH: `${join(REPO_ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}` }
    })
    ;[a, b] = await Promise.all([0, 1].map(async (i) => await startNode({ home: join(dir, 'net', `node${i}`), blockIntervalMs: 150 })))
    await waitFor(async () => (await a.client.netstats()).height >= 1 && (await b.client.netstats()).height >= 1, 30_000)
  })

  after(async () => {
    await stopAllNodes()
    await rm(dir, { recursive: true, force: true })
  })

  test('register, link devices, seal per device, fetch on the other node, open, delete', async () => {
    await a.client.submitAndWait(buildTx(alice, { type: 'REGISTER_KEY', payload: { x25519_pub: toHex(phone.publicKey), nickname: 'alice' } }))
    await a.client.submitAndWait(buildTx(alice, { type: 'LINK_DEVICE', payload: { device_x25519_pub: toHex(phone.publicKey), device_name: 'phone' } }))
    await a.client.submitAndWait(buildTx(alice, { type: 'LINK_DEVICE', payload: { device_x25519_pub: toHex(laptop.publicKey), device_name: 'laptop' } }))
    await waitFor(async () => (await b.client.request<{ count: number }>('GET', `/api/devices/${alice.pub}`)).count === 2, 10_000)

    // Bob, on node B's registry view, seals once per device and posts every envelope to node A.
    const devices = (await b.client.request<{ devices: Array<{ x25519_pub: string }> }>('GET', `/api/devices/${alice.address}`)).devices
    const sent = new Map<string, string>()
    for (const device of devices) {
      const nonce = nacl.randomBytes(24)
      const ciphertext = nacl.box(Buffer.from(`hello ${device.x25519_pub.slice(0, 6)}`), nonce, Buffer.from(device.x25519_pub, 'hex'), bobBox.secretKey)
      const res = await http(a.url, 'POST', '/relay/broadcast', {
        body: { envelope: { id: 'x', sender_pub: toHex(bobBox.publicKey), recipient_pub: device.x25519_pub, sender_ed25519_pub: bob.pub, fee_ut: 0, fee_sig: null, nonce: b64(nonce), ciphertext: b64(ciphertext), sent_at: 0 } }
      })
      assert.equal(res.status, 200, res.text)
      const { id, status } = res.json as { id: string, status: string }
      assert.equal(status, 'broadcast')
      assert.match(id, /^[0-9a-f]{32}$/)
      sent.set(device.x25519_pub, id)
    }

    for (const device of [phone, laptop]) {
      const pub = toHex(device.publicKey)
      const inbox = await waitFor(async () => {
        const page = await b.client.request<{ count: number, has_more: boolean, items: InboxItem[] }>('GET', `/relay/inbox?pub=${pub}`)
        return page.count > 0 ? page : undefined
      }, 15_000, { message: 'the envelope never reached node B' })
      assert.equal(inbox.items.length, 1)
      const item = inbox.items[0]
      assert.equal(item.id, sent.get(pub))
      assert.equal(item.sender_ed25519_pub, bob.pub)
      const opened = nacl.box.open(Buffer.from(item.ciphertext, 'base64'), Buffer.from(item.nonce, 'base64'), Buffer.from(item.sender_pub, 'hex'), device.secretKey)
      assert.ok(opened !== null)
      assert.equal(Buffer.from(opened).toString(), `hello ${pub.slice(0, 6)}`)

      const ts = Math.floor(Date.now() / 1000)
      const forged = toBase64(sign(Buffer.from(`inbox-delete:${item.id}:${pub}:${ts}`), bob.keyPair.secretKey))
      const refused = await http(b.url, 'DELETE', `/relay/inbox/${item.id}?pub=${pub}`, { body: { ed25519_pub: bob.pub, sig: forged, ts } })
      assert.equal(refused.status, 403)
      const sig = toBase64(sign(Buffer.from(`inbox-delete:${item.id}:${pub}:${ts}`), alice.keyPair.secretKey))
      const deleted = await http(b.url, 'DELETE', `/relay/inbox/${item.id}?pub=${pub}`, { body: { ed25519_pub: alice.pub, sig, ts } })
      assert.equal(deleted.status, 200, deleted.text)
      assert.deepEqual(deleted.json, { id: item.id, status: 'deleted' })
      const count = await b.client.request<{ count: number }>('GET', `/relay/inbox/count?pub=${pub}`)
      assert.equal(count.count, 0)
      // the deletion travels too
      await waitFor(async () => (await a.client.request<{ count: number }>('GET', `/relay/inbox/count?pub=${pub}`)).count === 0, 10_000)
    }
    const version = await a.client.request<{ features: string[] }>('GET', '/api/well-known-version')
    assert.ok(version.features.includes('relay_mailbox') && version.features.includes('relay_broadcast'))
  })
  test('a node that was stopped while envelopes arrived gets them by anti-entropy when it returns', async () => {
    await b.stop()
    const device = nacl.box.keyPair()
    const ids: string[] = []
    for (let i = 0; i < 5; i++) {
      const nonce = nacl.randomBytes(24)
      const ciphertext = nacl.box(Buffer.from(`while you were away ${i}`), nonce, device.publicKey, bobBox.secretKey)
      const res = await http(a.url, 'POST', '/relay/broadcast', {
        body: { envelope: { id: 'x', sender_pub: toHex(bobBox.publicKey), recipient_pub: toHex(device.publicKey), sender_ed25519_pub: '', fee_ut: 0, fee_sig: null, nonce: b64(nonce), ciphertext: b64(ciphertext), sent_at: 0 } }
      })
      assert.equal(res.status, 200, res.text)
      ids.push((res.json as { id: string }).id)
    }
    await b.start()
    const pub = toHex(device.publicKey)
    const page = await waitFor(async () => {
      const inbox = await b.client.request<{ count: number, items: InboxItem[] }>('GET', `/relay/inbox?pub=${pub}`)
      return inbox.count === ids.length ? inbox : undefined
    }, 20_000, { message: 'the returning node never caught up on the mailbox' })
    assert.deepEqual(new Set(page.items.map((item) => item.id)), new Set(ids))
    assert.equal(page.items[0].sender_ed25519_pub, '')
  })
})
