/**
 * CONTACT_REQUEST, ACCEPT_CONTACT, CONTACT_BLOCK. A request pays the recipient an anti-spam fee
 * and is `pending`; the recipient accepts it or blocks the requester (from any state); a
 * repeat while pending or accepted, or any request after a block, is refused (decisions.md).
 */
import { z } from 'zod'
import { KithError } from '../../errors/index.js'
import { credit, debit } from '../ledger.js'
import { MIN_CONTACT_FEE_UT, MAX_INTRO_CHARS, MIN_FEE } from '../limits.js'
import { Registry, asState, unixSeconds, type ContactRecord } from '../registry.js'
import { StateKeys, type StateOverlay } from '../state.js'
import type { Transaction } from '../tx.js'
import { defineRule } from './types.js'

function needsCounterparty (tx: Transaction): void {
  if (tx.to === '') throw new KithError('TX_BAD_FIELD', `${tx.type} needs the other party's pubkey in \`to\``)
  if (tx.to === tx.from) throw new KithError('TX_BAD_FIELD', `${tx.type} cannot name the sender as the other party`)
}

function setContacts (state: StateOverlay, recipient: string, contacts: ContactRecord[]): void {
  state.set(StateKeys.contacts(recipient), asState(contacts))
}

export const contactRequestRule = defineRule({
  payload: z.object({ intro: z.string().refine((s) => [...s].length <= MAX_INTRO_CHARS, `intro must be at most ${MAX_INTRO_CHARS} characters`).optional() }),
  minFee: MIN_FEE,
  clientSubmittable: true,
  check (tx) {
    needsCounterparty(tx)
    if (tx.amount < MIN_CONTACT_FEE_UT) throw new KithError('TX_BAD_FIELD', `CONTACT_REQUEST amount (the contact fee paid to the recipient) must be at least ${MIN_CONTACT_FEE_UT} µT`)
  },
  apply ({ tx, payload, state, block }) {
    const contacts = Registry.contacts(state, tx.to)
    const existing = contacts.find((c) => c.requester_pub === tx.from)
    if (existing?.status === 'blocked') throw new KithError('TX_NOT_ALLOWED', 'the recipient has blocked this requester')
    if (existing !== undefined) throw new KithError('TX_CONFLICT', `a contact request to this recipient is already ${existing.status}`)
    debit(state, tx.from, tx.amount, `contact fee ${tx.amount} µT plus fee ${tx.fee} µT`)
    credit(state, tx.to, tx.amount)
    setContacts(state, tx.to, [...contacts, {
      requester_pub: tx.from, status: 'pending', intro: payload.intro ?? '', fee_ut: tx.amount, tx_id: tx.id, created_at: unixSeconds(block.time)
    }])
  }
})

export const acceptContactRule = defineRule({
  payload: z.object({}),
  minFee: MIN_FEE,
  clientSubmittable: true,
  check (tx) {
    needsCounterparty(tx)
    if (tx.amount !== 0) throw new KithError('TX_BAD_FIELD', 'ACCEPT_CONTACT carries no amount (`amount` must be 0)')
  },
  apply ({ tx, state }) {
    const contacts = Registry.contacts(state, tx.from)
    const existing = contacts.find((c) => c.requester_pub === tx.to)
    if (existing === undefined) throw new KithError('TX_UNKNOWN_TARGET', 'there is no contact request from this requester')
    if (existing.status !== 'pending') throw new KithError('TX_CONFLICT', `the contact request is ${existing.status}, not pending`)
    setContacts(state, tx.from, contacts.map((c) => (c === existing ? { ...c, status: 'accepted' } : c)))
  }
})

export const contactBlockRule = defineRule({
  payload: z.object({}),
  minFee: MIN_FEE,
  clientSubmittable: true,
  check (tx) {
    needsCounterparty(tx)
    if (tx.amount !== 0) throw new KithError('TX_BAD_FIELD', 'CONTACT_BLOCK carries no amount (`amount` must be 0)')
  },
  apply ({ tx, state, block }) {
    const contacts = Registry.contacts(state, tx.from)
    const existing = contacts.find((c) => c.requester_pub === tx.to)
    if (existing?.status === 'blocked') throw new KithError('TX_CONFLICT', 'this requester is already blocked')
    const blocked: ContactRecord = existing !== undefined
      ? { ...existing, status: 'blocked' }
      : { requester_pub: tx.to, status: 'blocked', intro: '', fee_ut: 0, tx_id: tx.id, created_at: unixSeconds(block.time) }
    setContacts(state, tx.from, existing !== undefined ? contacts.map((c) => (c === existing ? blocked : c)) : [...contacts, blocked])
  }
})
