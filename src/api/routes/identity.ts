/** Identity, device, relay and contact registries: reads of chain state. */
import { z } from 'zod'
import { Registry, addressOf, resolveAccount, type StateReader } from '../../chain/index.js'
import { KithError } from '../../errors/index.js'
import { route, type AnyRoute } from '../route.js'
import { ErrorSchema } from '../schemas.js'

const Pub = z.string().min(1).max(128)

export const IdentitySchema = z.object({
  pub_key: z.string(),
  address: z.string(),
  x25519_pub: z.string().meta({ description: 'empty string when no X25519 key is published' }),
  nickname: z.string(),
  registered: z.boolean(),
  device_count: z.number().int()
}).meta({ id: 'Identity' })
export type Identity = z.output<typeof IdentitySchema>

export const DevicesSchema = z.object({
  master_pub: z.string(),
  count: z.number().int(),
  devices: z.array(z.object({ x25519_pub: z.string(), name: z.string(), linked_at: z.number().int(), tx_id: z.string() }))
}).meta({ id: 'DeviceList' })
export type Devices = z.output<typeof DevicesSchema>

export const RelayEntrySchema = z.object({
  pub_key: z.string(),
  address: z.string(),
  relay: z.object({ x25519_pub_key: z.string(), fee_per_msg_ut: z.number().int(), multiaddr: z.string().optional() }),
  last_heartbeat: z.number().int().optional().meta({ description: 'unix s' })
}).meta({ id: 'RelayEntry' })

export const ContactsSchema = z.object({
  pub: z.string(),
  count: z.number().int(),
  contacts: z.array(z.object({
    requester_pub: z.string(),
    requester_addr: z.string(),
    status: z.enum(['pending', 'accepted', 'blocked']),
    intro: z.string(),
    fee_ut: z.number().int(),
    tx_id: z.string(),
    created_at: z.number().int()
  }))
}).meta({ id: 'ContactList' })

function account (value: string, what: string): string {
  const pub = resolveAccount(value)
  if (pub === undefined) throw new KithError('BAD_REQUEST', `${what} ${value} is neither an Ed25519 pubkey (64 hex characters) nor a kith address`)
  return pub
}

export function identityRoutes (state: StateReader): AnyRoute[] {
  return [
    route({
      method: 'get',
      path: '/api/identity/{pubkey_or_address}',
      tag: 'identity',
      summary: 'The identity registered by a pubkey or address',
      params: z.object({ pubkey_or_address: Pub.meta({ description: 'Ed25519 pubkey or address' }) }),
      responses: { 200: { description: 'identity', schema: IdentitySchema }, 404: { description: 'unknown identity', schema: ErrorSchema } },
      handler: ({ params }) => {
        const pub = account(params.pubkey_or_address, 'identity')
        const identity = Registry.identity(state, pub)
        const devices = Registry.devices(state, pub)
        if (identity === undefined && devices.length === 0) throw new KithError('NOT_FOUND', `unknown identity ${params.pubkey_or_address}`)
        return {
          pub_key: pub,
          address: addressOf(pub),
          x25519_pub: identity?.x25519_pub ?? '',
          nickname: identity?.nickname ?? '',
          registered: identity !== undefined,
          device_count: devices.length
        }
      }
    }),
    route({
      method: 'get',
      path: '/api/devices/{master_pub}',
      tag: 'identity',
      summary: 'Devices linked to a master identity; a message to it goes to every device key',
      params: z.object({ master_pub: Pub }),
      responses: { 200: { description: 'device list', schema: DevicesSchema }, 400: { description: 'not a pubkey', schema: ErrorSchema } },
      handler: ({ params }) => {
        const master = account(params.master_pub, 'master_pub')
        const devices = Registry.devices(state, master)
        return { master_pub: master, count: devices.length, devices }
      }
    }),
    route({
      method: 'get',
      path: '/api/relays',
      tag: 'identity',
      summary: 'Registered relays',
      responses: { 200: { description: 'relay registry', schema: z.array(RelayEntrySchema) } },
      handler: () => Registry.relays(state).flatMap((pub) => {
        const relay = Registry.relay(state, pub)
        if (relay === undefined) return []
        return [{
          pub_key: pub,
          address: addressOf(pub),
          relay: { x25519_pub_key: relay.x25519_pub_key, fee_per_msg_ut: relay.fee_per_msg_ut, ...(relay.multiaddr !== '' ? { multiaddr: relay.multiaddr } : {}) },
          ...(relay.last_heartbeat > 0 ? { last_heartbeat: relay.last_heartbeat } : {})
        }]
      })
    }),
    route({
      method: 'get',
      path: '/relay/contacts',
      tag: 'relay',
      summary: 'Contact requests addressed to an Ed25519 identity',
      query: z.object({ pub: Pub.meta({ description: 'Ed25519 pubkey (not X25519) or address' }) }),
      responses: { 200: { description: 'contact requests', schema: ContactsSchema }, 400: { description: 'missing or malformed pub', schema: ErrorSchema } },
      handler: ({ query }) => {
        const pub = account(query.pub, 'pub')
        const contacts = Registry.contacts(state, pub).map((c) => ({
          requester_pub: c.requester_pub,
          requester_addr: addressOf(c.requester_pub),
          status: c.status,
          intro: c.intro,
          fee_ut: c.fee_ut,
          tx_id: c.tx_id,
          created_at: c.created_at
        }))
        return { pub, count: contacts.length, contacts }
      }
    })
  ]
}
