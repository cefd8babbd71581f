/**
 * Paid envelopes on the relay side: the upload check, the durable claim queue, and the collector
 * against a real KithNode (single validator, real lmdb) whose key is the relay.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino, type Logger } from 'pino'
import { GenesisSchema, StateKeys, formatTimestamp, relayFeeText } from '../../../src/chain/index.js'
import { accountFrom, buildTx, newAccount, transfer, type Account, type Transaction } from '../../../src/client/index.js'
import { generateKeyPair, sign, toBase64 } from '../../../src/crypto/index.js'
import { KithError } from '../../../src/errors/index.js'
import { KithNode, initHome, loadHome } from '../../../src/node/index.js'
import { RelayFees, type Envelope } from '../../../src/relay/index.js'
import { envelopeFromUpload } from '../../../src/relay/envelope.js'
import { newClient, newService, sealEnvelope, silent, withTempDir } from './helpers.js'

interface LogLine { level: number, msg: string, [key: string]: unknown }

function capture (): { logger: Logger, lines: LogLine[] } {
  const lines: LogLine[] = []
  return { lines, logger: pino({ level: 'debug' }, { write: (text: string) => { lines.push(JSON.parse(text) as LogLine) } }) }
}

/**
 * A real node whose validator key is `relay`, with genesis balances; started only when asked.
 * Its genesis registers no relay (as a joined network's would not), so `relay` starts unregistered.
 */
async function openNode (dir: string, relay: Account, alloc: Array<{ pub_key: string, amount_ut: number }>): Promise<KithNode> {
  const genesis = GenesisSchema.parse({
    chain_id: 'kith-fees', genesis_time: formatTimestamp(Date.now()), validators: [{ pub_key: relay.pub, power: 1 }], alloc: [{ pub_key: relay.pub, amount_ut: 100_000 }, ...alloc]
  })
  await initHome(join(dir, 'home'), { validatorKey: relay.keyPair, genesis })
  return await reopenNode(dir)
}

async function reopenNode (dir: string): Promise<KithNode> {
  const home = await loadHome(join(dir, 'home'))
  return await KithNode.open({ dataDir: home.dataDir, genesis: home.genesis, validatorKey: home.validatorKey, blockIntervalMs: 20, mempool: { maxTxs: 1000 }, logger: silent })
}

async function until<T> (what: string, fn: () => T | undefined | false): Promise<T> {
  for (let i = 0; i < 1000; i++) {
    const value = fn()
    if (value !== undefined && value !== false) return value
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error(`${what}: never happened`)
}

async function confirm (node: KithNode, tx: Transaction): Promise<void> {
  await node.submitTx(tx)
  await until(`${tx.type} ${tx.id} committed`, () => node.lookupTx(tx.id)?.block)
}

/** A paid upload from `sender`, with fee_sig over relay-fee:<canonical id>:<fee>:<relayPub> unless told otherwise. */
function paid (sender: Account, relayPub: string, fee: number, sig?: (id: string) => string | null): Envelope {
  const envelope = envelopeFromUpload(sealEnvelope(newClient(), newClient().pub, `paid ${Math.random()}`, { sender_ed25519_pub: sender.pub, fee_ut: fee }), 1)
  const feeSig = sig !== undefined ? sig(envelope.id) : toBase64(sign(Buffer.from(relayFeeText(envelope.id, fee, relayPub)), sender.keyPair.secretKey))
  return { ...envelope, fee_sig: feeSig }
}

async function refusal (p: Promise<unknown>): Promise<string> {
  try {
    await p
  } catch (err) {
    assert.ok(err instanceof KithError, String(err))
    assert.equal(err.code, 'RELAY_FEE_REFUSED')
    return err.message
  }
  throw new Error('expected RELAY_FEE_REFUSED')
}

describe('RelayFees.check (POST /relay/broadcast with fee_ut > 0)', () => {
  const relay = accountFrom(generateKeyPair())
  const sender = newAccount()
  let dir: string
  let node: KithNode

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kith-fees-'))
    node = await openNode(dir, relay, [{ pub_key: sender.pub, amount_ut: 10_000 }])
  })
  after(async () => {
    await node.stop()
    await rm(dir, { recursive: true, force: true })
  })

  test('fee_ut 0 is untouched; a paid envelope needs sender_ed25519_pub and a fee_sig naming this relay and fee', async () => {
    await withTempDir(async (data) => {
      const fees = RelayFees.open({ dataDir: data, relayKey: relay.keyPair, node, logger: silent })
      await fees.check(envelopeFromUpload(sealEnvelope(newClient(), newClient().pub, 'free', { fee_sig: toBase64(Buffer.alloc(64)) }), 1))
      assert.deepEqual(fees.claims(), [])

      const good = paid(sender, relay.pub, 500)
      assert.match(await refusal(fees.check({ ...good, sender_ed25519_pub: '' })), /fee_sig: a paid envelope .* needs sender_ed25519_pub/)
      assert.match(await refusal(fees.check({ ...good, fee_sig: null })), /^envelope\.fee_sig: must be sender_ed25519_pub's Ed25519 signature over "relay-fee:/)
      const other = newAccount().pub
      const wrongRelay = paid(sender, other, 500)
      assert.match(await refusal(fees.check(wrongRelay)), new RegExp(`over "relay-fee:${wrongRelay.id}:500:${relay.pub}"`))
      assert.match(await refusal(fees.check(paid(sender, relay.pub, 500, (id) => toBase64(sign(Buffer.from(relayFeeText(id, 499, relay.pub)), sender.keyPair.secretKey))))), /fee_sig/)
      assert.match(await refusal(fees.check(paid(sender, relay.pub, 500, () => toBase64(sign(Buffer.from(relayFeeText('client-chosen', 500, relay.pub)), sender.keyPair.secretKey))))), /fee_sig/)
      assert.deepEqual(fees.claims(), [])

      await fees.check(good)
      await fees.check(good) // a client retrying a lost answer: no second claim
      assert.deepEqual(fees.claims(), [{ envelope_id: good.id, fee_ut: 500, fee_sig: good.fee_sig, sender_ed25519_pub: sender.pub }])
      await fees.stop()
    })
  })

  test('the sender must hold the fee beside the fees still queued from it', async () => {
    await withTempDir(async (data) => {
      const fees = RelayFees.open({ dataDir: data, relayKey: relay.keyPair, node, logger: silent })
      await fees.check(paid(sender, relay.pub, 6000))
      assert.equal(await refusal(fees.check(paid(sender, relay.pub, 6000))),
        `sender ${sender.pub} holds 10000 µT, which does not cover fee_ut 6000 beside 6000 µT of fees this relay has yet to collect from it`)
      await fees.check(paid(sender, relay.pub, 4000))
      const broke = newAccount()
      assert.match(await refusal(fees.check(paid(broke, relay.pub, 1))), /holds 0 µT, which does not cover fee_ut 1$/)
      assert.equal(fees.claims().length, 2)
      await fees.stop()
    })
  })

  test('claims are on disk once the check resolves: a reopened queue has them', async () => {
    await withTempDir(async (data) => {
      const fees = RelayFees.open({ dataDir: data, relayKey: relay.keyPair, node, logger: silent })
      const envelopes = [paid(sender, relay.pub, 100), paid(sender, relay.pub, 200)]
      for (const e of envelopes) await fees.check(e)
      const before = fees.claims()
      await fees.stop()
      const reopened = RelayFees.open({ dataDir: data, relayKey: relay.keyPair, node, logger: silent })
      assert.deepEqual(new Set(reopened.claims().map((c) => JSON.stringify(c))), new Set(before.map((c) => JSON.stringify(c))))
      // the owed total is rebuilt too: 10000 − 300 is all this sender can still back
      await refusal(reopened.check(paid(sender, relay.pub, 9701)))
      await reopened.stop()
    })
  })

  test('RelayService.broadcast runs the check before storing: a refused paid envelope is not stored', async () => {
    await withTempDir(async (data) => {
      const fees = RelayFees.open({ dataDir: data, relayKey: relay.keyPair, node, logger: silent })
      const service = newService(data, { feeCheck: fees.check })
      const alice = newClient()
      const bob = newClient()
      const upload = sealEnvelope(alice, bob.pub, 'paid hello', { sender_ed25519_pub: sender.pub, fee_ut: 700, fee_sig: toBase64(Buffer.alloc(64)) })
      await refusal(service.broadcast(upload))
      assert.equal(service.count(bob.pub).count, 0)
      const id = envelopeFromUpload(upload, 1).id
      const answer = await service.broadcast({ ...upload, fee_sig: toBase64(sign(Buffer.from(relayFeeText(id, 700, relay.pub)), sender.keyPair.secretKey)) })
      assert.equal(answer.id, id)
      assert.equal(service.count(bob.pub).count, 1)
      assert.deepEqual(fees.claims().map((c) => c.envelope_id), [id])
      await service.stop()
      await fees.stop()
    })
  })
})

describe('RelayFees collector (RELAY_PROOF through the node)', () => {
  const relay = accountFrom(generateKeyPair())
  const sender = newAccount()
  const wallet = newAccount()
  let dir: string
  let node: KithNode

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kith-fees-'))
    node = await openNode(dir, relay, [{ pub_key: sender.pub, amount_ut: 50_000 }])
  })
  after(async () => {
    await node.stop()
    await rm(dir, { recursive: true, force: true })
  })

  test('an unregistered relay keeps its claims (logged once); a proof in the mempool is not sent twice, across a reopen', async () => {
    await withTempDir(async (data) => {
      const { logger, lines } = capture()
      let fees = RelayFees.open({ dataDir: data, relayKey: relay.keyPair, node, logger, intervalMs: 3_600_000 })
      fees.start(() => true)
      const envelope = paid(sender, relay.pub, 3000)
      await fees.check(envelope)
      await fees.collect()
      await fees.collect()
      const warnings = lines.filter((l) => l.msg.includes('is not a registered relay'))
      assert.equal(warnings.length, 1)
      assert.match(warnings[0].msg, new RegExp(`this node's key ${relay.pub} is not a registered relay, so 1 paid envelope fee\\(s\\) wait uncollected; submit REGISTER_RELAY`))
      assert.equal(fees.claims().length, 1)
      assert.equal(node.mempoolSize(), 0)

      node.start()
      await confirm(node, buildTx(relay, { type: 'REGISTER_RELAY', payload: { x25519_pub_key: newClient().pub, fee_per_msg_ut: 0 } }))
      await confirm(node, buildTx(relay, { type: 'BIND_WALLET', to: wallet.pub }))
      const senderBefore = node.balance(sender.pub)
      // a node that takes transactions but commits none: the proof waits in its mempool
      await fees.stop()
      await node.stop()
      node = await reopenNode(dir)
      const reopen = (): RelayFees => {
        const queue = RelayFees.open({ dataDir: data, relayKey: relay.keyPair, node, logger, intervalMs: 3_600_000 })
        queue.start(() => true)
        return queue
      }
      fees = reopen()
      await fees.collect()
      const proof = lines.find((l) => l.msg === 'RELAY_PROOF submitted')
      assert.ok(proof !== undefined)
      assert.equal(node.mempoolSize(), 1)
      await fees.collect()
      await fees.stop()
      fees = reopen()
      await fees.collect()
      assert.equal(node.mempoolSize(), 1)
      assert.equal(lines.filter((l) => l.msg === 'RELAY_PROOF submitted').length, 1, 'one proof for one claim')

      node.start()
      await until('the proof committed', () => node.state.get(StateKeys.relayProof(envelope.id)))
      await fees.collect()
      assert.deepEqual(fees.claims(), [])
      assert.equal(lines.filter((l) => l.msg === 'RELAY_PROOF submitted').length, 1, 'one proof for one claim')
      const collected = lines.filter((l) => l.msg === 'relay fee collected')
      assert.equal(collected.length, 1)
      assert.equal(collected[0].txId, proof.txId)
      assert.equal(node.balance(sender.pub), senderBefore - 3000)
      assert.equal(node.balance(wallet.pub), 3000)

      // a retried upload of a collected envelope queues nothing
      await fees.check(envelope)
      assert.deepEqual(fees.claims(), [])
      await fees.stop()
    })
  })

  // runs after the test above, which registered the relay
  test('drops a claim the chain can never collect, or whose envelope the mailbox refused', async () => {
    await withTempDir(async (data) => {
      const { logger, lines } = capture()
      const fees = RelayFees.open({ dataDir: data, relayKey: relay.keyPair, node, logger, intervalMs: 3_600_000 })
      const refused = paid(sender, relay.pub, 100)
      fees.start((id) => id !== refused.id)
      const spent = paid(sender, relay.pub, 4000)
      await fees.check(refused)
      await fees.check(spent)
      // the sender spends what backed the fee before the relay collects
      const rest = node.balance(sender.pub) - 1000 - 1000
      await confirm(node, transfer(sender, newAccount().pub, rest))
      await fees.collect()
      assert.deepEqual(fees.claims(), [])
      const dropped = lines.filter((l) => l.msg.startsWith('relay fee dropped'))
      assert.deepEqual(dropped.map((l) => [l.envelopeId, l.code]), [[refused.id, undefined], [spent.id, 'TX_INSUFFICIENT_FUNDS']])
      assert.equal(node.state.get(StateKeys.relayProof(spent.id)), undefined)
      await fees.stop()
    })
  })
})
