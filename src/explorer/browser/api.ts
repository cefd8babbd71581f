/**
 * The node's API as the page reads it: JSON over fetch, the WebSocket for live blocks, and the
 * block replay of the event stream. In fully private mode the page was opened with `?token=`:
 * every call carries it as a bearer header (the WebSocket and plain URLs such as images, which
 * cannot send headers, as `?token=`).
 */
import type { ContractStateValue, WellKnownContracts } from '../../api/index.js'
import type { BlockEvent as WsBlockEvent } from '../../realtime/index.js'
import { utf8OfHex } from './format.js'

export const token = new URLSearchParams(location.search).get('token') ?? ''

const authHeaders = (): Record<string, string> => (token === '' ? {} : { Authorization: `Bearer ${token}` })

export class HttpError extends Error {
  constructor (readonly status: number, message: string) {
    super(message)
    this.name = 'HttpError'
  }
}

export async function getJson<T> (path: string): Promise<T> {
  const res = await fetch(path, { headers: authHeaders() })
  if (!res.ok) {
    let message = res.statusText
    try { message = ((await res.json()) as { error?: string }).error ?? message } catch { /* not JSON */ }
    throw new HttpError(res.status, message)
  }
  return await res.json() as T
}

/** The JSON, or undefined when the node says there is no such thing (404, 400 for a malformed key, 410 deleted). */
export async function find<T> (path: string): Promise<T | undefined> {
  try {
    return await getJson<T>(path)
  } catch (err) {
    if (err instanceof HttpError && (err.status === 404 || err.status === 400 || err.status === 410)) return undefined
    throw err
  }
}

/** A URL of this node for an element that cannot send headers (an image), with the token when there is one. */
export function withToken (path: string): string {
  if (token === '') return path
  return `${path}${path.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}`
}

export const enc = encodeURIComponent

// ---- the records the page reads ----
// The types the server's zod schemas infer (the same schemas validate and document the API), imported
// as types only, through each folder's door: tsc erases these lines, so no server or zod code reaches the browser.

export type {
  AddressSummary, AddressTx, BlockSummary as Block, NetStats, NetworkInfo, NodeVersion, Peers, TxDetail, Validators,
  ContractInfo, ContractList, ContractLog, ContractLogs, ContractStateValue as ContractValue, WellKnownContracts, Devices, Identity, Limits
} from '../../api/index.js'
export type { FeedPostItem as FeedItem, PostBody, PostStats } from '../../feed/index.js'

/** A block as the live stream announces it: the fields it shares with a block summary (`Block`). */
export type BlockEvent = Omit<WsBlockEvent, 'event' | 'committed_at'>

/**
 * The username registry (a well-known contract), read through contract state: `addr:<pubkey>`
 * holds the username, `name:<username>` the owner's pubkey, both as UTF-8 in `value_hex`. A node
 * without contracts answers 404 to these routes: then there are no usernames, and no error.
 * The registry's id is asked once per page life.
 */
let registryId: Promise<string | undefined> | undefined
export async function usernameRegistry (): Promise<string | undefined> {
  registryId ??= find<WellKnownContracts>('/api/well-known-contracts')
    .then((known) => known?.contracts?.username_registry?.contract_id, () => { registryId = undefined; return undefined })
  return await registryId
}

export async function registryValue (key: string): Promise<string | undefined> {
  const contract = await usernameRegistry()
  if (contract === undefined) return undefined
  try {
    const value = await find<ContractStateValue>(`/api/contracts/${enc(contract)}/state/${enc(key)}`)
    return typeof value?.value_hex === 'string' ? utf8OfHex(value.value_hex) : undefined
  } catch {
    return undefined
  }
}

/** Usernames by pubkey, asked once each: a table of 10 rows from 2 senders costs 2 requests, once per page life. */
const usernames = new Map<string, Promise<string | undefined>>()
export async function usernameOf (pub: string): Promise<string | undefined> {
  let name = usernames.get(pub)
  if (name === undefined) {
    name = registryValue(`addr:${pub}`)
    usernames.set(pub, name)
  }
  return await name
}

/** A replay that stopped before the block it was asked to reach: what it holds is not the whole range. */
export class ReplayCutShort extends Error {
  constructor (readonly reached: number, readonly upTo: number) {
    super(`the event stream's replay stopped at height ${reached}, before ${upTo}`)
    this.name = 'ReplayCutShort'
  }
}

/** Without a byte for this long the replay is taken as dead (the stream sends a keep-alive every 15 s). */
const REPLAY_STALL_MS = 30_000

/**
 * Summaries of the blocks in `(after, upTo]`, oldest first, from the event stream's replay
 * (`/api/events?last_event_id=`, at most the last 1,000 blocks): one request instead of one per
 * block. Read until `upTo` arrived, however slow the link: a deadline would cut a slow reader off
 * with only the oldest blocks. Throws ReplayCutShort when the stream ends or stalls before.
 */
export async function replayBlocks (after: number, upTo: number): Promise<BlockEvent[]> {
  const abort = new AbortController()
  let stalled = false
  let timer: ReturnType<typeof setTimeout> | undefined
  const watch = (): void => {
    clearTimeout(timer)
    timer = setTimeout(() => { stalled = true; abort.abort() }, REPLAY_STALL_MS)
  }
  const blocks: BlockEvent[] = []
  const reached = (): number => blocks.at(-1)?.height ?? after
  try {
    watch()
    const res = await fetch(`/api/events?topics=blocks&last_event_id=${after}`, { headers: authHeaders(), signal: abort.signal })
    if (!res.ok || res.body === null) throw new HttpError(res.status, res.statusText)
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
    let buffered = ''
    for (;;) {
      const { value, done } = await reader.read()
      if (done) throw new ReplayCutShort(reached(), upTo)
      watch()
      buffered += value
      let end = buffered.indexOf('\n\n')
      while (end >= 0) {
        const event = buffered.slice(0, end)
        buffered = buffered.slice(end + 2)
        end = buffered.indexOf('\n\n')
        const data = event.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim()).join('\n')
        if (!/^event:\s*block$/m.test(event) || data === '') continue
        const block = JSON.parse(data) as BlockEvent
        // past the range: the stream went on live
        if (block.height > upTo) return blocks
        blocks.push(block)
        if (block.height === upTo) return blocks
      }
    }
  } catch (err) {
    if (stalled) throw new ReplayCutShort(reached(), upTo)
    throw err
  } finally {
    clearTimeout(timer)
    abort.abort()
  }
}

export type LiveState = 'on' | 'off'

/**
 * One WebSocket for the page's life, subscribed to `blocks`; reconnects with a growing pause
 * (1 s to 15 s) when the node goes away. Listeners come and go with the page shown.
 */
export class LiveBlocks {
  private readonly listeners = new Set<(block: BlockEvent) => void>()
  private retryMs = 1000

  constructor (private readonly onState: (state: LiveState) => void) {}

  start (): void {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:'
    const ws = new WebSocket(`${scheme}//${location.host}/api/ws${token === '' ? '' : `?token=${enc(token)}`}`)
    ws.onopen = () => { ws.send(JSON.stringify({ op: 'subscribe', req: 'explorer', topic: 'blocks' })) }
    ws.onmessage = (msg) => {
      const m = JSON.parse(String(msg.data)) as { event?: string } & Partial<BlockEvent>
      if (m.event === 'subscribed') { this.retryMs = 1000; this.onState('on') } else if (m.event === 'block') {
        for (const listener of this.listeners) listener(m as BlockEvent)
      }
    }
    ws.onclose = () => {
      this.onState('off')
      setTimeout(() => this.start(), this.retryMs)
      this.retryMs = Math.min(this.retryMs * 2, 15_000)
    }
  }

  /** Calls `listener` with each new block until the returned function is called. */
  listen (listener: (block: BlockEvent) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }
}
