/**
 * The relay registry: REGISTER_RELAY, HEARTBEAT, BIND_WALLET, and RELAY_PROOF, by which a relay
 * collects, exactly once, the fee a sender authorised for one envelope (docs/relay.md).
 */
import { z } from 'zod'
import { fromBase64, verify } from '../../crypto/index.js'
import { KithError } from '../../errors/index.js'
import { credit, debit } from '../ledger.js'
import { MIN_FEE } from '../limits.js'
import { Registry, asState, unixSeconds, type RelayRecord } from '../registry.js'
import { StateKeys, type StateOverlay } from '../state.js'
import { PubkeySchema, X25519Schema } from '../tx.js'
import { noTransfer } from './identity.js'
import { defineRule } from './types.js'

function relayOf (state: StateOverlay, pub: string): RelayRecord {
  const relay = Registry.relay(state, pub)
  if (relay === undefined) throw new KithError('TX_NOT_ALLOWED', 'the sender is not a registered relay (REGISTER_RELAY first)')
  return relay
}

/** The text a sender signs to let relay `relayPub` collect `feeUt` for envelope `envelopeId`. */
export function relayFeeText (envelopeId: string, feeUt: number, relayPub: string): string {
  return `relay-fee:${envelopeId}:${feeUt}:${relayPub}`
}

export const registerRelayRule = defineRule({
  payload: z.object({
    x25519_pub_key: X25519Schema,
    fee_per_msg_ut: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    multiaddr: z.string().max(512).optional()
  }),
  minFee: MIN_FEE,
  clientSubmittable: true,
  check: noTransfer,
  apply ({ tx, payload, state, block }) {
    const existing = Registry.relay(state, tx.from)
    state.set(StateKeys.relay(tx.from), asState({
      x25519_pub_key: payload.x25519_pub_key,
      fee_per_msg_ut: payload.fee_per_msg_ut,
      multiaddr: payload.multiaddr ?? existing?.multiaddr ?? '',
      last_heartbeat: existing?.last_heartbeat ?? 0,
      wallet: existing?.wallet ?? '',
      registered_at: existing?.registered_at ?? unixSeconds(block.time)
    }))
    if (existing === undefined) state.set(StateKeys.relays, [...Registry.relays(state), tx.from])
  }
})

export const heartbeatRule = defineRule({
  payload: z.object({}),
  minFee: MIN_FEE,
  clientSubmittable: true,
  check: noTransfer,
  apply ({ tx, state, block }) {
    state.set(StateKeys.relay(tx.from), asState({ ...relayOf(state, tx.from), last_heartbeat: unixSeconds(block.time) }))
  }
})

export const bindWalletRule = defineRule({
  payload: z.object({}),
  minFee: MIN_FEE,
  clientSubmittable: true,
  check (tx) {
    if (tx.to === '') throw new KithError('TX_BAD_FIELD', 'BIND_WALLET needs the wallet pubkey in `to`')
    if (tx.amount !== 0) throw new KithError('TX_BAD_FIELD', 'BIND_WALLET carries no amount (`amount` must be 0)')
  },
  apply ({ tx, state }) {
    state.set(StateKeys.relay(tx.from), asState({ ...relayOf(state, tx.from), wallet: tx.to }))
  }
})

export const relayProofRule = defineRule({
  payload: z.object({
    envelope_id: z.string().regex(/^[0-9a-f]{32}$/, 'must be a canonical envelope id (32 lowercase hex characters)'),
    sender_ed25519_pub: PubkeySchema,
    fee_ut: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    fee_sig: z.string()
  }),
  minFee: MIN_FEE,
  clientSubmittable: true,
  check (tx, payload) {
    noTransfer(tx)
    const sig = fromBase64(payload.fee_sig)
    if (sig === undefined || !verify(Buffer.from(relayFeeText(payload.envelope_id, payload.fee_ut, tx.from), 'utf8'), sig, Buffer.from(payload.sender_ed25519_pub, 'hex'))) {
      throw new KithError('TX_BAD_SIGNATURE', 'fee_sig is not the sender\'s signature authorising this relay fee')
    }
  },
  apply ({ tx, payload, state, block }) {
    const relay = relayOf(state, tx.from)
    const key = StateKeys.relayProof(payload.envelope_id)
    if (state.get(key) !== undefined) throw new KithError('TX_CONFLICT', 'the fee for this envelope was already collected')
    debit(state, payload.sender_ed25519_pub, payload.fee_ut, `the relay fee of ${payload.fee_ut} µT`)
    credit(state, relay.wallet === '' ? tx.from : relay.wallet, payload.fee_ut)
    state.set(key, block.height)
  }
})
