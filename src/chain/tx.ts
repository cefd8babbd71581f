/**
 * The transaction as submitted: its wire schema, canonical signing bytes, hash and payload
 * decoding. The schema here is the one the API validates with and documents in OpenAPI.
 */
import { z } from 'zod'
import { fromBase64, isBase64, sha256, sign, toBase64, verify } from '../crypto/index.js'
import { KithError } from '../errors/index.js'
import { base64String } from '../validation/index.js'

export const TX_TYPES = [
  'TRANSFER', 'CONTACT_REQUEST', 'ACCEPT_CONTACT', 'CONTACT_BLOCK', 'REGISTER_KEY', 'REGISTER_RELAY',
  'BIND_WALLET', 'RELAY_PROOF', 'BLOCK_REWARD', 'HEARTBEAT', 'CREATE_POST', 'DELETE_POST', 'LIKE_POST',
  'UNLIKE_POST', 'FOLLOW', 'UNFOLLOW', 'CALL_CONTRACT', 'DEPLOY_CONTRACT', 'STAKE', 'UNSTAKE',
  'LINK_DEVICE', 'UNLINK_DEVICE'
] as const
export type TxType = typeof TX_TYPES[number]

export const MAX_TX_ID_LENGTH = 128
export const MAX_MEMO_CHARS = 256
export const MAX_PAYLOAD_BASE64_CHARS = 256 * 1024
/** Largest µT value carried by any field: amounts stay exact as JavaScript numbers. */
export const MAX_AMOUNT = Number.MAX_SAFE_INTEGER

const TX_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/
const PUBKEY_RE = /^[0-9a-f]{64}$/
const TIMESTAMP_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/

export const PubkeySchema = z.string().regex(PUBKEY_RE, 'must be a 64-character lowercase hex Ed25519 public key')
export const X25519Schema = z.string().regex(PUBKEY_RE, 'must be a 64-character lowercase hex X25519 public key')
export const Base64Schema = base64String('must be standard padded base64')
const AmountSchema = z.number().int('must be an integer').min(0, 'must not be negative').max(MAX_AMOUNT, 'is too large')

export const TransactionSchema = z.object({
  id: z.string().min(1, 'must not be empty').max(MAX_TX_ID_LENGTH, `must be at most ${MAX_TX_ID_LENGTH} characters`)
    .regex(TX_ID_RE, 'may contain only letters, digits and . _ : -'),
  type: z.enum(TX_TYPES, { error: `must be one of ${TX_TYPES.join(', ')}` }),
  from: PubkeySchema,
  to: z.union([z.literal(''), PubkeySchema], { error: 'must be an empty string or a 64-character lowercase hex Ed25519 public key' }),
  amount: AmountSchema.meta({ description: 'µT' }),
  fee: AmountSchema.meta({ description: 'µT' }),
  memo: z.string().refine((s) => [...s].length <= MAX_MEMO_CHARS, `must be at most ${MAX_MEMO_CHARS} characters`).optional(),
  payload: Base64Schema.max(MAX_PAYLOAD_BASE64_CHARS, 'is too large').meta({ description: 'base64 of the type-specific JSON payload' }),
  signature: Base64Schema.refine(isCanonicalSignature, 'must be the base64 of a 64-byte Ed25519 signature')
    .meta({ description: 'base64 Ed25519 signature by `from` over the canonical bytes' }),
  timestamp: z.string().refine(isRfc3339Seconds, 'timestamp must be RFC 3339 UTC with second precision, like 2026-01-02T03:04:05Z')
}).meta({ id: 'Transaction', description: 'A signed transaction, as submitted' })

export type Transaction = z.output<typeof TransactionSchema>

/** Exactly 64 bytes, in the one base64 spelling that decodes to them (no stray padding bits). */
function isCanonicalSignature (text: string): boolean {
  if (text.length !== 88) return false
  const bytes = Buffer.from(text, 'base64')
  return bytes.length === 64 && bytes.toString('base64') === text
}

/** Days in each month of a common year; February gains one in leap years. */
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** A real UTC instant with second precision: the fields in range (no 24:00, no leap second), as the proleptic Gregorian calendar counts days. */
function isRfc3339Seconds (value: string): boolean {
  const m = TIMESTAMP_RE.exec(value)
  if (m === null) return false
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [number, number, number, number, number, number]
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return false
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  return day <= (MONTH_DAYS[month - 1] as number) + (leap ? 1 : 0)
}

const TX_TYPE_SET: ReadonlySet<string> = new Set(TX_TYPES)

/**
 * The transaction in `raw` when it is one TransactionSchema accepts, checked without zod;
 * undefined for anything else, which the schema then checks and names the fault of. Every
 * transaction this accepts, the schema accepts with the same result, members in the same order
 * (test/unit/chain/validation.test.ts checks agreement on generated inputs). Why: it is the hot path of
 * every submission and gossiped transaction, and the schema's checks cost several times as much.
 */
export function plainTransaction (raw: unknown): Transaction | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined
  const { id, type, from, to, amount, fee, memo, payload, signature, timestamp } = raw as Record<string, unknown>
  if (typeof id !== 'string' || id.length > MAX_TX_ID_LENGTH || !TX_ID_RE.test(id)) return undefined
  if (typeof type !== 'string' || !TX_TYPE_SET.has(type)) return undefined
  if (typeof from !== 'string' || !PUBKEY_RE.test(from)) return undefined
  if (typeof to !== 'string' || (to !== '' && !PUBKEY_RE.test(to))) return undefined
  if (!isAmount(amount) || !isAmount(fee)) return undefined
  if (memo !== undefined && (typeof memo !== 'string' || (memo.length > MAX_MEMO_CHARS && [...memo].length > MAX_MEMO_CHARS))) return undefined
  if (memo === undefined && Object.hasOwn(raw, 'memo')) return undefined
  if (typeof payload !== 'string' || payload.length > MAX_PAYLOAD_BASE64_CHARS || !isBase64(payload)) return undefined
  if (typeof signature !== 'string' || !isCanonicalSignature(signature)) return undefined
  if (typeof timestamp !== 'string' || !isRfc3339Seconds(timestamp)) return undefined
  const tx = { id, type: type as TxType, from, to, amount, fee } as Transaction
  if (memo !== undefined) tx.memo = memo
  tx.payload = payload
  tx.signature = signature
  tx.timestamp = timestamp
  return tx
}

function isAmount (value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}

export function timestampMs (tx: Pick<Transaction, 'timestamp'>): number {
  return Date.parse(tx.timestamp)
}

/** RFC 3339, second precision, UTC: the form transactions carry. */
export function formatTimestamp (ms: number): string {
  return new Date(ms).toISOString().slice(0, 19) + 'Z'
}

/**
 * Canonical signing bytes: UTF-8 of JSON.stringify of exactly these members in this order.
 * Memo and signature are not signed (spec, "Transaction").
 */
export function signingBytes (tx: Omit<Transaction, 'signature' | 'memo'>): Buffer {
  return Buffer.from(JSON.stringify({
    id: tx.id,
    type: tx.type,
    from: tx.from,
    to: tx.to,
    amount: tx.amount,
    fee: tx.fee,
    payload: tx.payload,
    timestamp: tx.timestamp
  }), 'utf8')
}

/**
 * Every member of the transaction, memo and signature included, as one JSON array: hashed for
 * the tx root, and measured for the block size bound.
 */
export function wholeTx (tx: Transaction): Buffer {
  return Buffer.from(JSON.stringify([
    tx.id, tx.type, tx.from, tx.to, tx.amount, tx.fee, tx.memo ?? '', tx.payload, tx.signature, tx.timestamp
  ]), 'utf8')
}

/** Hash of the whole transaction, memo and signature included: the leaf of a block's tx root. */
export function txHash (tx: Transaction): Buffer {
  return sha256(wholeTx(tx))
}

/** A transaction's size as the block bounds count it: the bytes of its whole-transaction JSON array. */
export function txSize (tx: Transaction): number {
  return wholeTx(tx).length
}

/** Whether `b` is `a` member for member (ids aside): a retry of the same transaction, not a reuse of its id. */
export function sameTx (a: Transaction, b: Transaction): boolean {
  return a.signature === b.signature && a.memo === b.memo && a.payload === b.payload && a.timestamp === b.timestamp &&
    a.from === b.from && a.to === b.to && a.amount === b.amount && a.fee === b.fee && a.type === b.type
}

export function verifyTxSignature (tx: Transaction): boolean {
  const signature = fromBase64(tx.signature)
  if (signature === undefined) return false
  return verify(signingBytes(tx), signature, Buffer.from(tx.from, 'hex'))
}

/** Verifies an Ed25519 signature: `verify` or a pool's, which runs it off the calling thread. */
export type SignatureVerifier = (message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array) => Promise<boolean>

/** verifyTxSignature, by `verifier` (a VerifyPool's): the event loop goes on while it runs. */
export async function verifyTxSignatureBy (verifier: SignatureVerifier, tx: Transaction): Promise<boolean> {
  const signature = fromBase64(tx.signature)
  return signature !== undefined && await verifier(signingBytes(tx), signature, Buffer.from(tx.from, 'hex'))
}

export function signTx (unsigned: Omit<Transaction, 'signature'>, secretKey: Uint8Array): Transaction {
  return { ...unsigned, signature: toBase64(sign(signingBytes(unsigned), secretKey)) }
}

export function encodePayload (payload: unknown): string {
  return Buffer.from(JSON.stringify(payload ?? {}), 'utf8').toString('base64')
}

/** The payload's JSON value; throws TX_MALFORMED when it is not base64 of a JSON object. */
export function decodePayload (tx: Pick<Transaction, 'payload'>): Record<string, unknown> {
  const bytes = fromBase64(tx.payload)
  if (bytes === undefined) throw new KithError('TX_MALFORMED', 'payload: must be standard padded base64')
  if (bytes.length === 0) return {}
  let value: unknown
  try {
    value = JSON.parse(bytes.toString('utf8'))
  } catch {
    throw new KithError('TX_MALFORMED', 'payload: must be base64 of a JSON object')
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new KithError('TX_MALFORMED', 'payload: must be base64 of a JSON object')
  }
  return value as Record<string, unknown>
}
