/**
 * Paid envelopes against a real node child process: the node's account key is the relay. A
 * sender signs relay-fee:<id>:<fee_ut>:<relay pub>; the node checks it on POST /relay/broadcast,
 * queues the claim durably and collects it with RELAY_PROOF once it is a registered relay. Earnings
 * go to a bound wallet, so balances move by exactly the fees (the node, sole proposer, also earns
 * every transaction fee).
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import nacl from 'tweetnacl'
import { GenesisSchema, formatTimestamp, relayFeeText } from '../../src/chain/index.js'
import { buildTx, newAccount, transfer, type Account } from '../../src/client/index.js'
import { sign, toBase64, toHex } from '../../src/crypto/index.js'
import { initHome } from '../../src/node/index.js'
import { canonicalId } from '../../src/relay/index.js'
import { errorMessage, http, startNode, stopAllNodes, waitFor, type NodeProcess } from '../helpers/node-process.js'

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64')

describe('paid relay envelopes on a real node', { timeout: 120_000 }, () => {
  const sender = newAccount()
  const senderBox = nacl.box.keyPair()
  const wallet = newAccount()
  let dir: string
  let node: NodeProcess
  let relay: Account

  /** An envelope to a fresh mailbox with fee_ut and, unless given, fee_sig over the canonical id. */
  function paidEnvelope (fee: number, opts: { from?: Account, sig?: string | null } = {}): { id: string, envelope: Record<string, unknown> } {
    const from = opts.from ?? sender
    const nonce = nacl.randomBytes(24)
    const ciphertext = nacl.box(Buffer.from(`paid ${Math.random()}`), nonce, nacl.box.keyPair().publicKey, senderBox.secretKey)
    const id = canonicalId(nonce, ciphertext)
    const sig = opts.sig !== undefined ? opts.sig : toBase64(sign(Buffer.from(relayFeeText(id, fee, relay.pub)), from.keyPair.secretKey))
    return {
      id,
      envelope: { sender_pub: toHex(senderBox.publicKey), recipient_pub: toHex(nacl.box.keyPair().publicKey), sender_ed25519_pub: from.pub, fee_ut: fee, fee_sig: sig, nonce: b64(nonce), ciphertext: b64(ciphertext) }
    }
  }

  const balance = async (pub: string): Promise<number> => (await node.client.address(pub)).balance_ut

  /** A log line of the running process (not one from before a restart). */
  const logged = async (what: (msg: string, line: Record<string, unknown>) => boolean, message: string): Promise<void> => {
    await waitFor(() => node.logs.some((l) => l.pid === node.pid && what(l.msg ?? '', l)), 20_000, { message })
  }

  before(async () => {
    // a genesis that registers no relay (as a network the node joined would not): the node's key starts unregistered
    dir = await mkdtemp(join(tmpdir(), 'kith-relay-fees-'))
    relay = newAccount()
    const genesis = GenesisSchema.parse({
      chain_id: 'kith-relay-fees', genesis_time: formatTimestamp(Date.now()), validators: [{ pub_key: relay.pub, power: 1 }], alloc: [{ pub_key: sender.pub, amount_ut: 1_000_000 }]
    })
    await initHome(join(dir, 'home'), { genesis, validatorKey: relay.keyPair, config: { p2p_listen: ['/ip4/127.0.0.1/tcp/0'] } })
    node = await startNode({ home: join(dir, 'home'), blockIntervalMs: 100 })
    assert.equal(relay.pub, node.validatorPub)
    // a sender with a registered identity; the node's account gets enough for its own fees
    await node.client.submitAndWait(buildTx(sender, { type: 'REGISTER_KEY', payload: { x25519_pub: toHex(senderBox.publicKey), nickname: 'payer' } }))
    await node.client.submitAndWait(transfer(sender, relay.pub, 100_000))
  })

  after(async () => {
    await stopAllNodes()
    await rm(dir, { recursive: true, force: true })
  })

  test('a fee answered while the relay was unregistered survives kill -9 and is collected once after REGISTER_RELAY', async () => {
    const { id, envelope } = paidEnvelope(2500)
    const res = await http(node.url, 'POST', '/relay/broadcast', { body: { envelope } })
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(res.json, { id, status: 'broadcast' })
    await node.kill9()

    await node.start()
    // the restarted process still holds the claim, and says why it cannot collect it
    await logged((msg) => msg.includes(`${relay.pub} is not a registered relay, so 1 paid envelope fee(s) wait uncollected`), 'the restarted relay never reported its uncollected claim')
    const senderBefore = await balance(sender.pub)
    await node.client.submitAndWait(buildTx(relay, { type: 'REGISTER_RELAY', payload: { x25519_pub_key: toHex(nacl.box.keyPair().publicKey), fee_per_msg_ut: 1000 } }))
    await node.client.submitAndWait(buildTx(relay, { type: 'BIND_WALLET', to: wallet.pub }))

    await logged((msg, l) => msg === 'relay fee collected' && l.envelopeId === id, 'the fee was never collected')
    // one more block after the claim left the queue: nothing further moves
    await node.client.submitAndWait(buildTx(relay, { type: 'HEARTBEAT' }))
    assert.equal(await balance(wallet.pub), 2500)
    assert.equal(await balance(sender.pub), senderBefore - 2500)
  })

  test('registered relay: a paid envelope is 200 and its fee is collected once; a bad fee_sig or an unfunded sender is 400', async () => {
    const badSig = paidEnvelope(1500, { sig: toBase64(sign(Buffer.from('relay-fee:x:1500:y'), sender.keyPair.secretKey)) })
    const refused = await http(node.url, 'POST', '/relay/broadcast', { body: { envelope: badSig.envelope } })
    assert.equal(refused.status, 400)
    assert.equal(errorMessage(refused), `envelope.fee_sig: must be sender_ed25519_pub's Ed25519 signature over "relay-fee:${badSig.id}:1500:${relay.pub}"`)
    const noSig = await http(node.url, 'POST', '/relay/broadcast', { body: { envelope: paidEnvelope(1500, { sig: null }).envelope } })
    assert.equal(noSig.status, 400)
    assert.match(errorMessage(noSig), /^envelope\.fee_sig: /)
    const broke = newAccount()
    const unfunded = await http(node.url, 'POST', '/relay/broadcast', { body: { envelope: paidEnvelope(1500, { from: broke }).envelope } })
    assert.equal(unfunded.status, 400)
    assert.equal(errorMessage(unfunded), `sender ${broke.pub} holds 0 µT, which does not cover fee_ut 1500`)

    const walletBefore = await balance(wallet.pub)
    const senderBefore = await balance(sender.pub)
    const { id, envelope } = paidEnvelope(1500)
    const res = await http(node.url, 'POST', '/relay/broadcast', { body: { envelope } })
    assert.equal(res.status, 200, res.text)
    await logged((msg, l) => msg === 'relay fee collected' && l.envelopeId === id, 'the fee was never collected')
    // a client retrying a lost answer is answered the same way and queues nothing new
    const retry = await http(node.url, 'POST', '/relay/broadcast', { body: { envelope } })
    assert.deepEqual(retry.json, { id, status: 'broadcast' })
    await node.client.submitAndWait(buildTx(relay, { type: 'HEARTBEAT' }))
    assert.equal(await balance(wallet.pub), walletBefore + 1500)
    assert.equal(await balance(sender.pub), senderBefore - 1500)
    const inbox = await node.client.request<{ count: number }>('GET', `/relay/inbox/count?pub=${envelope.recipient_pub as string}`)
    assert.equal(inbox.count, 1)
  })
})
