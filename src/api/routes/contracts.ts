/** Contracts under /api: the well-known list, contract info, state values and logs (reads of chain state). */
import { z } from 'zod'
import { balanceOf, CONTRACT_ID_RE, Contracts, isWellKnown, type ContractRecord, type StateReader } from '../../chain/index.js'
import { KithError } from '../../errors/index.js'
import { route, type AnyRoute } from '../route.js'
import { ErrorSchema, WellKnownEntrySchema } from '../schemas.js'

export const CONTRACT_PAGE_DEFAULT = 50
export const CONTRACT_PAGE_MAX = 200

const ContractId = z.string().regex(CONTRACT_ID_RE, 'must be a contract id: 40 lowercase hex characters').meta({ description: 'contract id (40 hex characters)' })
const Page = z.object({
  limit: z.coerce.number().int().min(1).max(CONTRACT_PAGE_MAX).default(CONTRACT_PAGE_DEFAULT)
    .meta({ description: `at most this many, newest first (default ${CONTRACT_PAGE_DEFAULT}, at most ${CONTRACT_PAGE_MAX})` }),
  before: z.coerce.number().int().min(1).optional().meta({ description: 'only items with a sequence number below this (the previous page\'s next_cursor)' })
})

export const WellKnownContractsSchema = z.object({
  count: z.number().int(),
  contracts: z.record(z.string(), WellKnownEntrySchema).meta({ description: 'keyed by ABI name: the contracts the chain deployed at genesis (always the earliest of their name; no user deploy may take their names)' })
}).meta({ id: 'WellKnownContracts' })
export type WellKnownContracts = z.output<typeof WellKnownContractsSchema>

export const ContractInfoSchema = z.object({
  contract_id: z.string(),
  name: z.string().meta({ description: 'ABI name' }),
  version: z.string().optional(),
  deployer: z.string().meta({ description: 'pubkey of the deployer; empty for contracts deployed at genesis' }),
  deployed_at: z.number().int().meta({ description: 'unix s' }),
  deployed_height: z.number().int(),
  deploy_tx: z.string().meta({ description: 'id of the DEPLOY_CONTRACT transaction; empty at genesis' }),
  code_hash: z.string().meta({ description: 'sha256 (hex) of the instrumented module the chain runs' }),
  code_size: z.number().int(),
  methods: z.array(z.string()),
  call_base_gas: z.number().int().meta({ description: 'gas every call pays before any code runs: instantiating the module (its memory, table, globals, exports and data)' }),
  well_known: z.boolean().meta({ description: 'deployed by the chain at genesis (a user\'s contract never is)' }),
  balance_ut: z.number().int(),
  log_count: z.number().int(),
  seq: z.number().int().meta({ description: 'order of deployment, from 1' })
}).meta({ id: 'ContractInfo' })
export type ContractInfo = z.output<typeof ContractInfoSchema>

export const ContractListSchema = z.object({
  count: z.number().int(),
  total: z.number().int(),
  contracts: z.array(ContractInfoSchema),
  next_cursor: z.number().int().nullable().meta({ description: 'pass as `before` for the next page; null at the end' })
}).meta({ id: 'ContractList' })
export type ContractList = z.output<typeof ContractListSchema>

export const ContractStateValueSchema = z.object({
  contract_id: z.string(),
  key: z.string(),
  value_b64: z.string().nullable().meta({ description: 'null when the key is missing' }),
  value_hex: z.string().nullable().meta({ description: 'null when the key is missing' }),
  value_u64: z.number().int().optional().meta({ description: 'the value as a little-endian unsigned integer, when it is 8 bytes and at most 2^53 - 1' })
}).meta({ id: 'ContractStateValue' })
export type ContractStateValue = z.output<typeof ContractStateValueSchema>

export const ContractLogsSchema = z.object({
  contract_id: z.string(),
  count: z.number().int(),
  total: z.number().int(),
  logs: z.array(z.object({
    seq: z.number().int(),
    tx_id: z.string(),
    height: z.number().int(),
    data_b64: z.string(),
    data_hex: z.string(),
    text: z.string().optional().meta({ description: 'the data as text, when it is valid UTF-8' })
  })),
  next_cursor: z.number().int().nullable()
}).meta({ id: 'ContractLogs' })
export type ContractLogs = z.output<typeof ContractLogsSchema>
export type ContractLog = ContractLogs['logs'][number]

/** The well-known contracts keyed by ABI name (also served in /api/network-info). */
export function wellKnownContracts (state: StateReader): Record<string, z.output<typeof WellKnownEntrySchema>> {
  const out: Record<string, z.output<typeof WellKnownEntrySchema>> = {}
  for (const name of Contracts.wellKnownNames(state)) {
    const id = Contracts.wellKnown(state, name)
    const record = id === undefined ? undefined : Contracts.get(state, id)
    if (record === undefined || !isWellKnown(record)) continue
    out[name] = { contract_id: record.contract_id, name, ...(record.version !== '' ? { version: record.version } : {}), deployed_at: record.deployed_at }
  }
  return out
}

function contractInfo (state: StateReader, record: ContractRecord): z.output<typeof ContractInfoSchema> {
  return {
    contract_id: record.contract_id,
    name: record.name,
    ...(record.version !== '' ? { version: record.version } : {}),
    deployer: record.deployer,
    deployed_at: record.deployed_at,
    deployed_height: record.deployed_height,
    deploy_tx: record.deploy_tx,
    code_hash: record.code_hash,
    code_size: record.code_size,
    methods: record.methods,
    call_base_gas: record.call_base_gas,
    well_known: isWellKnown(record),
    balance_ut: balanceOf(state, record.contract_id),
    log_count: Contracts.logCount(state, record.contract_id),
    seq: record.seq
  }
}

function existing (state: StateReader, id: string): ContractRecord {
  const record = Contracts.get(state, id)
  if (record === undefined) throw new KithError('NOT_FOUND', `unknown contract ${id}`)
  return record
}

/** Sequence numbers from `before - 1` (or `newest`) down, `limit` of them, and the cursor after. */
function pageOf (newest: number, query: { limit: number, before?: number | undefined }): { seqs: number[], next: number | null } {
  const top = Math.min(newest, (query.before ?? newest + 1) - 1)
  const bottom = Math.max(1, top - query.limit + 1)
  const seqs: number[] = []
  for (let seq = top; seq >= bottom; seq--) seqs.push(seq)
  return { seqs, next: bottom > 1 && seqs.length > 0 ? bottom : null }
}

function stateValue (id: string, key: string, value: Uint8Array | undefined): z.output<typeof ContractStateValueSchema> {
  if (value === undefined) return { contract_id: id, key, value_b64: null, value_hex: null }
  const bytes = Buffer.from(value)
  const u64 = bytes.length === 8 ? bytes.readBigUInt64LE(0) : undefined
  return {
    contract_id: id,
    key,
    value_b64: bytes.toString('base64'),
    value_hex: bytes.toString('hex'),
    ...(u64 !== undefined && u64 <= BigInt(Number.MAX_SAFE_INTEGER) ? { value_u64: Number(u64) } : {})
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true })

function asText (bytes: Buffer): string | undefined {
  try {
    return UTF8.decode(bytes)
  } catch {
    return undefined
  }
}

export function contractRoutes (state: StateReader): AnyRoute[] {
  const notFound = { 404: { description: 'unknown contract', schema: ErrorSchema } }
  const badRequest = { 400: { description: 'malformed contract id or query', schema: ErrorSchema } }
  return [
    route({
      method: 'get',
      path: '/api/well-known-contracts',
      tag: 'contracts',
      summary: 'The well-known (system) contracts: those the chain deployed at genesis',
      responses: { 200: { description: 'well-known contracts', schema: WellKnownContractsSchema } },
      handler: () => {
        const contracts = wellKnownContracts(state)
        return { count: Object.keys(contracts).length, contracts }
      }
    }),
    route({
      method: 'get',
      path: '/api/contracts',
      tag: 'contracts',
      summary: 'Deployed contracts, newest first',
      query: Page,
      responses: { 200: { description: 'a page of contracts', schema: ContractListSchema }, ...badRequest },
      handler: ({ query }) => {
        const total = Contracts.count(state)
        const { seqs, next } = pageOf(total, query)
        const contracts = seqs.flatMap((seq) => {
          const record = Contracts.get(state, Contracts.idAt(state, seq) ?? '')
          return record === undefined ? [] : [contractInfo(state, record)]
        })
        return { count: contracts.length, total, contracts, next_cursor: next }
      }
    }),
    route({
      method: 'get',
      path: '/api/contracts/{id}',
      tag: 'contracts',
      summary: 'A contract: ABI name, version, deployer, code, methods, balance',
      params: z.object({ id: ContractId }),
      responses: { 200: { description: 'contract info', schema: ContractInfoSchema }, ...badRequest, ...notFound },
      handler: ({ params }) => contractInfo(state, existing(state, params.id))
    }),
    route({
      method: 'get',
      path: '/api/contracts/{id}/state/{key}',
      tag: 'contracts',
      summary: 'One value of a contract\'s state (null when the key is missing)',
      description: 'The key is the contract\'s storage key as text, percent-encoded in the path (e.g. `name:alice_01`, `addr:<pubkey>` for the username registry).',
      params: z.object({ id: ContractId, key: z.string().min(1).max(256).meta({ description: 'storage key (UTF-8 text)' }) }),
      responses: { 200: { description: 'the value, or nulls when missing', schema: ContractStateValueSchema }, ...badRequest, ...notFound },
      handler: ({ params }) => {
        existing(state, params.id)
        return stateValue(params.id, params.key, Contracts.storage(state, params.id, params.key))
      }
    }),
    route({
      method: 'get',
      path: '/api/contracts/{id}/logs',
      tag: 'contracts',
      summary: 'A contract\'s logs, newest first',
      params: z.object({ id: ContractId }),
      query: Page,
      responses: { 200: { description: 'a page of logs', schema: ContractLogsSchema }, ...badRequest, ...notFound },
      handler: ({ params, query }) => {
        existing(state, params.id)
        const total = Contracts.logCount(state, params.id)
        const { seqs, next } = pageOf(total, query)
        const logs = seqs.flatMap((seq) => {
          const log = Contracts.log(state, params.id, seq)
          if (log === undefined) return []
          const data = Buffer.from(log.data_b64, 'base64')
          const text = asText(data)
          return [{ seq, tx_id: log.tx_id, height: log.height, data_b64: log.data_b64, data_hex: data.toString('hex'), ...(text !== undefined ? { text } : {}) }]
        })
        return { contract_id: params.id, count: logs.length, total, logs, next_cursor: next }
      }
    })
  ]
}
