/**
 * Texts that both sides of the wire must compute byte for byte, with no dependencies, so that a
 * client imports them without loading the node. Today: the wire form of a signed inbox read
 * (docs/relay.md "Signed reads"), shared by the client that signs one and the relay that checks
 * it: the text an owner signs and the header that carries it. The nonces and the check itself
 * are the relay's (src/relay/read-auth.ts).
 */

/** The request header that carries a signed read. */
export const INBOX_AUTH_HEADER = 'Kith-Inbox-Auth'

/** The endpoints a signed read may prove, as they appear in the signed text. */
export type InboxReadEndpoint = 'GET /relay/inbox' | 'GET /relay/inbox/count'

/** The text an owner signs for one read (`node`: the node's id from the nonce answer). */
export function inboxReadText (node: string, endpoint: InboxReadEndpoint, x25519Pub: string, nonce: string): string {
  return `inbox-read:${node}:${endpoint}:${x25519Pub}:${nonce}`
}

/** The header's value for a signed read. */
export function inboxAuthHeader (ed25519Pub: string, nonce: string, sig: string): string {
  return `ed25519_pub=${ed25519Pub}, nonce=${nonce}, sig=${sig}`
}
