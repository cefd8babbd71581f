/**
 * Envelope rules: the uploaded shape (spec "Relay envelope"), the stricter shape peers gossip,
 * the canonical id, size caps, the inbox item shape, and the texts that mailbox owners sign.
 */
import { z } from 'zod'
import { fromBase64, fromCanonicalBase64, sha256, toBase64, verify } from '../crypto/index.js'
import { KithError } from '../errors/index.js'
import { base64String, parseOrThrow } from '../validation/index.js'

/** Largest ciphertext (decoded bytes) an envelope may carry; larger is 413. */
export const MAX_CIPHERTEXT_BYTES = 64 * 1024
/** NaCl box nonce. */
export const NONCE_BYTES = 24
/** NaCl box authenticator: a box ciphertext is the message plus this many bytes. */
export const BOX_MAC_BYTES = 16
/** Largest plaintext POST /relay/send seals: its box must fit MAX_CIPHERTEXT_BYTES. */
export const MAX_SEND_PLAINTEXT_BYTES = MAX_CIPHERTEXT_BYTES - BOX_MAC_BYTES
/** Signed mailbox requests (delete, read) carry `ts` within this of the node clock. */
export const SIGNED_TS_TOLERANCE_MS = 5 * 60_000
/** An envelope from a peer may be dated at most this far ahead of the node clock. */
export const PEER_FUTURE_TOLERANCE_MS = 5 * 60_000

const HEX64 = /^[0-9a-fA-F]{64}$/
const LOWER_HEX64 = /^[0-9a-f]{64}$/
const CANONICAL_ID = /^[0-9a-f]{32}$/

/** An envelope as stored, served (minus fee_sig) and gossiped: canonical id, server time. */
export interface Envelope {
  /** lowercase hex of the first 16 bytes of sha256(nonce bytes ‖ ciphertext bytes) */
  id: string
  /** X25519, lowercase hex */
  sender_pub: string
  /** X25519, lowercase hex: the mailbox */
  recipient_pub: string
  /** Ed25519, lowercase hex, or '' */
  sender_ed25519_pub: string
  fee_ut: number
  fee_sig: string | null
  /** standard base64 of 24 bytes */
  nonce: string
  /** standard base64 */
  ciphertext: string
  /** unix s */
  sent_at: number
}

/** Element of `items` in GET /relay/inbox (spec "Inbox item"). */
export interface InboxItem {
  id: string
  sender_pub: string
  sender_ed25519_pub: string
  recipient_pub: string
  fee_ut: number
  sent_at: number
  sent_at_human: string
  nonce: string
  ciphertext: string
}

/** A mailbox owner's signed delete, kept as a tombstone and gossiped so peers delete too. */
export interface DeleteProof {
  id: string
  recipient_pub: string
  /** sent_at of the deleted envelope, so a peer that never held it can expire the tombstone */
  sent_at: number
  ed25519_pub: string
  sig: string
  ts: number
  /** the exact text the signature covers (the client may have written ids or keys in upper case) */
  text: string
}

const x25519 = (what: string): z.ZodType<string> =>
  z.string().regex(HEX64, `must be a 64-character hex ${what}`).transform((s) => s.toLowerCase())

export const Base64TextSchema = base64String('must be standard base64 with padding')

export const X25519PubSchema = x25519('X25519 public key')
export const Ed25519PubSchema = z.string().regex(HEX64, 'must be a 64-character hex Ed25519 public key').transform((s) => s.toLowerCase())

/** The envelope a client uploads to POST /relay/broadcast (spec "Relay envelope"). */
export const EnvelopeUploadSchema = z.object({
  id: z.string().min(1, 'must not be empty').optional().meta({ description: 'any non-empty value; the node replaces it with the canonical id' }),
  sender_pub: X25519PubSchema.meta({ description: 'sender X25519 pubkey (the sending device), hex' }),
  recipient_pub: X25519PubSchema.meta({ description: 'recipient X25519 pubkey (the mailbox), hex' }),
  sender_ed25519_pub: z.union([z.literal(''), Ed25519PubSchema]).default('')
    .meta({ description: 'sender master Ed25519 pubkey, hex; empty string when none' }),
  fee_ut: z.number().int('must be an integer').min(0, 'must not be negative').max(Number.MAX_SAFE_INTEGER).default(0)
    .meta({ description: 'µT; 0 in the end-to-end path (docs/relay.md)' }),
  fee_sig: Base64TextSchema.nullable().default(null).meta({ description: 'base64 or null; null in the end-to-end path' }),
  nonce: Base64TextSchema.refine((s) => fromBase64(s)?.length === NONCE_BYTES, `must be the base64 of exactly ${NONCE_BYTES} bytes`)
    .meta({ description: 'base64 of the 24-byte NaCl box nonce' }),
  ciphertext: Base64TextSchema.min(1, 'must not be empty')
    .meta({ description: `base64 of the NaCl box ciphertext, at most ${MAX_CIPHERTEXT_BYTES} bytes decoded` }),
  sent_at: z.number().optional().meta({ description: 'unix s; replaced by the node clock' })
}).meta({ id: 'RelayEnvelope' })

/** What peers gossip and anti-entropy carries: already canonical. */
export const PeerEnvelopeSchema = z.object({
  id: z.string().regex(CANONICAL_ID, 'must be a canonical envelope id (32 lowercase hex characters)'),
  sender_pub: z.string().regex(LOWER_HEX64, 'must be 64 lowercase hex characters'),
  recipient_pub: z.string().regex(LOWER_HEX64, 'must be 64 lowercase hex characters'),
  sender_ed25519_pub: z.union([z.literal(''), z.string().regex(LOWER_HEX64, 'must be 64 lowercase hex characters or empty')]),
  fee_ut: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  fee_sig: Base64TextSchema.nullable(),
  nonce: Base64TextSchema.refine((s) => fromBase64(s)?.length === NONCE_BYTES, `must be the base64 of exactly ${NONCE_BYTES} bytes`),
  ciphertext: Base64TextSchema.min(1, 'must not be empty'),
  sent_at: z.number().int().min(0)
})

export const DeleteProofSchema = z.object({
  id: z.string().regex(CANONICAL_ID),
  recipient_pub: z.string().regex(LOWER_HEX64),
  sent_at: z.number().int().min(0),
  ed25519_pub: z.string().regex(LOWER_HEX64),
  sig: Base64TextSchema,
  ts: z.number().int(),
  text: z.string().max(256)
})

const unixSeconds = z.union([
  z.number().int('must be an integer (unix s)'),
  z.string().regex(/^-?\d{1,15}$/, 'must be an integer (unix s)').transform(Number)
])

/** {ed25519_pub, sig, ts}: the owner's signature on a delete or a read. */
export const OwnerProofSchema = z.object({
  ed25519_pub: Ed25519PubSchema.meta({ description: 'Ed25519 pubkey linked to the mailbox through the identity registry' }),
  sig: Base64TextSchema.refine((s) => fromBase64(s)?.length === 64, 'must be the base64 of a 64-byte Ed25519 signature'),
  ts: unixSeconds.meta({ description: 'unix s, within ±5 minutes of the node clock' })
}).meta({ id: 'RelayOwnerProof' })
export type OwnerProof = z.output<typeof OwnerProofSchema>

export const InboxItemSchema = z.object({
  id: z.string().meta({ description: 'canonical id' }),
  sender_pub: z.string().meta({ description: 'sender X25519 pubkey (the sending device)' }),
  sender_ed25519_pub: z.string().meta({ description: 'sender master Ed25519 pubkey; empty string when none' }),
  recipient_pub: z.string(),
  fee_ut: z.number().int(),
  sent_at: z.number().int().meta({ description: 'unix s, assigned by the node that first accepted it' }),
  sent_at_human: z.string().meta({ description: 'ISO 8601 UTC' }),
  nonce: z.string().meta({ description: 'base64' }),
  ciphertext: z.string().meta({ description: 'base64' })
}).meta({ id: 'InboxItem' })

/** Lowercase hex of the first 16 bytes of sha256(nonce ‖ ciphertext). */
export function canonicalId (nonce: Uint8Array, ciphertext: Uint8Array): string {
  return sha256(nonce, ciphertext).subarray(0, 16).toString('hex')
}

/** Decoded size of a padded base64 string, without decoding it. */
export function base64DecodedLength (text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0
  return Math.floor(text.length / 4) * 3 - padding
}

function checkCiphertextSize (raw: unknown): void {
  if (typeof raw !== 'object' || raw === null) return
  const ciphertext = (raw as { ciphertext?: unknown }).ciphertext
  if (typeof ciphertext !== 'string') return
  const size = base64DecodedLength(ciphertext)
  if (size > MAX_CIPHERTEXT_BYTES) {
    throw new KithError('BODY_TOO_LARGE', `envelope ciphertext of ${size} bytes exceeds the limit of ${MAX_CIPHERTEXT_BYTES} bytes`)
  }
}

/**
 * The envelope of an upload already in the form the node stores (lowercase hex keys, canonical
 * base64, defaults omitted or given as such), checked without zod; undefined for anything else,
 * which EnvelopeUploadSchema then accepts with normalisation or rejects naming the field. Every
 * upload this accepts, the schema accepts with the same result (test/unit/relay/envelope.test.ts
 * checks agreement on generated inputs). Why: this is the hot path of POST /relay/broadcast, and
 * the schema's regexes and copies cost several times as much.
 */
export function plainUpload (raw: unknown, sentAt: number): Envelope | undefined {
  const parts = plainParts(raw)
  return parts === undefined ? undefined : canonicalEnvelope(parts.fields, parts.nonceBytes, parts.ciphertextBytes, sentAt, parts.nonce, parts.ciphertext)
}

/**
 * The upload as EnvelopeUploadSchema gives it, for an upload plainUpload accepts; undefined for
 * anything else, which the schema then accepts with normalisation or rejects naming the field.
 * The hand check of POST /relay/broadcast's body (the route's plainBody); the agreement test is
 * beside plainUpload's.
 */
export function plainEnvelopeUpload (raw: unknown): z.output<typeof EnvelopeUploadSchema> | undefined {
  const parts = plainParts(raw)
  if (parts === undefined) return undefined
  const { id, sent_at: sentAt } = raw as { id?: string, sent_at?: number }
  return {
    ...(id !== undefined ? { id } : {}),
    ...parts.fields,
    nonce: parts.nonce,
    ciphertext: parts.ciphertext,
    ...(sentAt !== undefined ? { sent_at: sentAt } : {})
  }
}

/** An upload's parts when it is already in stored form (plainUpload); undefined otherwise. */
function plainParts (raw: unknown): { fields: PlainFields, nonceBytes: Buffer, ciphertextBytes: Buffer, nonce: string, ciphertext: string } | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined
  const r = raw as Record<string, unknown>
  const { id, sender_pub: sender, recipient_pub: recipient, sender_ed25519_pub: senderEd = '', fee_ut: fee = 0, fee_sig: feeSig = null, nonce, ciphertext, sent_at: at } = r
  if (id !== undefined && (typeof id !== 'string' || id.length === 0)) return undefined
  if (at !== undefined && typeof at !== 'number') return undefined
  if (typeof sender !== 'string' || !LOWER_HEX64.test(sender) || typeof recipient !== 'string' || !LOWER_HEX64.test(recipient)) return undefined
  if (senderEd !== '' && (typeof senderEd !== 'string' || !LOWER_HEX64.test(senderEd))) return undefined
  if (typeof fee !== 'number' || !Number.isSafeInteger(fee) || fee < 0) return undefined
  if (feeSig !== null && (typeof feeSig !== 'string' || fromCanonicalBase64(feeSig) === undefined)) return undefined
  if (typeof nonce !== 'string' || typeof ciphertext !== 'string' || ciphertext.length === 0) return undefined
  const nonceBytes = fromCanonicalBase64(nonce)
  const ciphertextBytes = fromCanonicalBase64(ciphertext)
  if (nonceBytes?.length !== NONCE_BYTES || ciphertextBytes === undefined) return undefined
  const fields = { sender_pub: sender, recipient_pub: recipient, sender_ed25519_pub: senderEd as string, fee_ut: fee, fee_sig: feeSig as string | null }
  return { fields, nonceBytes, ciphertextBytes, nonce, ciphertext }
}

/** The members of an envelope the client chooses, besides its nonce and ciphertext. */
type PlainFields = Pick<Envelope, 'sender_pub' | 'recipient_pub' | 'sender_ed25519_pub' | 'fee_ut' | 'fee_sig'>

/** The stored envelope: canonical id from the bytes, the node's sent_at; the base64 texts given when already canonical. */
function canonicalEnvelope (
  fields: PlainFields,
  nonce: Buffer, ciphertext: Buffer, sentAt: number,
  nonceText = toBase64(nonce), ciphertextText = toBase64(ciphertext)
): Envelope {
  return {
    id: canonicalId(nonce, ciphertext),
    sender_pub: fields.sender_pub,
    recipient_pub: fields.recipient_pub,
    sender_ed25519_pub: fields.sender_ed25519_pub,
    fee_ut: fields.fee_ut,
    fee_sig: fields.fee_sig,
    nonce: nonceText,
    ciphertext: ciphertextText,
    sent_at: sentAt
  }
}

/**
 * Validates an uploaded envelope and gives it its canonical id and the server time. Throws
 * BODY_TOO_LARGE (413) for an oversized ciphertext, BAD_REQUEST (400) naming the field otherwise.
 */
export function envelopeFromUpload (raw: unknown, sentAt: number): Envelope {
  checkCiphertextSize(raw)
  return plainUpload(raw, sentAt) ?? uploadBySchema(raw, sentAt)
}

/** envelopeFromUpload through EnvelopeUploadSchema alone (what plainUpload must agree with). */
export function uploadBySchema (raw: unknown, sentAt: number): Envelope {
  const input = parseOrThrow(EnvelopeUploadSchema, raw, 'BAD_REQUEST', 'envelope')
  // re-encoded, so every node stores and serves the same text for the same bytes
  return canonicalEnvelope(input, fromBase64(input.nonce) as Buffer, fromBase64(input.ciphertext) as Buffer, sentAt)
}

export type PeerEnvelopeCheck = { ok: true, envelope: Envelope } | { ok: false, reason: string }

/** Checks an envelope from a peer: its shape, its size and that its id is the canonical one. */
export function checkPeerEnvelope (raw: unknown): PeerEnvelopeCheck {
  try {
    checkCiphertextSize(raw)
    const input = parseOrThrow(PeerEnvelopeSchema, raw, 'BAD_REQUEST', 'envelope')
    const nonce = fromBase64(input.nonce) as Buffer
    const ciphertext = fromBase64(input.ciphertext) as Buffer
    const id = canonicalId(nonce, ciphertext)
    if (id !== input.id) return { ok: false, reason: `envelope id ${input.id} is not the canonical id ${id} of its nonce and ciphertext` }
    return { ok: true, envelope: { ...input, nonce: toBase64(nonce), ciphertext: toBase64(ciphertext) } }
  } catch (err) {
    if (err instanceof KithError) return { ok: false, reason: err.message }
    throw err
  }
}

let lastIso = { at: NaN, text: '' }

/** ISO 8601 UTC to the second; the last answer is kept, since envelopes arrive many per second. */
export function isoSeconds (unixS: number): string {
  if (unixS !== lastIso.at) lastIso = { at: unixS, text: new Date(unixS * 1000).toISOString().replace('.000Z', 'Z') }
  return lastIso.text
}

export function presentInboxItem (env: Envelope): InboxItem {
  return {
    id: env.id,
    sender_pub: env.sender_pub,
    sender_ed25519_pub: env.sender_ed25519_pub,
    recipient_pub: env.recipient_pub,
    fee_ut: env.fee_ut,
    sent_at: env.sent_at,
    sent_at_human: isoSeconds(env.sent_at),
    nonce: env.nonce,
    ciphertext: env.ciphertext
  }
}

/** The text an owner signs to delete envelope `envId` from mailbox `x25519Pub` (spec, Relay rule 3). */
export function deleteText (envId: string, x25519Pub: string, ts: number): string {
  return `inbox-delete:${envId}:${x25519Pub}:${ts}`
}

/**
 * The first of `texts` that `sig` (base64) by `ed25519Pub` (hex) verifies, or undefined.
 * Callers pass the text as the client wrote it and its lowercase form.
 */
export function verifiedText (texts: readonly string[], sig: string, ed25519Pub: string): string | undefined {
  const signature = fromBase64(sig)
  if (signature === undefined) return undefined
  const pub = Buffer.from(ed25519Pub, 'hex')
  for (const text of new Set(texts)) {
    if (verify(Buffer.from(text, 'utf8'), signature, pub)) return text
  }
  return undefined
}
