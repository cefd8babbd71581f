/**
 * The byte layout of the mailbox store's keys (store.ts has the tables they key), and the
 * builders that write them. Apart so that every part of the store (the facade, the rebuild at
 * open, the merge, the sweep, the anti-entropy lists) builds and reads keys one way:
 *   log, journal record  sent_at(6) ‖ id(16) ‖ recipient(32) ‖ sender(32)
 *   mailbox table        recipient(32) ‖ sent_at(6) ‖ id(16) ‖ sender(32)
 *   tombstones           sent_at(6) ‖ id(16)   (the log's first 22 bytes)
 * sent_at first makes the log, the journal and the tombstones their own expiry index.
 */
import { IN_JOURNAL, IN_LOG, IN_TABLE, type MailboxEntries, type Place } from './mailbox-index.js'

export const AT_BYTES = 6
export const ID_END = AT_BYTES + 16
export const RECIPIENT_END = ID_END + 32
export const KEY_BYTES = RECIPIENT_END + 32

/** Where a key holds each field, and where an envelope indexed by such a key is read from. */
export interface KeyLayout { at: number, id: number, recipient: number, sender: number, place: Place }
export const LOG: KeyLayout = { at: 0, id: AT_BYTES, recipient: ID_END, sender: RECIPIENT_END, place: IN_LOG }
/** a journal record's key: the log's layout */
export const JOURNALED: KeyLayout = { ...LOG, place: IN_JOURNAL }
export const MERGED: KeyLayout = { at: 32, id: 32 + AT_BYTES, recipient: 0, sender: 32 + ID_END, place: IN_TABLE }

/** An envelope's keys in the log and in a mailbox table, and its journal segment (-1 when it is not in the journal). */
export interface EnvelopeKeys { log: Buffer, merged: Buffer, segment: number }

export const CANONICAL_ID = /^[0-9a-f]{32}$/

export function atPrefix (sentAt: number): Buffer {
  const key = Buffer.allocUnsafe(AT_BYTES)
  key.writeUIntBE(sentAt, 0, AT_BYTES)
  return key
}

export function tombstoneKey (sentAt: number, id: string): Buffer {
  const key = Buffer.allocUnsafe(ID_END)
  key.writeUIntBE(sentAt, 0, AT_BYTES)
  key.write(id, AT_BYTES, 'hex')
  return key
}

export function envelopeKey (sentAt: number, id: string, recipient: string, sender: string, into: Buffer = Buffer.allocUnsafe(KEY_BYTES)): Buffer {
  into.writeUIntBE(sentAt, 0, AT_BYTES)
  into.write(id, AT_BYTES, 'hex')
  into.write(recipient, ID_END, 'hex')
  into.write(sender, RECIPIENT_END, 'hex')
  return into
}

/** The key of entry i of a mailbox in `layout`, written into `into` (a fresh buffer unless given). */
export function keyAt (box: MailboxEntries, i: number, into: Buffer = Buffer.allocUnsafe(KEY_BYTES), layout: KeyLayout = LOG): Buffer {
  into.writeUIntBE(box.sentAt(i), layout.at, AT_BYTES)
  box.copyId(i, into, layout.id)
  box.recipient.copy(into, layout.recipient)
  box.copySender(i, into, layout.sender)
  return into
}

export function mergedKeyAt (box: MailboxEntries, i: number, into: Buffer = Buffer.allocUnsafe(KEY_BYTES)): Buffer {
  return keyAt(box, i, into, MERGED)
}
