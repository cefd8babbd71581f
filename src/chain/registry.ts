/**
 * Records of the identity, device, contact and relay registries as they sit in chain state,
 * with typed reads. Rules write them; the node reads them for the API and the relay.
 */
import { StateKeys, type StateReader, type StateValue } from './state.js'

export interface IdentityRecord {
  x25519_pub: string
  nickname: string
  /** unix s of the block that first registered it */
  registered_at: number
  tx_id: string
}

export interface DeviceRecord {
  x25519_pub: string
  name: string
  /** unix s */
  linked_at: number
  tx_id: string
}

export type ContactStatus = 'pending' | 'accepted' | 'blocked'

export interface ContactRecord {
  requester_pub: string
  status: ContactStatus
  intro: string
  fee_ut: number
  tx_id: string
  /** unix s */
  created_at: number
}

export interface RelayRecord {
  x25519_pub_key: string
  fee_per_msg_ut: number
  multiaddr: string
  /** unix s of the last HEARTBEAT; 0 before the first */
  last_heartbeat: number
  /** where relay earnings go (BIND_WALLET); '' for the relay's own key */
  wallet: string
  registered_at: number
}

function read<T> (state: StateReader, key: string): T | undefined {
  return state.get(key) as T | undefined
}

export function asState (value: object): StateValue {
  return value as unknown as StateValue
}

export const Registry = {
  identity: (state: StateReader, pub: string) => read<IdentityRecord>(state, StateKeys.identity(pub)),
  devices: (state: StateReader, master: string) => read<DeviceRecord[]>(state, StateKeys.devices(master)) ?? [],
  keyHolder: (state: StateReader, x25519: string) => read<string>(state, StateKeys.keyHolder(x25519)),
  contacts: (state: StateReader, recipient: string) => read<ContactRecord[]>(state, StateKeys.contacts(recipient)) ?? [],
  relay: (state: StateReader, pub: string) => read<RelayRecord>(state, StateKeys.relay(pub)),
  relays: (state: StateReader) => read<string[]>(state, StateKeys.relays) ?? []
}

/**
 * Whether `ed25519Pub` owns the mailbox key `x25519Pub` (its registered key or a linked device):
 * exactly when the key index names it, so a key has one owner however many claimed it.
 */
export function ownsMailbox (state: StateReader, ed25519Pub: string, x25519Pub: string): boolean {
  return Registry.keyHolder(state, x25519Pub) === ed25519Pub
}

export function unixSeconds (ms: number): number {
  return Math.floor(ms / 1000)
}
