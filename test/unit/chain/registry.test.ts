/** Identity, device, contact and relay registry rules: what each applies, and what each refuses. */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import {
  GenesisSchema, Registry, StateKeys, StateOverlay, applyTx, checkStateless, commitHash, encodePayload, executeBlock, formatTimestamp, genesisHash,
  genesisState, ownsMailbox, relayFeeText, selectBlockTxs, signTx, txRoot, type Block, type BlockContext, type Transaction, type TxType
} from '../../../src/chain/index.js'
import { sign, toBase64, toHex, type KeyPair } from '../../../src/crypto/index.js'
import { ALICE, BOB, CAROL, VALIDATOR, aliceKey, assertKithError, bobKey, carolKey, seeded } from '../../helpers/fixtures.js'

const T = Date.parse('2026-01-02T03:04:05Z')
const genesis = GenesisSchema.parse({
  chain_id: 'registry',
  genesis_time: '2026-01-01T00:00:00Z',
  validators: [{ pub_key: VALIDATOR, power: 1 }],
  alloc: [ALICE, BOB, CAROL].map((pub) => ({ pub_key: pub, amount_ut: 1_000_000 }))
})
const ctx: BlockContext = { height: 3, time: T, proposer: VALIDATOR, params: genesis.params }
const X1 = 'a1'.repeat(32)
const X2 = 'b2'.repeat(32)
const X3 = 'c3'.repeat(32)

let n = 0
function tx (key: KeyPair, type: TxType, opts: { to?: string, amount?: number, fee?: number, payload?: unknown } = {}): Transaction {
  n += 1
  return signTx({
    id: `r-${n}`, type, from: toHex(key.publicKey), to: opts.to ?? '', amount: opts.amount ?? 0, fee: opts.fee ?? 1000,
    payload: encodePayload(opts.payload ?? {}), timestamp: formatTimestamp(T)
  }, key.secretKey)
}

function fresh (): StateOverlay {
  return new StateOverlay(genesisState(genesis).state)
}

function apply (state: StateOverlay, t: Transaction): void {
  applyTx(state, checkStateless(t), ctx)
}

describe('identity and devices', () => {
  test('REGISTER_KEY records the X25519 key and nickname; re-registering updates the key', () => {
    const state = fresh()
    apply(state, tx(aliceKey, 'REGISTER_KEY', { payload: { x25519_pub: X1, nickname: 'alice' } }))
    assert.deepEqual(Registry.identity(state, ALICE), { x25519_pub: X1, nickname: 'alice', registered_at: Math.floor(T / 1000), tx_id: `r-${n}` })
    apply(state, tx(aliceKey, 'REGISTER_KEY', { payload: { x25519_pub: X2 } }))
    assert.equal(Registry.identity(state, ALICE)?.x25519_pub, X2)
    assert.equal(Registry.identity(state, ALICE)?.nickname, 'alice')
    assert.ok(ownsMailbox(state, ALICE, X2))
    assert.ok(!ownsMailbox(state, BOB, X2))
  })

  test('REGISTER_KEY refuses a bad key, a long nickname, a recipient or an amount', () => {
    assertKithError(() => checkStateless(tx(aliceKey, 'REGISTER_KEY', { payload: { x25519_pub: 'nothex' } })), 'TX_MALFORMED', 'x25519_pub')
    assertKithError(() => checkStateless(tx(aliceKey, 'REGISTER_KEY', { payload: { x25519_pub: X1, nickname: 'n'.repeat(33) } })), 'TX_MALFORMED', 'nickname')
    assertKithError(() => checkStateless(tx(aliceKey, 'REGISTER_KEY', { to: BOB, payload: { x25519_pub: X1 } })), 'TX_BAD_FIELD', 'recipient')
    assertKithError(() => checkStateless(tx(aliceKey, 'REGISTER_KEY', { amount: 5, payload: { x25519_pub: X1 } })), 'TX_BAD_FIELD', 'amount')
    assertKithError(() => checkStateless(tx(aliceKey, 'REGISTER_KEY', { payload: { x25519_pub: 7 } })), 'TX_MALFORMED')
  })

  test('LINK_DEVICE and UNLINK_DEVICE maintain the device list and its owner index', () => {
    const state = fresh()
    apply(state, tx(aliceKey, 'LINK_DEVICE', { payload: { device_x25519_pub: X1, device_name: 'phone' } }))
    apply(state, tx(aliceKey, 'LINK_DEVICE', { payload: { device_x25519_pub: X2 } }))
    assert.deepEqual(Registry.devices(state, ALICE).map((d) => [d.x25519_pub, d.name]), [[X1, 'phone'], [X2, '']])
    assert.ok(ownsMailbox(state, ALICE, X1))
    assertKithError(() => apply(state.child(), tx(bobKey, 'LINK_DEVICE', { payload: { device_x25519_pub: X1 } })), 'IDENTITY_KEY_TAKEN', 'another identity')
    assertKithError(() => apply(state.child(), tx(aliceKey, 'LINK_DEVICE', { payload: { device_x25519_pub: X1 } })), 'TX_CONFLICT', 'already linked')
    assertKithError(() => apply(state.child(), tx(bobKey, 'UNLINK_DEVICE', { payload: { device_x25519_pub: X1 } })), 'TX_UNKNOWN_TARGET', 'not linked')
    apply(state, tx(aliceKey, 'UNLINK_DEVICE', { payload: { device_x25519_pub: X1 } }))
    assert.deepEqual(Registry.devices(state, ALICE).map((d) => d.x25519_pub), [X2])
    assert.equal(Registry.keyHolder(state, X1), undefined)
    apply(state, tx(bobKey, 'LINK_DEVICE', { payload: { device_x25519_pub: X1 } }))
    assert.equal(Registry.keyHolder(state, X1), BOB)
  })

  test('at most 16 devices; a device name over 64 characters is refused', () => {
    const state = fresh()
    for (let i = 0; i < 16; i++) apply(state, tx(aliceKey, 'LINK_DEVICE', { payload: { device_x25519_pub: i.toString(16).padStart(64, '0') } }))
    assertKithError(() => apply(state, tx(aliceKey, 'LINK_DEVICE', { payload: { device_x25519_pub: X3 } })), 'TX_CONFLICT', 'at most 16')
    assertKithError(() => checkStateless(tx(aliceKey, 'LINK_DEVICE', { payload: { device_x25519_pub: X3, device_name: 'd'.repeat(65) } })), 'TX_MALFORMED', 'device_name')
  })
})

describe('the X25519 key index: a key belongs to at most one identity', () => {
  const registerKey = (key: KeyPair, x25519: string): Transaction => tx(key, 'REGISTER_KEY', { payload: { x25519_pub: x25519 } })
  const linkDevice = (key: KeyPair, x25519: string): Transaction => tx(key, 'LINK_DEVICE', { payload: { device_x25519_pub: x25519 } })
  const unlinkDevice = (key: KeyPair, x25519: string): Transaction => tx(key, 'UNLINK_DEVICE', { payload: { device_x25519_pub: x25519 } })

  test('REGISTER_KEY of a key another identity registered is refused, and the victim keeps it', () => {
    const state = fresh()
    apply(state, registerKey(aliceKey, X1))
    assertKithError(() => apply(state.child(), registerKey(bobKey, X1)), 'IDENTITY_KEY_TAKEN', 'registered key (REGISTER_KEY)')
    assert.equal(Registry.keyHolder(state, X1), ALICE)
    assert.ok(ownsMailbox(state, ALICE, X1))
    assert.ok(!ownsMailbox(state, BOB, X1))
  })

  test('LINK_DEVICE of another identity\'s registered key is refused', () => {
    const state = fresh()
    apply(state, registerKey(aliceKey, X1))
    assertKithError(() => apply(state.child(), linkDevice(bobKey, X1)), 'IDENTITY_KEY_TAKEN', 'registered key (REGISTER_KEY)')
    assert.ok(!ownsMailbox(state, BOB, X1))
  })

  test('REGISTER_KEY of another identity\'s device key is refused', () => {
    const state = fresh()
    apply(state, linkDevice(aliceKey, X1))
    assertKithError(() => apply(state.child(), registerKey(bobKey, X1)), 'IDENTITY_KEY_TAKEN', 'linked device key (LINK_DEVICE)')
    assert.equal(Registry.identity(state, BOB), undefined)
    assert.ok(ownsMailbox(state, ALICE, X1))
  })

  test('a key released by re-registration or unlink can be claimed by another identity', () => {
    const state = fresh()
    apply(state, registerKey(aliceKey, X1))
    apply(state, registerKey(aliceKey, X2))
    assert.equal(Registry.keyHolder(state, X1), undefined, 're-registering releases the old key')
    assert.ok(!ownsMailbox(state, ALICE, X1))
    apply(state, registerKey(bobKey, X1))
    assert.ok(ownsMailbox(state, BOB, X1))
    apply(state, linkDevice(carolKey, X3))
    apply(state, unlinkDevice(carolKey, X3))
    assert.equal(Registry.keyHolder(state, X3), undefined, 'unlinking releases the device key')
    apply(state, linkDevice(aliceKey, X3))
    assert.ok(ownsMailbox(state, ALICE, X3))
    assert.ok(!ownsMailbox(state, CAROL, X3))
  })

  test('an identity may link its own registered key as a device; the key stays held until both roles are given up', () => {
    const state = fresh()
    apply(state, registerKey(aliceKey, X1))
    apply(state, linkDevice(aliceKey, X1))
    apply(state, linkDevice(aliceKey, X2))
    assert.deepEqual(Registry.devices(state, ALICE).map((d) => d.x25519_pub), [X1, X2])
    // re-registering keeps X1 held: it is still a device
    apply(state, registerKey(aliceKey, X3))
    assert.equal(Registry.keyHolder(state, X1), ALICE)
    assertKithError(() => apply(state.child(), registerKey(bobKey, X1)), 'IDENTITY_KEY_TAKEN', 'linked device key')
    // registering one of its own devices as its key is allowed too; unlinking it then keeps it held
    apply(state, registerKey(aliceKey, X2))
    assert.equal(Registry.keyHolder(state, X3), undefined, 'the replaced registered key X3 was no device: released')
    apply(state, unlinkDevice(aliceKey, X2))
    assert.equal(Registry.keyHolder(state, X2), ALICE, 'X2 is still the registered key')
    apply(state, unlinkDevice(aliceKey, X1))
    assert.equal(Registry.keyHolder(state, X1), undefined, 'X1 has no role left')
    assertKithError(() => apply(state.child(), unlinkDevice(aliceKey, X2)), 'TX_UNKNOWN_TARGET', 'not linked')
  })

  test('two claims of one key in the same block: the first in block order wins, the proposer leaves the second out, a validator refuses a block with both', () => {
    const { state: base } = genesisState(genesis)
    const first = checkStateless(registerKey(aliceKey, X1))
    const second = checkStateless(linkDevice(bobKey, X1))
    const selection = selectBlockTxs(base, [first, second], ctx, 'ab'.repeat(32))
    assert.deepEqual(selection.included.map((t) => t.id), [first.tx.id])
    assert.deepEqual(selection.rejected.map((r) => [r.tx.id, r.error.code]), [[second.tx.id, 'IDENTITY_KEY_TAKEN']])
    const swapped = selectBlockTxs(base, [second, first], ctx, 'ab'.repeat(32))
    assert.deepEqual(swapped.included.map((t) => t.id), [second.tx.id], 'block order decides, not who registered first elsewhere')
    const txs = [first.tx, second.tx]
    const block: Block = {
      header: { chain_id: genesis.chain_id, height: ctx.height, time: ctx.time, prev_hash: genesisHash(genesis), tx_root: txRoot(txs), state_root: 'cd'.repeat(32), proposer: VALIDATOR, last_commit_hash: commitHash(null) },
      txs,
      last_commit: null
    }
    assertKithError(() => executeBlock(base, block, { params: genesis.params, chainId: genesis.chain_id, prevHash: genesisHash(genesis), prevStateRoot: 'ab'.repeat(32) }), 'IDENTITY_KEY_TAKEN', 'another identity')
  })
})

describe('contacts', () => {
  test('request pays the recipient and is pending; accept turns it accepted; repeats are refused', () => {
    const state = fresh()
    apply(state, tx(aliceKey, 'CONTACT_REQUEST', { to: BOB, amount: 5000, payload: { intro: 'hi bob' } }))
    assert.equal(state.getNumber(StateKeys.balance(BOB)), 1_005_000)
    assert.equal(state.getNumber(StateKeys.balance(ALICE)), 1_000_000 - 6000)
    assert.deepEqual(Registry.contacts(state, BOB).map((c) => [c.requester_pub, c.status, c.intro, c.fee_ut]), [[ALICE, 'pending', 'hi bob', 5000]])
    assertKithError(() => apply(state.child(), tx(aliceKey, 'CONTACT_REQUEST', { to: BOB, amount: 5000 })), 'TX_CONFLICT', 'already pending')
    assertKithError(() => apply(state.child(), tx(carolKey, 'ACCEPT_CONTACT', { to: ALICE })), 'TX_UNKNOWN_TARGET', 'no contact request')
    apply(state, tx(bobKey, 'ACCEPT_CONTACT', { to: ALICE }))
    assert.equal(Registry.contacts(state, BOB)[0].status, 'accepted')
    assertKithError(() => apply(state.child(), tx(bobKey, 'ACCEPT_CONTACT', { to: ALICE })), 'TX_CONFLICT', 'not pending')
    assertKithError(() => apply(state.child(), tx(aliceKey, 'CONTACT_REQUEST', { to: BOB, amount: 5000 })), 'TX_CONFLICT', 'already accepted')
  })

  test('block from any state, including with no request; later requests are refused', () => {
    const state = fresh()
    apply(state, tx(bobKey, 'CONTACT_BLOCK', { to: CAROL }))
    assertKithError(() => apply(state.child(), tx(carolKey, 'CONTACT_REQUEST', { to: BOB, amount: 5000 })), 'TX_NOT_ALLOWED', 'blocked')
    apply(state, tx(aliceKey, 'CONTACT_REQUEST', { to: BOB, amount: 6000 }))
    apply(state, tx(bobKey, 'ACCEPT_CONTACT', { to: ALICE }))
    apply(state, tx(bobKey, 'CONTACT_BLOCK', { to: ALICE }))
    assert.deepEqual(Registry.contacts(state, BOB).map((c) => [c.requester_pub, c.status]), [[CAROL, 'blocked'], [ALICE, 'blocked']])
    assertKithError(() => apply(state.child(), tx(bobKey, 'CONTACT_BLOCK', { to: ALICE })), 'TX_CONFLICT', 'already blocked')
  })

  test('stateless rules: contact fee at least 5000, intro at most 280 characters, a counterparty that is not the sender', () => {
    assertKithError(() => checkStateless(tx(aliceKey, 'CONTACT_REQUEST', { to: BOB, amount: 4999 })), 'TX_BAD_FIELD', '5000')
    assertKithError(() => checkStateless(tx(aliceKey, 'CONTACT_REQUEST', { to: BOB, amount: 5000, payload: { intro: 'é'.repeat(281) } })), 'TX_MALFORMED', '280')
    assert.doesNotThrow(() => checkStateless(tx(aliceKey, 'CONTACT_REQUEST', { to: BOB, amount: 5000, payload: { intro: '😀'.repeat(280) } })))
    assertKithError(() => checkStateless(tx(aliceKey, 'CONTACT_REQUEST', { amount: 5000 })), 'TX_BAD_FIELD', '`to`')
    assertKithError(() => checkStateless(tx(aliceKey, 'CONTACT_REQUEST', { to: ALICE, amount: 5000 })), 'TX_BAD_FIELD', 'sender')
    assertKithError(() => checkStateless(tx(bobKey, 'ACCEPT_CONTACT', { to: ALICE, amount: 1 })), 'TX_BAD_FIELD', 'amount')
    assertKithError(() => checkStateless(tx(bobKey, 'CONTACT_BLOCK', { to: ALICE, amount: 1 })), 'TX_BAD_FIELD', 'amount')
  })
})

describe('relays', () => {
  const relayKey = seeded(0x90)
  const RELAY = toHex(relayKey.publicKey)
  const funded = (): StateOverlay => {
    const state = fresh()
    state.set(StateKeys.balance(RELAY), 100_000)
    return state
  }

  test('REGISTER_RELAY lists the relay; HEARTBEAT stamps it; BIND_WALLET redirects earnings', () => {
    const state = funded()
    apply(state, tx(relayKey, 'REGISTER_RELAY', { payload: { x25519_pub_key: X1, fee_per_msg_ut: 10, multiaddr: '/ip4/1.2.3.4/tcp/4001' } }))
    apply(state, tx(relayKey, 'REGISTER_RELAY', { payload: { x25519_pub_key: X2, fee_per_msg_ut: 12 } }))
    assert.deepEqual(Registry.relays(state), [RELAY])
    assert.equal(Registry.relay(state, RELAY)?.multiaddr, '/ip4/1.2.3.4/tcp/4001')
    assert.equal(Registry.relay(state, RELAY)?.fee_per_msg_ut, 12)
    apply(state, tx(relayKey, 'HEARTBEAT'))
    assert.equal(Registry.relay(state, RELAY)?.last_heartbeat, Math.floor(T / 1000))
    apply(state, tx(relayKey, 'BIND_WALLET', { to: CAROL }))
    assert.equal(Registry.relay(state, RELAY)?.wallet, CAROL)
  })

  test('HEARTBEAT, BIND_WALLET and RELAY_PROOF need a registered relay', () => {
    const state = funded()
    assertKithError(() => apply(state.child(), tx(relayKey, 'HEARTBEAT')), 'TX_NOT_ALLOWED', 'registered relay')
    assertKithError(() => apply(state.child(), tx(relayKey, 'BIND_WALLET', { to: CAROL })), 'TX_NOT_ALLOWED', 'registered relay')
    assertKithError(() => checkStateless(tx(relayKey, 'BIND_WALLET')), 'TX_BAD_FIELD', 'wallet')
  })

  test('RELAY_PROOF collects a fee the sender signed for, once, into the bound wallet', () => {
    const state = funded()
    apply(state, tx(relayKey, 'REGISTER_RELAY', { payload: { x25519_pub_key: X1, fee_per_msg_ut: 10 } }))
    apply(state, tx(relayKey, 'BIND_WALLET', { to: CAROL }))
    const envelopeId = 'ab'.repeat(16)
    const feeSig = toBase64(sign(Buffer.from(relayFeeText(envelopeId, 10, RELAY)), aliceKey.secretKey))
    const proof = (sig: string, fee = 10): Transaction => tx(relayKey, 'RELAY_PROOF', { payload: { envelope_id: envelopeId, sender_ed25519_pub: ALICE, fee_ut: fee, fee_sig: sig } })
    assertKithError(() => checkStateless(proof(feeSig, 11)), 'TX_BAD_SIGNATURE', 'fee_sig')
    const bobSig = toBase64(sign(Buffer.from(relayFeeText(envelopeId, 10, RELAY)), bobKey.secretKey))
    assertKithError(() => checkStateless(proof(bobSig)), 'TX_BAD_SIGNATURE', 'fee_sig')
    const carolBefore = state.getNumber(StateKeys.balance(CAROL))
    apply(state, proof(feeSig))
    assert.equal(state.getNumber(StateKeys.balance(ALICE)), 1_000_000 - 10)
    assert.equal(state.getNumber(StateKeys.balance(CAROL)), carolBefore + 10)
    assertKithError(() => apply(state, proof(feeSig)), 'TX_CONFLICT', 'already collected')
  })
})
