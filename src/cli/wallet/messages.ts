/**
 * End-to-end messages as the CLI sends and reads them: one NaCl box per recipient mailbox key
 * (every linked device, else the identity's x25519_pub; docs/relay.md), and inbox items opened
 * and grouped by conversation (sender_ed25519_pub when present, else sender_pub).
 */
import { ApiError, type Account, type InboxItem, type KithClient } from '../../client/index.js'
import { fromBase64, toBase64, toHex } from '../../crypto/index.js'
import { boxOpen, boxSeal, randomNonce, type SealKey } from '../../relay/index.js'
import { CliError } from './errors.js'

const INBOX_PAGE = 500

/** The mailbox keys a message to `masterPub` goes to. */
export async function mailboxKeysOf (client: KithClient, masterPub: string): Promise<string[]> {
  const { devices } = await client.devices(masterPub)
  if (devices.length > 0) return devices.map((d) => d.x25519_pub)
  try {
    const identity = await client.identity(masterPub)
    if (identity.x25519_pub !== '') return [identity.x25519_pub]
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 404)) throw err
  }
  throw new CliError('NO_MAILBOX', `${masterPub} has published no mailbox key; they must first run \`kith username register <name>\` (a REGISTER_KEY transaction)`)
}

export function sealFor (recipientX25519: string, text: string, sender: SealKey, senderEd25519: string): Record<string, unknown> {
  const nonce = randomNonce()
  const ciphertext = boxSeal(Buffer.from(text, 'utf8'), nonce, Buffer.from(recipientX25519, 'hex'), sender.secretKey)
  return {
    sender_pub: toHex(sender.publicKey),
    recipient_pub: recipientX25519,
    sender_ed25519_pub: senderEd25519,
    fee_ut: 0,
    fee_sig: null,
    nonce: toBase64(nonce),
    ciphertext: toBase64(ciphertext)
  }
}

export interface OpenedMessage {
  id: string
  sent_at: number
  sent_at_human: string
  sender_pub: string
  /** undefined when the box does not open with this key */
  text?: string
}

export interface Conversation {
  /** sender_ed25519_pub, or sender_pub when the sender gave none */
  peer: string
  peer_is_ed25519: boolean
  messages: OpenedMessage[]
}

/** Every envelope of `mailbox`, the reads signed by `reader` (the identity it belongs to). */
export async function readInbox (client: KithClient, mailbox: SealKey, reader: Account): Promise<InboxItem[]> {
  const pub = toHex(mailbox.publicKey)
  const items: InboxItem[] = []
  let page = await client.inbox(pub, { limit: INBOX_PAGE, reader })
  items.push(...page.items)
  while (page.has_more && page.items.length > 0) {
    const last = page.items[page.items.length - 1]
    page = await client.inbox(pub, { since: last.sent_at, after: last.id, limit: INBOX_PAGE, reader })
    items.push(...page.items)
  }
  return items
}

export function openItems (items: InboxItem[], mailbox: SealKey): Conversation[] {
  const byPeer = new Map<string, Conversation>()
  for (const item of items) {
    const peer = item.sender_ed25519_pub !== '' ? item.sender_ed25519_pub : item.sender_pub
    let conversation = byPeer.get(peer)
    if (conversation === undefined) {
      conversation = { peer, peer_is_ed25519: item.sender_ed25519_pub !== '', messages: [] }
      byPeer.set(peer, conversation)
    }
    const nonce = fromBase64(item.nonce)
    const ciphertext = fromBase64(item.ciphertext)
    const opened = nonce !== undefined && ciphertext !== undefined
      ? boxOpen(ciphertext, nonce, Buffer.from(item.sender_pub, 'hex'), mailbox.secretKey)
      : undefined
    conversation.messages.push({
      id: item.id,
      sent_at: item.sent_at,
      sent_at_human: item.sent_at_human,
      sender_pub: item.sender_pub,
      ...(opened !== undefined ? { text: opened.toString('utf8') } : {})
    })
  }
  return [...byPeer.values()]
}
