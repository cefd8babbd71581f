/** REGISTER_KEY, LINK_DEVICE, UNLINK_DEVICE: the identity and device registries (decisions.md). */
import { z } from 'zod'
import { KithError } from '../../errors.js'
import { MIN_FEE } from '../limits.js'
import { Registry, asState, unixSeconds, type DeviceRecord } from '../registry.js'
import { StateKeys } from '../state.js'
import type { Transaction } from '../tx.js'
import { defineRule } from './types.js'

export const MAX_NICKNAME_CHARS = 32
export const MAX_DEVICE_NAME_CHARS = 64
export const MAX_DEVICES = 16

const X25519Hex = z.string().regex(/^[0-9a-f]{64}$/, 'must be a 64-character lowercase hex X25519 public key')
const chars = (max: number) => z.string().refine((s) => [...s].length <= max, `must be at most ${max} characters`)

/** Registry transactions carry no recipient and no amount. */
export function noTransfer (tx: Transaction): void {
  if (tx.to !== '') throw new KithError('TX_INVALID', `${tx.type} takes no recipient (\`to\` must be empty)`)
  if (tx.amount !== 0) throw new KithError('TX_INVALID', `${tx.type} carries no amount (\`amount\` must be 0)`)
}

export const registerKeyRule = defineRule({
  payload: z.object({ x25519_pub: X25519Hex, nickname: chars(MAX_NICKNAME_CHARS).optional() }),
  minFee: MIN_FEE,
  clientSubmittable: true,
  check: noTransfer,
  apply ({ tx, payload, state, block }) {
    const existing = Registry.identity(state, tx.from)
    state.set(StateKeys.identity(tx.from), asState({
      x25519_pub: payload.x25519_pub,
      nickname: payload.nickname ?? existing?.nickname ?? '',
      registered_at: existing?.registered_at ?? unixSeconds(block.time),
      tx_id: tx.id
    }))
  }
})

export const linkDeviceRule = defineRule({
  payload: z.object({ device_x25519_pub: X25519Hex, device_name: chars(MAX_DEVICE_NAME_CHARS).optional() }),
  minFee: MIN_FEE,
  clientSubmittable: true,
  check: noTransfer,
  apply ({ tx, payload, state, block }) {
    const key = payload.device_x25519_pub
    const owner = Registry.deviceOwner(state, key)
    if (owner !== undefined && owner !== tx.from) throw new KithError('TX_INVALID', 'this device key is already linked to another identity')
    if (owner === tx.from) throw new KithError('TX_INVALID', 'this device key is already linked to this identity')
    const devices = Registry.devices(state, tx.from)
    if (devices.length >= MAX_DEVICES) throw new KithError('TX_INVALID', `an identity may link at most ${MAX_DEVICES} devices`)
    const device: DeviceRecord = { x25519_pub: key, name: payload.device_name ?? '', linked_at: unixSeconds(block.time), tx_id: tx.id }
    state.set(StateKeys.devices(tx.from), asState([...devices, device]))
    state.set(StateKeys.deviceOwner(key), tx.from)
  }
})

export const unlinkDeviceRule = defineRule({
  payload: z.object({ device_x25519_pub: X25519Hex }),
  minFee: MIN_FEE,
  clientSubmittable: true,
  check: noTransfer,
  apply ({ tx, payload, state }) {
    const key = payload.device_x25519_pub
    if (Registry.deviceOwner(state, key) !== tx.from) throw new KithError('TX_INVALID', 'this device key is not linked to this identity')
    const devices = Registry.devices(state, tx.from).filter((d) => d.x25519_pub !== key)
    if (devices.length === 0) state.delete(StateKeys.devices(tx.from))
    else state.set(StateKeys.devices(tx.from), asState(devices))
    state.delete(StateKeys.deviceOwner(key))
  }
})
