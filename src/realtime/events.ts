/** Push events built from what the node and the mailbox report, with the keys they go to. */
import type { Transaction } from '../chain/index.js'
import type { InboxEvent } from '../relay/index.js'
import type { BlockSummary } from '../storage/index.js'
import { Frame, TopicKeys } from './hub.js'
import type { BlockEvent, InboxPushEvent, TxEvent, TypingEvent } from './schemas.js'

/** ISO 8601 UTC, whole seconds without a fraction (as the HTTP answers write block times). */
function iso (ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z')
}

export function blockFrame (summary: BlockSummary, committedAt?: number): Frame {
  const event: BlockEvent = {
    event: 'block',
    height: summary.height,
    hash: summary.hash,
    time: iso(summary.time),
    proposer: summary.proposer,
    tx_count: summary.tx_count,
    ...(committedAt !== undefined ? { committed_at: committedAt } : {})
  }
  return Frame.of(event, { height: summary.height })
}

export function txFrame (tx: Transaction, block?: number): Frame {
  const event: TxEvent = {
    event: 'tx',
    id: tx.id,
    type: tx.type,
    from: tx.from,
    to: tx.to,
    amount_ut: tx.amount,
    fee_ut: tx.fee,
    status: block === undefined ? 'accepted' : 'confirmed',
    ...(block !== undefined ? { block_index: block } : {})
  }
  return Frame.of(event)
}

/** Keys a transaction is published to: every transaction, its sender, its recipient. */
export function txKeys (tx: Transaction): string[] {
  return tx.to !== '' && tx.to !== tx.from ? [TopicKeys.allTxs, TopicKeys.txsOf(tx.from), TopicKeys.txsOf(tx.to)] : [TopicKeys.allTxs, TopicKeys.txsOf(tx.from)]
}

export function inboxFrame (item: InboxEvent, replay = false): Frame {
  const event: InboxPushEvent = {
    event: 'inbox',
    id: item.id,
    recipient_pub: item.recipient_pub,
    sender_pub: item.sender_pub,
    sender_ed25519_pub: item.sender_ed25519_pub,
    sent_at: item.sent_at,
    ...(replay ? { replay: true } : {})
  }
  return Frame.of(event, { envelopeId: item.id })
}

export function typingFrame (from: string, to: string, state: 'typing' | 'stopped'): Frame {
  const event: TypingEvent = { event: 'typing', from, to, state }
  return Frame.of(event)
}

/** Keys a typing event goes to: subscribers of `to` watching `from`, and those watching everyone. */
export function typingKeys (from: string, to: string): string[] {
  return [TopicKeys.typing(to, from), TopicKeys.typing(to, '*')]
}
