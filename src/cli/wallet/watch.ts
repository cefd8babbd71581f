/**
 * `kith msg watch`: the key's mailbox live over the node's WebSocket (docs/realtime.md). The
 * connection proves the key (the nonce handshake, so it also works when the node requires it
 * for mailboxes), subscribes to the mailbox topic, and for each `inbox` event fetches the
 * envelope from `GET /relay/inbox`, opens it and prints it. Ctrl-C (SIGINT) or SIGTERM ends it.
 */
import WebSocket from 'ws'
import type { InboxItem, KithClient } from '../../client/index.js'
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
async function fetchEnvelope (client: KithClient, mailbox: string, id: string, sentAt: number): Promise<InboxItem | undefined> {
  let page = await client.inbox(mailbox, { since: sentAt, limit: PAGE })
  for (;;) {
    const found = page.items.find((item) => item.id === id)
    if (found !== undefined || !page.has_more || page.items.length === 0) return found
    const last = page.items[page.items.length - 1]
    page = await client.inbox(mailbox, { since: last.sent_at, after: last.id, limit: PAGE })
  }
}

export async function watchInbox (ctx: Context, key: UnlockedKey): Promise<void> {
  const mailbox = toHex(key.mailbox.publicKey)
  const ws = new WebSocket(ctx.wsUrl())
  // events are handled one at a time, in the order they come
  let queue: Promise<void> = Promise.resolve()

  const show = async (event: Pushed): Promise<void> => {
    const item = await ctx.api(async (c) => await fetchEnvelope(c, mailbox, String(event.id), Number(event.sent_at)))
    if (item === undefined) {
      ctx.progress(`envelope ${String(event.id)} was announced but is no longer in the mailbox`)
      return
    }
    const [conversation] = openItems([item], key.mailbox)
    const message = conversation.messages[0]
    const name = await ctx.peerName(conversation.peer, conversation.peer_is_ed25519)
    const value = { peer: conversation.peer, peer_is_ed25519: conversation.peer_is_ed25519, ...(name !== undefined ? { name } : {}), ...message }
    // one line per message: a JSON document each with --json
    if (ctx.json) process.stdout.write(JSON.stringify(value) + '\n')
    else process.stdout.write(`${message.sent_at_human}  ${name !== undefined ? `${name} ` : ''}${conversation.peer.slice(0, 16)}…: ${message.text ?? '[does not open with this key]'}\n`)
  }

  await new Promise<void>((resolve, reject) => {
    let stopping = false
    const stop = (): void => {
      stopping = true
      ws.close(1000)
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    const fail = (err: unknown): void => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      ws.terminate()
      reject(err)
    }

    ws.on('unexpected-response', (_req, res) => fail(new CliError('NODE_REFUSED', `the node refused the WebSocket at ${ctx.nodeUrl}/api/ws (${res.statusCode ?? 0}); a node in private mode needs KITH_TOKEN`)))
    ws.on('error', (err: NodeJS.ErrnoException) => fail(ctx.unreachable(err.code ?? err.message)))
    ws.on('close', (code) => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      if (stopping) {
        queue.then(resolve, reject)
        return
      }
      reject(new CliError('NODE_UNREACHABLE', `the node closed the connection (${code}); run \`kith msg watch\` again (\`kith msg inbox\` shows what came meanwhile)`))
    })
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as Pushed
      if (m.event === 'hello') {
        const sig = toBase64(sign(Buffer.from(`kith-ws-auth:${String(m.nonce)}:${key.account.pub}`, 'utf8'), key.account.keyPair.secretKey))
        ws.send(JSON.stringify({ op: 'auth', req: 'auth', nonce: m.nonce, ed25519_pub: key.account.pub, sig }))
        ws.send(JSON.stringify({ op: 'subscribe', req: 'mailbox', topic: 'mailbox', pub: mailbox }))
      } else if (m.event === 'subscribed') {
        ctx.progress(`watching the mailbox of ${key.info.name} (${mailbox}) on ${ctx.nodeUrl}; Ctrl-C to stop`)
      } else if (m.event === 'inbox') {
        queue = queue.then(async () => await show(m)).catch(fail)
      } else if (m.event === 'error') {
        fail(new CliError('NODE_REFUSED', `the node refused the ${String(m.op)} (${String(m.code)}): ${String(m.error)}`))
      }
    })
  })
}
