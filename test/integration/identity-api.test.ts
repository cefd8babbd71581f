/** The identity, device, contact and relay registries through HTTP against a real node. */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildTx, newAccount, type Account } from '../../src/client/index.js'
import { ApiError } from '../../src/client/index.js'
import { startNode, stopAllNodes, type NodeProcess } from '../helpers/node-process.js'

describe('registries over HTTP', () => {
  let node: NodeProcess
  const alice: Account = newAccount()
  const bob: Account = newAccount()
  const relay: Account = newAccount()
  const PHONE = '11'.repeat(32)
  const LAPTOP = '22'.repeat(32)

  before(async () => {
    node = await startNode({ alloc: [alice, bob, relay].map((a) => ({ pub: a.pub, amountUt: 10_000_000 })), blockIntervalMs: 100 })
  })
  after(async () => { await stopAllNodes() })

  test('REGISTER_KEY and LINK_DEVICE show in /api/identity (by pubkey or address) and /api/devices', async () => {
    await assert.rejects(node.client.request('GET', `/api/identity/${alice.pub}`), (err: unknown) => err instanceof ApiError && err.status === 404)
    await node.client.submitAndWait(buildTx(alice, { type: 'REGISTER_KEY', payload: { x25519_pub: '33'.repeat(32), nickname: 'alice' } }))
    await node.client.submitAndWait(buildTx(alice, { type: 'LINK_DEVICE', payload: { device_x25519_pub: PHONE, device_name: 'phone' } }))
    await node.client.submitAndWait(buildTx(alice, { type: 'LINK_DEVICE', payload: { device_x25519_pub: LAPTOP, device_name: 'laptop' } }))
    const byAddress = await node.client.request<Record<string, unknown>>('GET', `/api/identity/${alice.address}`)
    assert.deepEqual(byAddress, { pub_key: alice.pub, address: alice.address, x25519_pub: '33'.repeat(32), nickname: 'alice', registered: true, device_count: 2 })
    const devices = await node.client.request<{ count: number, devices: Array<{ x25519_pub: string, name: string }> }>('GET', `/api/devices/${alice.pub}`)
    assert.equal(devices.count, 2)
    assert.deepEqual(devices.devices.map((d) => [d.x25519_pub, d.name]), [[PHONE, 'phone'], [LAPTOP, 'laptop']])
    await assert.rejects(node.client.submit(buildTx(bob, { type: 'LINK_DEVICE', payload: { device_x25519_pub: PHONE } })).then(async (r) => await node.client.waitForConfirmation(r.id, { timeoutMs: 1500 })))
  })

  test('contact requests move pending -> accepted and show in /relay/contacts', async () => {
    await node.client.submitAndWait(buildTx(bob, { type: 'CONTACT_REQUEST', to: alice.pub, amount: 5000, payload: { intro: 'hello' } }))
    let contacts = await node.client.request<{ count: number, contacts: Array<Record<string, unknown>> }>('GET', `/relay/contacts?pub=${alice.pub}`)
    assert.equal(contacts.count, 1)
    assert.equal(contacts.contacts[0].requester_pub, bob.pub)
    assert.equal(contacts.contacts[0].requester_addr, bob.address)
    assert.equal(contacts.contacts[0].status, 'pending')
    assert.equal(contacts.contacts[0].intro, 'hello')
    assert.equal(contacts.contacts[0].fee_ut, 5000)
    await node.client.submitAndWait(buildTx(alice, { type: 'ACCEPT_CONTACT', to: bob.pub }))
    contacts = await node.client.request('GET', `/relay/contacts?pub=${alice.pub}`)
    assert.equal(contacts.contacts[0].status, 'accepted')
    await assert.rejects(node.client.submit(buildTx(bob, { type: 'CONTACT_REQUEST', to: alice.pub, amount: 4000 })), (err: unknown) => err instanceof ApiError && err.status === 400 && err.message.includes('5000'))
    await assert.rejects(node.client.request('GET', '/relay/contacts?pub=nope'), (err: unknown) => err instanceof ApiError && err.status === 400)
  })

  test('REGISTER_RELAY and HEARTBEAT show in /api/relays', async () => {
    await node.client.submitAndWait(buildTx(relay, { type: 'REGISTER_RELAY', payload: { x25519_pub_key: '44'.repeat(32), fee_per_msg_ut: 0, multiaddr: '/ip4/127.0.0.1/tcp/4001' } }))
    await node.client.submitAndWait(buildTx(relay, { type: 'HEARTBEAT' }))
    const relays = await node.client.request<Array<{ pub_key: string, address: string, relay: { x25519_pub_key: string, fee_per_msg_ut: number, multiaddr?: string }, last_heartbeat?: number }>>('GET', '/api/relays')
    // the node's own account key is a relay from genesis (kith init), beside the one registered here
    assert.deepEqual(relays.map((r) => r.pub_key).sort(), [node.validatorPub, relay.pub].sort())
    const registered = relays.find((r) => r.pub_key === relay.pub)
    assert.equal(registered?.relay.x25519_pub_key, '44'.repeat(32))
    assert.equal(registered?.relay.multiaddr, '/ip4/127.0.0.1/tcp/4001')
    assert.ok((registered?.last_heartbeat ?? 0) > 1_700_000_000)
  })
})
