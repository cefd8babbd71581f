/**
 * SVC_MAILBOX_MAX_MB through HTTP: past the cap a new envelope gets 507 with a JSON error, no
 * stored envelope is evicted, the cap holds across a restart, and GET /api/limits publishes it.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import nacl from 'tweetnacl'
import { toHex } from '../../src/crypto/index.js'
import { envelopeFor } from '../helpers/envelopes.js'
import { errorMessage, http, startNode, stopAllNodes } from '../helpers/node-process.js'

// 2 KiB: a few of the ~400-byte envelopes below
const CAP_MB = '0.001953125'

describe('the global mailbox byte cap (SVC_MAILBOX_MAX_MB)', () => {
  after(async () => { await stopAllNodes() })

  test('new envelopes past it are refused with 507, stored ones stay, also after a restart', async () => {
    const env = { SVC_MAILBOX_MAX_MB: CAP_MB, SVC_RELAY_SENDER_RPS: '0' }
    const node = await startNode({ env })
    const limits = (await http(node.url, 'GET', '/api/limits')).json as { relay: { max_stored_bytes: number | null } }
    assert.equal(limits.relay.max_stored_bytes, 2048)

    const recipient = nacl.box.keyPair()
    const stored: string[] = []
    let refused
    for (let i = 0; i < 50 && refused === undefined; i++) {
      const res = await http(node.url, 'POST', '/relay/broadcast', { body: { envelope: envelopeFor(recipient.publicKey, '', `message ${i} `.repeat(8)) } })
      if (res.status === 200) stored.push((res.json as { id: string }).id)
      else refused = res
    }
    assert.ok(refused !== undefined, 'the cap was reached')
    assert.equal(refused.status, 507)
    assert.match(errorMessage(refused), /mailbox storage of this node is full/)
    assert.ok(stored.length >= 2, `${stored.length} envelopes fit under 2 KiB`)

    const inbox = async (): Promise<string[]> => ((await http(node.url, 'GET', `/relay/inbox?pub=${toHex(recipient.publicKey)}&limit=100`)).json as { items: Array<{ id: string }> }).items.map((item) => item.id)
    assert.deepEqual(new Set(await inbox()), new Set(stored), 'nothing stored was evicted')

    await node.stop()
    await node.restart()
    const again = await http(node.url, 'POST', '/relay/broadcast', { body: { envelope: envelopeFor(recipient.publicKey) } })
    assert.equal(again.status, 507, 'the count of stored bytes is rebuilt at start')
    assert.deepEqual(new Set(await inbox()), new Set(stored))
  })
})
