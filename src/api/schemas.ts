/**
 * Wire schemas of the API's responses and parameters. Request bodies reuse the subsystems'
 * own schemas (TransactionSchema); all of them feed both validation and the OpenAPI document.
 */
import { z } from 'zod'
import { TransactionSchema, TX_TYPES } from '../chain/index.js'
import { BuildInfoSchema } from '../release/index.js'

export const ErrorSchema = z.object({ error: z.string() }).meta({ id: 'Error', description: 'Every error response' })

export const SubmitResponseSchema = z.object({
  id: z.string(),
  status: z.literal('accepted')
}).meta({ id: 'SubmitResponse' })

export const TxDetailSchema = z.object({
  id: z.string(),
  type: z.enum(TX_TYPES),
  status: z.enum(['pending', 'confirmed']).meta({ description: 'pending while in the mempool; block fields appear once confirmed' }),
  memo: z.string().optional(),
  from: z.string(),
  from_addr: z.string().optional(),
  to: z.string().optional(),
  to_addr: z.string().optional(),
  amount_ut: z.number().int(),
  amount: z.string().meta({ description: 'display form, e.g. "1.5 T"' }),
  fee_ut: z.number().int(),
  fee: z.string(),
  time: z.string().meta({ description: 'ISO 8601 UTC (the transaction timestamp)' }),
  block_index: z.number().int().optional(),
  block_hash: z.string().optional(),
  block_time: z.string().optional(),
  gas_used: z.number().int().optional().meta({ description: 'gas a confirmed CALL_CONTRACT used' }),
  contract_id: z.string().optional().meta({ description: 'the contract a DEPLOY_CONTRACT creates (known before the block: docs/protocol.md § 20)' }),
  call_result: z.object({
    ok: z.boolean().meta({ description: 'false when the call failed: only the fee and the gas were charged' }),
    gas_used: z.number().int(),
    gas_cost_ut: z.number().int().meta({ description: 'µT billed for the gas at the live gas price, beside the fee' }),
    error: z.string().optional().meta({ description: 'why the call failed: out of gas, trap, ... (docs/contracts.md)' }),
    return_b64: z.string().optional().meta({ description: 'data the contract returned' })
  }).optional().meta({ description: 'what a confirmed CALL_CONTRACT did' }),
  payload: z.unknown().optional().meta({ description: 'decoded JSON payload, for recognised types' }),
  payload_hex: z.string().optional().meta({ description: 'raw payload bytes, when the type is not recognised' }),
  signature_hex: z.string().optional()
}).meta({ id: 'TransactionDetail' })
export type TxDetail = z.output<typeof TxDetailSchema>

export const AddressTxSchema = z.object({
  id: z.string(),
  type: z.enum(TX_TYPES),
  from: z.string(),
  to: z.string().optional(),
  amount_ut: z.number().int(),
  fee_ut: z.number().int(),
  time: z.string(),
  block_index: z.number().int()
}).meta({ id: 'AddressTransaction' })
export type AddressTx = z.output<typeof AddressTxSchema>

export const AddressSummarySchema = z.object({
  pub_key: z.string(),
  address: z.string(),
  balance_ut: z.number().int(),
  balance: z.string(),
  transactions: z.array(AddressTxSchema),
  tx_count: z.number().int(),
  has_more: z.boolean()
}).meta({ id: 'AddressSummary' })
export type AddressSummary = z.output<typeof AddressSummarySchema>

export const NetStatsSchema = z.object({
  chain_id: z.string(),
  height: z.number().int(),
  total_txs: z.number().int(),
  supply: z.number().int().meta({ description: 'µT in existence' }),
  validator_count: z.number().int(),
  mempool_size: z.number().int(),
  last_block_time: z.string(),
  state_hash: z.string().meta({ description: 'hash of the whole state at this height (LtHash, docs/protocol.md § 5.4): nodes at one height with one state show the same value' })
}).meta({ id: 'NetStats' })
export type NetStats = z.output<typeof NetStatsSchema>

export const ValidatorSchema = z.object({
  pub_key: z.string(),
  address: z.string(),
  power: z.number().int(),
  name: z.string().optional()
}).meta({ id: 'Validator' })

export const ValidatorsSchema = z.object({
  height: z.number().int(),
  count: z.number().int(),
  total_power: z.number().int(),
  validators: z.array(ValidatorSchema)
}).meta({ id: 'ValidatorSet' })
export type Validators = z.output<typeof ValidatorsSchema>

export const PeerSchema = z.object({
  peer_id: z.string(),
  multiaddr: z.string().optional(),
  version: z.string().optional().meta({ description: 'node version the peer announced over version gossip' }),
  protocol_version: z.number().int().optional(),
  height: z.number().int().optional().meta({ description: 'chain height the peer last announced' })
}).meta({ id: 'Peer' })

export const PeersSchema = z.object({
  count: z.number().int(),
  peers: z.array(PeerSchema)
}).meta({ id: 'Peers' })
export type Peers = z.output<typeof PeersSchema>

export const WellKnownEntrySchema = z.object({
  contract_id: z.string(),
  name: z.string().meta({ description: 'ABI name' }),
  version: z.string().optional(),
  deployed_at: z.number().int().meta({ description: 'unix s of the deploying block (genesis time for contracts deployed at genesis)' })
}).meta({ id: 'WellKnownContract' })

export const NetworkInfoSchema = z.object({
  chain_id: z.string(),
  genesis_hash: z.string(),
  height: z.number().int(),
  node_id: z.string(),
  peers: z.array(PeerSchema),
  validators: z.array(ValidatorSchema),
  contracts: z.record(z.string(), WellKnownEntrySchema).meta({ description: 'well-known contracts by ABI name (as GET /api/well-known-contracts)' }),
  gas_price: z.number().int().meta({ description: 'the live gas price: µT per 1,000 gas (docs/contracts.md)' })
}).meta({ id: 'NetworkInfo' })
export type NetworkInfo = z.output<typeof NetworkInfoSchema>

export const NodeVersionSchema = z.object({
  node_version: z.string(),
  protocol_version: z.number().int(),
  features: z.array(z.string()),
  chain_id: z.string().optional(),
  build: BuildInfoSchema.optional()
}).meta({ id: 'NodeVersion' })
export type NodeVersion = z.output<typeof NodeVersionSchema>

export const BlockSummarySchema = z.object({
  height: z.number().int(),
  hash: z.string(),
  time: z.string().meta({ description: 'ISO 8601 UTC' }),
  prev_hash: z.string(),
  state_root: z.string(),
  state_hash: z.string().optional().meta({ description: 'hash of the whole state after this block (docs/protocol.md § 5.4); in the block header, so signed by its commit certificate, from the genesis\' state_hash_height on; absent for blocks a node stored before it kept one' }),
  tx_root: z.string(),
  proposer: z.string(),
  tx_count: z.number().int(),
  tx_ids: z.array(z.string()),
  commit: z.object({
    round: z.number().int(),
    signers: z.array(z.string()).meta({ description: 'validators whose precommits certify this block' })
  }).nullable()
}).meta({ id: 'Block' })
export type BlockSummary = z.output<typeof BlockSummarySchema>

export const BlockParams = z.object({
  height: z.union([z.literal('latest'), z.coerce.number().int().min(1)]).meta({ description: 'block height, or `latest`' })
})

export const TxIdParams = z.object({ id: z.string().min(1).max(256) })
export const AddressParams = z.object({ pubkey: z.string().min(1).max(128).meta({ description: 'Ed25519 pubkey (hex) or address' }) })
/** GET /api/address/{pubkey}?limit=N: the client sends 50 (spec). */
export const ADDRESS_HISTORY_DEFAULT = 50
export const ADDRESS_HISTORY_MAX = 500
export const AddressQuery = z.object({
  limit: z.coerce.number().int().min(1).max(ADDRESS_HISTORY_MAX).default(ADDRESS_HISTORY_DEFAULT)
    .meta({ description: `newest N transactions (default ${ADDRESS_HISTORY_DEFAULT}, at most ${ADDRESS_HISTORY_MAX})` })
})

export { TransactionSchema }
