/**
 * Accounts and signed transactions of any type: the builders the client library, the relay's fee
 * collector and tests share (the client re-exports them). Only the wire format of tx.ts.
 */
import { generateKeyPair, toHex, type KeyPair } from '../crypto/index.js'
import { addressOf } from './address.js'
import { MIN_FEE } from './limits.js'
import { encodePayload, formatTimestamp, signTx, type Transaction, type TxType } from './tx.js'

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
