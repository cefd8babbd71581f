/** REGISTER_KEY, LINK_DEVICE, UNLINK_DEVICE: the identity and device registries (decisions.md). */
import { z } from 'zod'
import { KithError } from '../../errors/index.js'
import { MIN_FEE } from '../limits.js'
import { Registry, asState, unixSeconds, type DeviceRecord } from '../registry.js'
import { StateKeys, type StateOverlay } from '../state.js'
import { X25519Schema, type Transaction } from '../tx.js'
import { defineRule } from './types.js'

export const MAX_NICKNAME_CHARS = 32
export const MAX_DEVICE_NAME_CHARS = 64
export const MAX_DEVICES = 16

const chars = (max: number) => z.string().refine((s) => [...s].length <= max, `must be at most ${max} characters`)

/** Registry transactions carry no recipient and no amount. */
export function noTransfer (tx: Transaction): void {
  if (tx.to !== '') throw new KithError('TX_BAD_FIELD', `${tx.type} takes no recipient (\`to\` must be empty)`)
  if (tx.amount !== 0) throw new KithError('TX_BAD_FIELD', `${tx.type} carries no amount (\`amount\` must be 0)`)
}

/**
 * The key index: an X25519 key belongs to at most one identity, as its registered key, a
 * linked device, or both (an identity may list its own registered key among its devices, so
 * the device that holds it still receives messages once other devices are linked). X25519 keys
 * cannot sign, so the first identity to claim a key on chain holds it until it lets go.
 */
function claimKey (state: StateOverlay, key: string, claimant: string, field: string): void {
  const holder = Registry.keyHolder(state, key)
  if (holder !== undefined && holder !== claimant) {
    const role = Registry.identity(state, holder)?.x25519_pub === key ? 'registered key (REGISTER_KEY)' : 'linked device key (LINK_DEVICE)'
    throw new KithError('IDENTITY_KEY_TAKEN', `${field} ${key} is already another identity's ${role}: an X25519 key belongs to at most one identity until that identity releases it`)
  }
  state.set(StateKeys.keyHolder(key), claimant)
}

/** Releases `key` from the index unless `holder` still uses it as its registered key or a device. */
function releaseKey (state: StateOverlay, key: string, holder: string): void {
  if (Registry.identity(state, holder)?.x25519_pub === key) return
  if (Registry.devices(state, holder).some((d) => d.x25519_pub === key)) return
  state.delete(StateKeys.keyHolder(key))
}

export const registerKeyRule = defineRule({
  payload: z.object({ x25519_pub: X25519Schema, nickname: chars(MAX_NICKNAME_CHARS).optional() }),
  minFee: MIN_FEE,
  clientSubmittable: true,
  check: noTransfer,
  apply ({ tx, payload, state, block }) {
    const existing = Registry.identity(state, tx.from)
    claimKey(state, payload.x25519_pub, tx.from, 'x25519_pub')
    state.set(StateKeys.identity(tx.from), asState({
      x25519_pub: payload.x25519_pub,
      nickname: payload.nickname ?? existing?.nickname ?? '',
      registered_at: existing?.registered_at ?? unixSeconds(block.time),
      tx_id: tx.id
    }))
    // a new key lets the old one go
    if (existing !== undefined && existing.x25519_pub !== payload.x25519_pub) releaseKey(state, existing.x25519_pub, tx.from)
  }
})

export const linkDeviceRule = defineRule({
  payload: z.object({ device_x25519_pub: X25519Schema, device_name: chars(MAX_DEVICE_NAME_CHARS).optional() }),
  minFee: MIN_FEE,
  clientSubmittable: true,
  check: noTransfer,
  apply ({ tx, payload, state, block }) {
    const key = payload.device_x25519_pub
    const devices = Registry.devices(state, tx.from)
    if (devices.some((d) => d.x25519_pub === key)) throw new KithError('TX_CONFLICT', 'this device key is already linked to this identity')
    if (devices.length >= MAX_DEVICES) throw new KithError('TX_CONFLICT', `an identity may link at most ${MAX_DEVICES} devices`)
    claimKey(state, key, tx.from, 'device_x25519_pub')
    const device: DeviceRecord = { x25519_pub: key, name: payload.device_name ?? '', linked_at: unixSeconds(block.time), tx_id: tx.id }
    state.set(StateKeys.devices(tx.from), asState([...devices, device]))
  }
})

export const unlinkDeviceRule = defineRule({
  payload: z.object({ device_x25519_pub: X25519Schema }),
  minFee: MIN_FEE,
  clientSubmittable: true,
  check: noTransfer,
  apply ({ tx, payload, state }) {
    const key = payload.device_x25519_pub
    const linked = Registry.devices(state, tx.from)
    if (!linked.some((d) => d.x25519_pub === key)) throw new KithError('TX_UNKNOWN_TARGET', 'this device key is not linked to this identity')
    const devices = linked.filter((d) => d.x25519_pub !== key)
    if (devices.length === 0) state.delete(StateKeys.devices(tx.from))
    else state.set(StateKeys.devices(tx.from), asState(devices))
    releaseKey(state, key, tx.from)
  }
})
