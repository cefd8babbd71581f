/**
 * Envelope gossip through the node's network sides (NetworkInbound, Outbound): a node's new envelopes leave as batches, and a batch
 * from a peer is checked envelope by envelope. Also: whom a status message makes the node ask. The libp2p host is replaced by a recording
 * NetworkPort (a test double of the network edge; real libp2p runs in test/integration).
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { KithNode, initHome, loadHome, type NetworkHandlers, type NetworkPort } from '../../../src/node/index.js'
import type { GossipTopic } from '../../../src/p2p/index.js'
import type { Envelope } from '../../../src/relay/index.js'
import { envelopeFromUpload } from '../../../src/relay/envelope.js'
import { T0, newClient, newService, sealEnvelope, silent, withTempDir } from '../relay/helpers.js'

class RecordingPort implements NetworkPort {
  readonly peerId = 'local'
  readonly published: Array<{ topic: GossipTopic, value: unknown }> = []
  async publish (topic: GossipTopic, data: Uint8Array): Promise<void> {
    this.published.push({ topic, value: JSON.parse(Buffer.from(data).toString('utf8')) })
  }

  /** peers asked for something (block sync, catch-up, mailbox anti-entropy) */
  readonly asked: string[] = []
  async request (peerId: string): Promise<Uint8Array> {
    this.asked.push(peerId)
    throw new Error('no peers to ask')
  }

  peers (): ReturnType<NetworkPort['peers']> { return [{ peerId: 'peer', connected: true } as ReturnType<NetworkPort['peers']>[number]] }
  setLocalHeight (): void {}
}

async function withBridge (fn: (ctx: { bridge: NetworkHandlers, port: RecordingPort, service: ReturnType<typeof newService> }) => Promise<void>): Promise<void> {
  await withTempDir(async (dir) => {
    await initHome(join(dir, 'home'), {})
    const home = await loadHome(join(dir, 'home'))
    const node = await KithNode.open({ dataDir: home.dataDir, genesis: home.genesis, validatorKey: home.validatorKey, blockIntervalMs: 1000, mempool: { maxTxs: 100 }, logger: silent })
    const service = newService(join(dir, 'relay'))
    const bridge = node.networkHandlers()
    const port = new RecordingPort()
    node.attachNetwork(port)
    node.attachRelay(service)
    try {
      await fn({ bridge, port, service })
    } finally {
      await service.stop()
      await node.stop()
    }
  })
}

const fresh = (): Envelope => envelopeFromUpload(sealEnvelope(newClient(), newClient().pub, `m${Math.random()}`), T0 / 1000) // the service's clock reads T0
const gossip = (value: unknown): Uint8Array => Buffer.from(JSON.stringify(value))

describe('envelope gossip', () => {
  test('envelopes uploaded together leave in one gossip message', async () => {
    await withBridge(async ({ port, service }) => {
      const uploads = await Promise.all([0, 1, 2].map(async () => await service.broadcast(sealEnvelope(newClient(), newClient().pub, 'hi'))))
      for (let i = 0; i < 50 && port.published.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
      assert.equal(port.published.length, 1)
      assert.equal(port.published[0].topic, 'envelope')
      assert.deepEqual((port.published[0].value as Envelope[]).map((e) => e.id).sort(), uploads.map((u) => u.id).sort())
    })
  })

  test('a peer\'s batch: new envelopes are stored and forwarded, a repeat is ignored, one bad envelope rejects the message', async () => {
    await withBridge(async ({ bridge, service }) => {
      const batch = [fresh(), fresh()]
      assert.equal(await bridge.onGossip('envelope', gossip(batch), 'peer'), 'accept')
      for (const e of batch) assert.equal(service.store.has(e.id), true)
      assert.equal(await bridge.onGossip('envelope', gossip(batch), 'peer'), 'ignore')
      const forged = { ...fresh(), id: '0'.repeat(32) }
      assert.equal(await bridge.onGossip('envelope', gossip([fresh(), forged]), 'peer'), 'reject')
      assert.equal(await bridge.onGossip('envelope', gossip([]), 'peer'), 'reject')
      const lone = fresh()
      assert.equal(await bridge.onGossip('envelope', gossip(lone), 'peer'), 'accept', 'a lone envelope object is still understood')
    })
  })

  test('a status relayed for a peer this node is not connected to starts no request (it could not be dialed)', async () => {
    await withBridge(async ({ bridge, port }) => {
      const ahead = { height: 100, round: 0, at: T0 }
      assert.equal(await bridge.onGossip('status', gossip({ ...ahead, peer_id: 'stranger' }), 'peer'), 'accept')
      assert.equal(await bridge.onGossip('status', gossip({ ...ahead, peer_id: 'peer' }), 'peer'), 'accept')
      for (let i = 0; i < 50 && !port.asked.includes('peer'); i++) await new Promise((resolve) => setTimeout(resolve, 10))
      assert.ok(port.asked.includes('peer'), 'the connected peer that is ahead is asked for blocks')
      assert.ok(!port.asked.includes('stranger'))
    })
  })
})
