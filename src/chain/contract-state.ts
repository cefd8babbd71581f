/**
 * Contracts in chain state: records, keys, ids and gas billing. The chain does not run wasm
 * itself: the node injects a ContractExecutor, a deterministic engine, the way it injects
 * signature checks. The chain owns that interface (below) and the limits it enforces on it
 * (MAX_GAS_LIMIT, MAX_CONTRACT_CODE_BYTES in ./limits.ts); the contract VM implements it.
 * Layout and rules: docs/contracts.md.
 */
import { sha256Hex } from '../crypto/index.js'
import { KithError } from '../errors/index.js'
import { asState } from './registry.js'
import { MAX_BLOCK_GAS, MAX_GAS_PRICE } from './limits.js'
import type { StateOverlay, StateReader } from './state.js'

/** A module the executor has validated and instrumented: what a DEPLOY_CONTRACT writes into state. */
export interface PreparedContract {
  /** Validated and instrumented wasm: what chain state stores and every node executes. */
  code: Uint8Array
  /** sha256 hex of `code`. */
  codeHash: string
  /** Callable exports (functions without parameters), sorted. */
  methods: string[]
  /**
   * Gas every call pays before any code runs: instantiating a fresh instance of this module
   * (the VM's GAS.callBase plus GAS.instantiation per page, table entry, global, export and data
   * byte it declares). Computed at deploy; part of consensus.
   */
  callBaseGas: number
}

/** One CALL_CONTRACT as the executor runs it. */
export interface ContractCallInput {
  /** A PreparedContract's code; compiled modules are cached by codeHash. */
  code: Uint8Array
  codeHash: string
  /** The PreparedContract's callBaseGas (at least the VM's GAS.callBase). */
  callBaseGas: number
  method: string
  /** '' or the text of a JSON array (the node has checked that it parses as one). */
  argsJson: string
  /** 64-char lowercase hex Ed25519 public key of the transaction's signer. */
  caller: string
  contractId: string
  /** µT attached to the call, already moved to the contract. */
  amount: number
  /** The contract's balance in µT, including `amount`. */
  balance: number
  /** At most MAX_GAS_LIMIT. */
  gasLimit: number
  blockHeight: number
}

/** The contract's committed + pending storage, read on the caller's thread. */
export interface ContractStorageView {
  get: (key: string) => Uint8Array | undefined
}

export interface ContractTransfer {
  to: string
  amount: number
}

export type ContractCallOutcome =
  | { ok: true, gasUsed: number, writes: Map<string, Uint8Array | null>, logs: Uint8Array[], transfers: ContractTransfer[], returnData: Uint8Array }
  | { ok: false, gasUsed: number, error: string }

/** The engine as the chain sees it: deterministic, the same inputs giving the same outcome and gas on every node. */
export interface ContractExecutor {
  /** Validates and instruments a module; throws KithError('CONTRACT_REFUSED') when it is refused. */
  prepare: (wasm: Uint8Array) => PreparedContract
  /**
   * Runs one call. Throws KithError when the input is refused; any other error means this node
   * could not decide the call (never a consensus result).
   */
  call: (input: ContractCallInput, storage: ContractStorageView) => ContractCallOutcome
}

export interface ContractRecord {
  contract_id: string
  /** ABI name, e.g. username_registry */
  name: string
  version: string
  /** '' for contracts deployed at genesis */
  deployer: string
  /** unix s of the deploying block (genesis time at genesis) */
  deployed_at: number
  /** height of the deploying block; 0 at genesis */
  deployed_height: number
  deploy_tx: string
  code_hash: string
  code_size: number
  methods: string[]
  /** gas every call pays before any code runs: instantiating the module (PreparedContract.callBaseGas) */
  call_base_gas: number
  /** order of deployment, from 1 */
  seq: number
}

/** What a confirmed CALL_CONTRACT did, kept for GET /api/tx/{id}. */
export interface CallRecord {
  ok: boolean
  gas_used: number
  gas_cost_ut: number
  /** a fixed category when the call failed (out of gas, trap, ...) */
  error?: string
  return_b64?: string
}

export interface LogRecord {
  tx_id: string
  height: number
  data_b64: string
}

export const ContractKeys = {
  contract: (id: string) => `contract:${id}`,
  code: (codeHash: string) => `code:${codeHash}`,
  storage: (id: string, key: string) => `cstore:${id}:${key}`,
  log: (id: string, seq: number) => `clog:${id}:${seq}`,
  logCount: (id: string) => `clogs:${id}`,
  bySeq: (seq: number) => `contractseq:${seq}`,
  count: 'contracts',
  wellKnown: (name: string) => `wellknown:${name}`,
  /** ABI names in the order their first contract was deployed */
  wellKnownNames: 'wellknown_names',
  call: (txId: string) => `callres:${txId}`,
  gasPrice: 'gas_price'
} as const

/**
 * Contract ids: 40 hex characters, never a 64-character pubkey, so balances share one key space.
 * A deployed contract's id comes from its DEPLOY_CONTRACT's id; a genesis contract's from its ABI
 * name under another prefix, so no transaction id can name a genesis contract's id.
 */
export function contractIdFor (deployTxId: string): string {
  return sha256Hex(Buffer.from(`kith-contract:${deployTxId}`, 'utf8')).slice(0, 40)
}

export function genesisContractId (abiName: string): string {
  return sha256Hex(Buffer.from(`kith-contract-genesis:${abiName}`, 'utf8')).slice(0, 40)
}

export const CONTRACT_ID_RE = /^[0-9a-f]{40}$/

/**
 * Well-known means deployed by the chain at genesis, nothing else: a genesis contract's id comes
 * from its ABI name under a prefix no transaction id can produce, so a user's contract can never
 * pass for one, whatever its name or when it was deployed.
 */
export function isWellKnown (record: Pick<ContractRecord, 'contract_id' | 'name'>): boolean {
  return record.contract_id === genesisContractId(record.name)
}

/**
 * The live gas price after a block whose calls used `used` gas: congestion pricing with the
 * genesis price as its floor. Above half the block bound the price rises, below it falls back,
 * by at most an eighth per block (and at least 1 µT per 1,000 gas when it moves at all), so
 * sustained demand is priced and a burst is not.
 */
export function nextGasPrice (price: number, used: number, floor: number): number {
  const target = MAX_BLOCK_GAS / 2
  if (used > target) return Math.min(MAX_GAS_PRICE, price + Math.max(1, Math.floor(price * (used - target) / target / 8)))
  if (price <= floor) return price
  return Math.max(floor, price - Math.max(1, Math.floor(price * (target - used) / target / 8)))
}

/** Writes the gas price that follows a block (only when it changes, so a quiet chain's blocks write nothing). */
export function settleGasPrice (state: Pick<StateOverlay, 'get' | 'set'>, used: number, floor: number): void {
  const price = Contracts.gasPrice(state)
  const next = nextGasPrice(price, used, floor)
  if (next !== price) state.set(ContractKeys.gasPrice, next)
}

/** µT billed for `gasUsed` at `gasPrice` µT per 1,000 gas, rounded up. */
export function gasCost (gasUsed: number, gasPrice: number): number {
  return Math.ceil(gasUsed * gasPrice / 1000)
}

export const Contracts = {
  get (state: StateReader, id: string): ContractRecord | undefined {
    return state.get(ContractKeys.contract(id)) as unknown as ContractRecord | undefined
  },
  code (state: StateReader, codeHash: string): Uint8Array | undefined {
    const b64 = state.get(ContractKeys.code(codeHash))
    return typeof b64 === 'string' ? Buffer.from(b64, 'base64') : undefined
  },
  count (state: StateReader): number {
    const n = state.get(ContractKeys.count)
    return typeof n === 'number' ? n : 0
  },
  idAt (state: StateReader, seq: number): string | undefined {
    const id = state.get(ContractKeys.bySeq(seq))
    return typeof id === 'string' ? id : undefined
  },
  wellKnownNames (state: StateReader): string[] {
    const names = state.get(ContractKeys.wellKnownNames)
    return Array.isArray(names) ? names as string[] : []
  },
  wellKnown (state: StateReader, name: string): string | undefined {
    const id = state.get(ContractKeys.wellKnown(name))
    return typeof id === 'string' ? id : undefined
  },
  storage (state: StateReader, id: string, key: string): Uint8Array | undefined {
    const b64 = state.get(ContractKeys.storage(id, key))
    return typeof b64 === 'string' ? Buffer.from(b64, 'base64') : undefined
  },
  logCount (state: StateReader, id: string): number {
    const n = state.get(ContractKeys.logCount(id))
    return typeof n === 'number' ? n : 0
  },
  log (state: StateReader, id: string, seq: number): LogRecord | undefined {
    return state.get(ContractKeys.log(id, seq)) as unknown as LogRecord | undefined
  },
  call (state: StateReader, txId: string): CallRecord | undefined {
    return state.get(ContractKeys.call(txId)) as unknown as CallRecord | undefined
  },
  gasPrice (state: StateReader): number {
    const price = state.get(ContractKeys.gasPrice)
    return typeof price === 'number' ? price : 0
  }
}

export interface DeployInput {
  id: string
  name: string
  version: string
  deployer: string
  height: number
  /** unix ms of the deploying block */
  time: number
  txId: string
  prepared: PreparedContract
}

/** Writes a prepared contract into state; a contract deployed at genesis becomes the well-known one of its ABI name. */
export function installContract (state: Pick<StateOverlay, 'get' | 'set'>, input: DeployInput): ContractRecord {
  if (state.get(ContractKeys.contract(input.id)) !== undefined) throw new KithError('TX_CONFLICT', `contract ${input.id} exists already`)
  const seq = Contracts.count(state) + 1
  const record: ContractRecord = {
    contract_id: input.id,
    name: input.name,
    version: input.version,
    deployer: input.deployer,
    deployed_at: Math.floor(input.time / 1000),
    deployed_height: input.height,
    deploy_tx: input.txId,
    code_hash: input.prepared.codeHash,
    code_size: input.prepared.code.length,
    methods: input.prepared.methods,
    call_base_gas: input.prepared.callBaseGas,
    seq
  }
  state.set(ContractKeys.contract(input.id), asState(record))
  if (state.get(ContractKeys.code(input.prepared.codeHash)) === undefined) {
    state.set(ContractKeys.code(input.prepared.codeHash), Buffer.from(input.prepared.code).toString('base64'))
  }
  state.set(ContractKeys.count, seq)
  state.set(ContractKeys.bySeq(seq), input.id)
  if (isWellKnown(record) && state.get(ContractKeys.wellKnown(input.name)) === undefined) {
    state.set(ContractKeys.wellKnown(input.name), input.id)
    state.set(ContractKeys.wellKnownNames, [...Contracts.wellKnownNames(state), input.name])
  }
  return record
}
