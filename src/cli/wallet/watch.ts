/**
 * `kith msg watch`: the key's mailbox live over the node's WebSocket (docs/realtime.md). The
 * connection proves the key (the nonce handshake, so it also works when the node requires it
 * for mailboxes), subscribes to the mailbox topic, and for each `inbox` event fetches the
 * envelope from `GET /relay/inbox`, opens it and prints it. A lost connection (the node restarts)
 * is retried with backoff, resuming from the last envelope shown so nothing is missed or shown
 * twice. Ctrl-C (SIGINT) or SIGTERM ends it.
 */
import WebSocket from 'ws'
import type { Account, InboxItem, KithClient } from '../../client/index.js'
import { sign, toBase64, toHex } from '../../crypto/index.js'
import type { Context } from './context.js'
import { CliError } from './errors.js'
import type { UnlockedKey } from './keystore.js'
import { openItems } from './messages.js'

const PAGE = 200

interface Pushed {
  event: string
  [member: string]: unknown
}

/** The stored envelope an `inbox` event announces: pages of GET /relay/inbox from its second. */
async function fetchEnvelope (client: KithClient, mailbox: string, id: string, sentAt: number, reader: Account): Promise<InboxItem | undefined> {
  let page = await client.inbox(mailbox, { since: sentAt, limit: PAGE, reader })
  for (;;) {
    const found = page.items.find((item) => item.id === id)
    if (found !== undefined || !page.has_more || page.items.length === 0) return found
    const last = page.items[page.items.length - 1]
    page = await client.inbox(mailbox, { since: last.sent_at, after: last.id, limit: PAGE, reader })
  }
}

/** Envelopes from other nodes keep their first node's sent_at: resume this far back, dropping ids already shown. */
const RESUME_MARGIN_S = 300
const SHOWN_IDS_KEPT = 10_000
const RETRY_FIRST_MS = 1000
const RETRY_MOST_MS = 30_000

type Session = { end: 'stopped' } | { end: 'lost', why: string, subscribed: boolean }

export async function watchInbox (ctx: Context, key: UnlockedKey): Promise<void> {
  const mailbox = toHex(key.mailbox.publicKey)
  const shown = new Set<string>()
  let lastSentAt: number | undefined
  let stopped = false
  let wake = (): void => {}
  const stop = (): void => { stopped = true; wake() }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)

  const show = async (event: Pushed): Promise<void> => {
    const id = String(event.id)
    if (shown.has(id)) return
    const item = await ctx.api(async (c) => await fetchEnvelope(c, mailbox, id, Number(event.sent_at), key.account))
    if (item === undefined) {
      ctx.progress(`envelope ${id} was announced but is no longer in the mailbox`)
      return
    }
    shown.add(id)
    if (shown.size > SHOWN_IDS_KEPT) shown.delete(shown.values().next().value as string)
    lastSentAt = Math.max(lastSentAt ?? 0, item.sent_at)
    const [conversation] = openItems([item], key.mailbox)
    const message = conversation.messages[0]
    const name = await ctx.peerName(conversation.peer, conversation.peer_is_ed25519)
    const value = { peer: conversation.peer, peer_is_ed25519: conversation.peer_is_ed25519, ...(name !== undefined ? { name } : {}), ...message }
    // one line per message: a JSON document each with --json
    if (ctx.json) process.stdout.write(JSON.stringify(value) + '\n')
    else process.stdout.write(`${message.sent_at_human}  ${name !== undefined ? `${name} ` : ''}${conversation.peer.slice(0, 16)}…: ${message.text ?? '[does not open with this key]'}\n`)
  }

  try {
    let everSubscribed = false
    let delay = RETRY_FIRST_MS
    for (;;) {
      const since = lastSentAt === undefined ? undefined : lastSentAt - RESUME_MARGIN_S
      const session = await watchOnce(ctx, key, mailbox, since, show, (onStop) => { wake = onStop; if (stopped) onStop() })
      if (session.end === 'stopped' || stopped) return
      // a node that never let us in is an error to report; a connection lost later is retried
      if (!everSubscribed && !session.subscribed) throw ctx.unreachable(session.why)
      everSubscribed = true
      if (session.subscribed) delay = RETRY_FIRST_MS
      ctx.progress(`connection to ${ctx.nodeUrl} lost (${session.why}); reconnecting in ${delay / 1000} s`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay)
        wake = () => { clearTimeout(timer); resolve() }
      })
      if (stopped) return
      delay = Math.min(delay * 2, RETRY_MOST_MS)
    }
  } finally {
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
  }
}

/**
 * One connection: handshake, subscribe (replaying from `since` when resuming), show each inbox
 * event in order. Resolves when the watcher is stopped or the connection is lost; rejects on
 * what retrying cannot fix (the node refuses the socket or the subscription).
 */
async function watchOnce (ctx: Context, key: UnlockedKey, mailbox: string, since: number | undefined, show: (event: Pushed) => Promise<void>,
  onStop: (stop: () => void) => void): Promise<Session> {
  const ws = new WebSocket(ctx.wsUrl())
  // events are handled one at a time, in the order they come
  let queue: Promise<void> = Promise.resolve()
  let subscribed = false
  let stopping = false
  return await new Promise<Session>((resolve, reject) => {
    const fail = (err: unknown): void => {
      ws.terminate()
      reject(err)
    }
    onStop(() => {
      stopping = true
      ws.close(1000)
    })
    ws.on('unexpected-response', (_req, res) => fail(new CliError('NODE_REFUSED', `the node refused the WebSocket at ${ctx.nodeUrl}/api/ws (${res.statusCode ?? 0}); a node in private mode needs KITH_TOKEN`)))
    let error: string | undefined
    ws.on('error', (err: NodeJS.ErrnoException) => { error = err.code ?? err.message })
    ws.on('close', (code) => {
      const ended = stopping ? { end: 'stopped' as const } : { end: 'lost' as const, why: error ?? `closed with ${code}`, subscribed }
      queue.then(() => resolve(ended), reject)
    })
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as Pushed
      if (m.event === 'hello') {
        const sig = toBase64(sign(Buffer.from(`kith-ws-auth:${String(m.nonce)}:${key.account.pub}`, 'utf8'), key.account.keyPair.secretKey))
        ws.send(JSON.stringify({ op: 'auth', req: 'auth', nonce: m.nonce, ed25519_pub: key.account.pub, sig }))
        ws.send(JSON.stringify({ op: 'subscribe', req: 'mailbox', topic: 'mailbox', pub: mailbox, ...(since !== undefined ? { since } : {}) }))
      } else if (m.event === 'subscribed') {
        subscribed = true
        ctx.progress(`watching the mailbox of ${key.info.name} (${mailbox}) on ${ctx.nodeUrl}; Ctrl-C to stop`)
      } else if (m.event === 'inbox') {
        // the node going away while an envelope is fetched is a lost connection: the resumed subscription brings it again
        queue = queue.then(async () => await show(m)).catch((err) => { if (err instanceof CliError && err.code === 'NODE_UNREACHABLE') ws.terminate(); else fail(err) })
      } else if (m.event === 'error') {
        fail(new CliError('NODE_REFUSED', `the node refused the ${String(m.op)} (${String(m.code)}): ${String(m.error)}`))
      }
    })
  })
}
