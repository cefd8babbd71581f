/**
 * The mailbox store's stored value: the exact inbox item the node serves, so an inbox page is a
 * concatenation of stored bytes (no decode, no re-encode), then the fee_sig that is stored and
 * gossiped but never served. Apart from store.ts so that its writers (a put, the format-1
 * migration) and its readers (inbox pages, get) share one definition of the bytes.
 */
import { isoSeconds, type Envelope, type InboxItem } from './envelope.js'

const NEWLINE = 0x0a

/**
 * The stored value as text. The item is JSON.stringify(presentInboxItem(env)) written out by
 * hand (the store's tests compare them): every member of a validated envelope is hex, base64, an
 * ISO time or an integer, so nothing needs escaping and the text is ASCII (stored as latin1,
 * byte for byte).
 */
export function valueText (env: Envelope): string {
  const item = `{"id":"${env.id}","sender_pub":"${env.sender_pub}","sender_ed25519_pub":"${env.sender_ed25519_pub}",` +
    `"recipient_pub":"${env.recipient_pub}","fee_ut":${env.fee_ut},"sent_at":${env.sent_at},"sent_at_human":"${isoSeconds(env.sent_at)}",` +
    `"nonce":"${env.nonce}","ciphertext":"${env.ciphertext}"}`
  return env.fee_sig === null ? item : `${item}\n${env.fee_sig}`
}

/** The served inbox item's bytes of a stored value (without the fee_sig). */
export function itemBytes (value: Buffer): Buffer {
  const end = value.indexOf(NEWLINE)
  return end < 0 ? value : value.subarray(0, end)
}

export function envelopeOf (item: InboxItem, feeSig: string | null = null): Envelope {
  return {
    id: item.id,
    sender_pub: item.sender_pub,
    recipient_pub: item.recipient_pub,
    sender_ed25519_pub: item.sender_ed25519_pub,
    fee_ut: item.fee_ut,
    fee_sig: feeSig,
    nonce: item.nonce,
    ciphertext: item.ciphertext,
    sent_at: item.sent_at
  }
}

export function decodeValue (value: Buffer): Envelope {
  const item = itemBytes(value)
  return envelopeOf(JSON.parse(item.toString('utf8')) as InboxItem, item.length < value.length ? value.subarray(item.length + 1).toString('utf8') : null)
}
