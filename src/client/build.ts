/**
 * Accounts and signed transactions: keys, ids, and building any transaction type. Depends only
 * on the chain's wire format.
 */
import { generateKeyPair, keyPairFromSeed, toHex, type KeyPair } from '../crypto/index.js'
import { encodePayload, formatTimestamp, signTx, type Transaction, type TxType } from '../chain/tx.js'
import { addressOf } from '../chain/address.js'
import { DEFAULT_GAS_LIMIT, DEPLOY_BYTE_FEE, MIN_FEE } from '../chain/limits.js'

export { addressOf, generateKeyPair, keyPairFromSeed, type KeyPair, type Transaction, type TxType }

export interface Account {
  keyPair: KeyPair
  /** Ed25519 public key, lowercase hex */
  pub: string
  address: string
}

export function accountFrom (keyPair: KeyPair = generateKeyPair()): Account {
  const pub = toHex(keyPair.publicKey)
  return { keyPair, pub, address: addressOf(pub) }
}

export function newAccount (): Account {
  return accountFrom(generateKeyPair())
}

let idCounter = 0

/** A fresh id in the clients' `tx-<digits>` form, unique within this process and across runs. */
export function newTxId (): string {
  idCounter += 1
  return `tx-${Date.now()}${String(process.pid).padStart(7, '0')}${String(idCounter).padStart(9, '0')}`
}

export interface BuildOptions {
  type: TxType
  to?: string
  amount?: number
  fee?: number
  payload?: unknown
  memo?: string
  id?: string
  /** unix ms; defaults to now */
  time?: number
}

/** Builds and signs a transaction of any type. */
export function buildTx (from: Account, opts: BuildOptions): Transaction {
  const unsigned: Omit<Transaction, 'signature'> = {
    id: opts.id ?? newTxId(),
    type: opts.type,
    from: from.pub,
    to: opts.to ?? '',
    amount: opts.amount ?? 0,
    fee: opts.fee ?? MIN_FEE,
    payload: encodePayload(opts.payload ?? {}),
    timestamp: formatTimestamp(opts.time ?? Date.now())
  }
  if (opts.memo !== undefined) unsigned.memo = opts.memo
  return signTx(unsigned, from.keyPair.secretKey)
}

export function transfer (from: Account, to: string, amount: number, opts: { fee?: number, memo?: string, id?: string, time?: number } = {}): Transaction {
  return buildTx(from, {
    type: 'TRANSFER', to, amount, fee: opts.fee, id: opts.id, time: opts.time, memo: opts.memo,
    payload: opts.memo === undefined ? {} : { memo: opts.memo }
  })
}

/** CALL_CONTRACT: `args` become args_json (a JSON array; '' when there are none). */
export function callContract (from: Account, contractId: string, method: string, args: unknown[] = [], opts: { amount?: number, fee?: number, gasLimit?: number, id?: string, time?: number } = {}): Transaction {
  return buildTx(from, {
    type: 'CALL_CONTRACT', amount: opts.amount ?? 0, fee: opts.fee, id: opts.id, time: opts.time,
    payload: { contract_id: contractId, method, args_json: args.length === 0 ? '' : JSON.stringify(args), gas_limit: opts.gasLimit ?? DEFAULT_GAS_LIMIT }
  })
}

/** DEPLOY_CONTRACT of a wasm module under an ABI name, at the least fee for its size unless told. */
export function deployContract (from: Account, wasm: Uint8Array, name: string, opts: { version?: string, fee?: number, id?: string, time?: number } = {}): Transaction {
  return buildTx(from, {
    type: 'DEPLOY_CONTRACT', fee: opts.fee ?? MIN_FEE + wasm.length * DEPLOY_BYTE_FEE, id: opts.id, time: opts.time,
    payload: { name, version: opts.version ?? '', code_b64: Buffer.from(wasm).toString('base64') }
  })
}
