/**
 * Hostile identities against one real node with signed inbox reads (SVC_RELAY_READ_AUTH):
 * a newcomer claiming a victim's X25519 key (REGISTER_KEY or LINK_DEVICE, either role) is
 * refused at POST /api/tx, so its signed delete and read of the victim's mailbox are refused
 * and the victim's envelopes stay; a CREATE_POST whose hosting_relay is its own author or no
 * registered relay is refused and moves no fee. The node keeps serving throughout.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import nacl from 'tweetnacl'
import { ApiError, accountFrom, buildTx, createPostTx, newAccount, publishRequest, type Account, type PublishResponse, type Transaction } from '../../src/client/index.js'
import { keyPairFromSeed, sign, toBase64, toHex } from '../../src/crypto/index.js'
import { envelopeFor } from '../helpers/envelopes.js'
import { http, startNode, stopAllNodes, type HttpResult, type NodeProcess } from '../helpers/node-process.js'

const FUNDS = 10_000_000

describe('hostile identities', { timeout: 90_000 }, () => {
  let node: NodeProcess
  const victim = newAccount()
  const attacker = newAccount()
  const author = newAccount()
  const victimBox = nacl.box.keyPair()
  const victimPhone = nacl.box.keyPair()
  const VICTIM_X = toHex(victimBox.publicKey)
  const PHONE_X = toHex(victimPhone.publicKey)

  const submit = async (tx: Transaction): Promise<HttpResult> => await http(node.url, 'POST', '/api/tx', { body: tx })
  const balance = async (pub: string): Promise<number> => (await node.client.address(pub)).balance_ut
  const errorOf = (res: HttpResult): string => (res.json as { error: string }).error

  before(async () => {
    node = await startNode({
      alloc: [victim, attacker, author].map((a) => ({ pub: a.pub, amountUt: FUNDS })),
      env: { SVC_RELAY_READ_AUTH: 'true' }
    })
  })

  after(async () => {
    await stopAllNodes()
  })

  test('an attacker cannot take over a victim\'s mailbox key, so cannot delete or read its envelopes', async () => {
    await node.client.submitAndWait(buildTx(victim, { type: 'REGISTER_KEY', payload: { x25519_pub: VICTIM_X, nickname: 'victim' } }))
    await node.client.submitAndWait(buildTx(victim, { type: 'LINK_DEVICE', payload: { device_x25519_pub: PHONE_X, device_name: 'phone' } }))
    const ids: string[] = []
    for (const text of ['one', 'two']) ids.push((await node.client.broadcast(envelopeFor(victimBox.publicKey, '', text))).id)
    assert.deepEqual((await node.client.inbox(VICTIM_X, { reader: victim })).items.map((i) => i.id).sort(), [...ids].sort())

    const attackerBefore = await balance(attacker.pub)
    const claims = [
      { type: 'REGISTER_KEY' as const, payload: { x25519_pub: VICTIM_X }, names: 'registered key (REGISTER_KEY)' },
      { type: 'LINK_DEVICE' as const, payload: { device_x25519_pub: VICTIM_X }, names: 'registered key (REGISTER_KEY)' },
      { type: 'REGISTER_KEY' as const, payload: { x25519_pub: PHONE_X }, names: 'linked device key (LINK_DEVICE)' },
      { type: 'LINK_DEVICE' as const, payload: { device_x25519_pub: PHONE_X }, names: 'linked device key (LINK_DEVICE)' }
    ]
    for (const claim of claims) {
      const res = await submit(buildTx(attacker, { type: claim.type, payload: claim.payload }))
      assert.equal(res.status, 400, `${claim.type} ${JSON.stringify(claim.payload)}: ${res.text}`)
      assert.ok(errorOf(res).includes(`another identity's ${claim.names}`), errorOf(res))
      assert.ok(errorOf(res).includes('at most one identity'), errorOf(res))
    }
    assert.equal(await balance(attacker.pub), attackerBefore, 'refused at admission: no fee taken')
    assert.equal((await http(node.url, 'GET', `/api/identity/${attacker.pub}`)).status, 404, 'the attacker registered nothing')

    const ts = Math.floor(Date.now() / 1000)
    for (const mailbox of [VICTIM_X, PHONE_X]) {
      const sig = toBase64(sign(Buffer.from(`inbox-delete:${ids[0]}:${mailbox}:${ts}`), attacker.keyPair.secretKey))
      const deleted = await http(node.url, 'DELETE', `/relay/inbox/${ids[0]}?pub=${mailbox}`, { body: { ed25519_pub: attacker.pub, sig, ts } })
      assert.equal(deleted.status, 403, deleted.text)
      assert.ok(errorOf(deleted).includes('not linked'), errorOf(deleted))
    }
    // a signed read with a fresh node-issued nonce, correctly signed by the attacker: its key is not the mailbox's owner
    await assert.rejects(node.client.inbox(VICTIM_X, { reader: attacker }), (err: unknown) => err instanceof ApiError && err.status === 403)

    const inbox = await node.client.inbox(VICTIM_X, { reader: victim })
    assert.deepEqual(inbox.items.map((i) => i.id).sort(), [...ids].sort(), 'the victim\'s envelopes are intact')
    assert.equal((await node.client.identity(victim.pub)).x25519_pub, VICTIM_X)
  })

  test('two claims of one fresh key back to back: the first admitted holds it, the second is refused', async () => {
    const fresh = toHex(nacl.box.keyPair().publicKey)
    const first = buildTx(author, { type: 'REGISTER_KEY', payload: { x25519_pub: fresh } })
    const second = buildTx(attacker, { type: 'LINK_DEVICE', payload: { device_x25519_pub: fresh } })
    assert.equal((await submit(first)).status, 200)
    const refused = await submit(second)
    assert.equal(refused.status, 400, 'the pending claim already holds the key')
    assert.ok(errorOf(refused).includes('another identity\'s registered key'), errorOf(refused))
    await node.client.waitForConfirmation(first.id)
    assert.equal((await node.client.identity(author.pub)).x25519_pub, fresh)
  })

  test('a released key can be claimed: re-registration lets the old key go', async () => {
    const next = toHex(nacl.box.keyPair().publicKey)
    await node.client.submitAndWait(buildTx(victim, { type: 'REGISTER_KEY', payload: { x25519_pub: next } }))
    const linked = buildTx(attacker, { type: 'LINK_DEVICE', payload: { device_x25519_pub: VICTIM_X } })
    await node.client.submitAndWait(linked)
    assert.deepEqual((await node.client.devices(attacker.pub)).devices.map((d) => d.x25519_pub), [VICTIM_X])
    // the victim's phone is still the victim's
    const phone = await submit(buildTx(attacker, { type: 'REGISTER_KEY', payload: { x25519_pub: PHONE_X } }))
    assert.equal(phone.status, 400, phone.text)
  })

  test('CREATE_POST naming its author, or an unregistered key, as hosting_relay is refused and credits no fee', async () => {
    const published = await node.client.publish(publishRequest(author, { content: 'hosted honestly #kith' }))
    assert.equal(published.hosting_relay, node.validatorPub, 'a fresh node hosts under its account key, a relay from genesis')

    // the attacker registers as a relay, then names itself as the host of its own post
    await node.client.submitAndWait(buildTx(attacker, { type: 'REGISTER_RELAY', payload: { x25519_pub_key: toHex(nacl.box.keyPair().publicKey), fee_per_msg_ut: 0 } }))
    const unregistered = newAccount().pub
    const attackerBefore = await balance(attacker.pub)
    const selfHosted: PublishResponse = { ...published, post_id: 'a1'.repeat(16), hosting_relay: attacker.pub }
    const self = await submit(createPostTx(attacker, selfHosted))
    assert.equal(self.status, 400, self.text)
    assert.ok(errorOf(self).includes('hosting_relay must not be the author'), errorOf(self))
    const nowhere = await submit(createPostTx(attacker, { ...selfHosted, hosting_relay: unregistered }))
    assert.equal(nowhere.status, 400, nowhere.text)
    assert.ok(errorOf(nowhere).includes('not a registered relay'), errorOf(nowhere))
    assert.equal(await balance(attacker.pub), attackerBefore, 'no fee left the attacker, none came back to it')
    assert.equal(await balance(unregistered), 0, 'nothing credited to the unregistered key')

    // the honest post commits and pays the hosting node
    const nodeBefore = await balance(node.validatorPub)
    const tx = createPostTx(author, published)
    await node.client.submitAndWait(tx)
    assert.equal(await balance(node.validatorPub), nodeBefore + tx.fee, 'the whole post fee goes to the hosting node')
  })

  test('the node operator cannot publish on its own node with the node\'s account key', async () => {
    const seed = (JSON.parse(await readFile(join(node.home, 'validator_key.json'), 'utf8')) as { seed: string }).seed
    const operator: Account = accountFrom(keyPairFromSeed(Buffer.from(seed, 'hex')))
    const res = await http(node.url, 'POST', '/feed/publish', { body: publishRequest(operator, { content: 'my own node' }) })
    assert.equal(res.status, 400, res.text)
    assert.ok(errorOf(res).includes('post from another key'), errorOf(res))
    assert.equal((await node.client.netstats()).height > 0, true, 'still serving')
  })
})
