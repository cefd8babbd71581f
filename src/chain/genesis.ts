/** Genesis file: schema, hash, and the state it starts the chain with. */
import { z } from 'zod'
import { canonicalJson } from './canonical-json.js'
import { PubkeySchema, X25519Schema } from './tx.js'
import { MemoryState, StateKeys, nextStateRoot, type StateValue } from './state.js'
import type { ValidatorSetState } from './validators.js'
import { ContractKeys, genesisContractId, installContract, type PreparedContract } from './contract-state.js'
import { DEFAULT_GAS_PRICE } from './limits.js'
import { asState, unixSeconds, type RelayRecord } from './registry.js'
import { sha256Hex } from '../crypto/index.js'

export const ChainParamsSchema = z.object({
  /** µT minted to the proposer of each block that carries transactions */
  block_reward_ut: z.number().int().min(0).default(0),
  /** most transactions one block may carry */
  max_block_txs: z.number().int().min(1).default(20_000),
  /** the gas price the chain starts with, µT per 1,000 gas (docs/contracts.md) */
  gas_price: z.number().int().min(0).default(DEFAULT_GAS_PRICE),
  /**
   * the first height whose header carries `state_hash` (docs/protocol.md § 5.4). New chains set 1;
   * no default, so a genesis written before the field keeps its hash and its headers.
   */
  state_hash_height: z.number().int().min(1).optional()
})
export type ChainParams = z.output<typeof ChainParamsSchema>

/** What `kith init` and `kith testnet` write into a new genesis: its headers carry the state hash from block 1. */
export const NEW_CHAIN_PARAMS = { state_hash_height: 1 } as const

export const GenesisSchema = z.object({
  chain_id: z.string().min(1).max(64).regex(/^[A-Za-z0-9._-]+$/, 'may contain only letters, digits and . _ -'),
  genesis_time: z.string(),
  params: ChainParamsSchema.default({ block_reward_ut: 0, max_block_txs: 20_000, gas_price: DEFAULT_GAS_PRICE }),
  validators: z.array(z.object({
    pub_key: PubkeySchema,
    power: z.number().int().min(1),
    name: z.string().optional()
  })).min(1, 'genesis needs at least one validator'),
  /** identities that may become validators by staking, besides the genesis validators */
  candidates: z.array(PubkeySchema).optional(),
  alloc: z.array(z.object({
    pub_key: PubkeySchema,
    amount_ut: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER)
  })).default([]),
  /**
   * relays registered from height 0, as by REGISTER_RELAY: a node can host posts from its first
   * block (CREATE_POST names a registered relay). No default, so a genesis without it keeps its hash.
   */
  relays: z.array(z.object({
    pub_key: PubkeySchema,
    x25519_pub_key: X25519Schema,
    fee_per_msg_ut: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    multiaddr: z.string().max(512).optional()
  })).optional()
})
export type Genesis = z.output<typeof GenesisSchema>

/** sha256 of the genesis file's canonical form (sorted members, no whitespace). */
export function genesisHash (genesis: Genesis): string {
  return sha256Hex(Buffer.from(canonicalJson(genesis), 'utf8'))
}

export interface GenesisState {
  state: MemoryState
  stateRoot: string
}

/** A contract every chain starts with (the username registry), already prepared by the executor. */
export interface GenesisContract { name: string, version: string, prepared: PreparedContract }

export function genesisState (genesis: Genesis, contracts: GenesisContract[] = []): GenesisState {
  const state = new MemoryState()
  let supply = 0
  for (const { pub_key: pubkey, amount_ut: amount } of genesis.alloc) {
    const key = StateKeys.balance(pubkey)
    state.data.set(key, ((state.data.get(key) as number | undefined) ?? 0) + amount)
    supply += amount
  }
  if (!Number.isSafeInteger(supply)) throw new RangeError('genesis allocations exceed the largest exact amount')
  state.data.set(StateKeys.supply, supply)
  const base = [
    ...genesis.validators.map((v) => ({ pub_key: v.pub_key, power: v.power, ...(v.name !== undefined ? { name: v.name } : {}) })),
    ...(genesis.candidates ?? []).filter((c) => !genesis.validators.some((v) => v.pub_key === c)).map((c) => ({ pub_key: c, power: 0 }))
  ]
  const valset: ValidatorSetState = { base, active: base.filter((v) => v.power > 0), pending: null }
  state.data.set(StateKeys.valset, valset as unknown as StateValue)
  state.data.set(StateKeys.totalTxs, 0)
  state.data.set(ContractKeys.gasPrice, genesis.params.gas_price)
  const relays = genesis.relays ?? []
  for (const relay of relays) {
    const record: RelayRecord = {
      x25519_pub_key: relay.x25519_pub_key,
      fee_per_msg_ut: relay.fee_per_msg_ut,
      multiaddr: relay.multiaddr ?? '',
      last_heartbeat: 0,
      wallet: '',
      registered_at: unixSeconds(Date.parse(genesis.genesis_time) || 0)
    }
    state.data.set(StateKeys.relay(relay.pub_key), asState(record))
  }
  if (relays.length > 0) state.data.set(StateKeys.relays, [...new Set(relays.map((r) => r.pub_key))])
  const writer = { get: (key: string) => state.data.get(key), set: (key: string, value: StateValue) => { state.data.set(key, value) } }
  for (const c of contracts) {
    installContract(writer, { id: genesisContractId(c.name), name: c.name, version: c.version, deployer: '', height: 0, time: Date.parse(genesis.genesis_time) || 0, txId: '', prepared: c.prepared })
  }
  const stateRoot = nextStateRoot(genesisHash(genesis), new Map(state.data))
  return { state, stateRoot }
}
