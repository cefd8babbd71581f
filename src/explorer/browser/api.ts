/**
 * The node's API as the page reads it: JSON over fetch, the WebSocket for live blocks, and the
 * block replay of the event stream. In fully private mode the page was opened with `?token=`:
 * every call carries it as a bearer header (the WebSocket and plain URLs such as images, which
 * cannot send headers, as `?token=`).
 */
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

// ---- the records the page reads (the fields it uses) ----

export interface NetStats { chain_id: string, height: number, total_txs: number, supply: number, validator_count: number, mempool_size: number, last_block_time: string }
export interface BlockEvent { height: number, hash: string, time: string, proposer: string, tx_count: number }
export interface Block extends BlockEvent { prev_hash: string, state_root: string, tx_root: string, tx_ids: string[], commit: { round: number, signers: string[] } | null }
export interface TxDetail {
  id: string, type: string, status?: string, memo?: string, from: string, from_addr?: string, to?: string, to_addr?: string,
  amount_ut: number, fee_ut: number, time: string, block_index?: number, block_hash?: string, block_time?: string,
  gas_used?: number, payload?: unknown, payload_hex?: string, signature_hex?: string,
  contract_id?: string
  call_result?: { ok: boolean, gas_used: number, gas_cost_ut: number, error?: string, return_b64?: string }
}
export interface AddressTx { id: string, type: string, from: string, to?: string, amount_ut: number, fee_ut: number, time: string, block_index: number }
export interface AddressSummary { pub_key: string, address: string, balance_ut: number, transactions: AddressTx[], tx_count: number, has_more: boolean }
export interface Identity { pub_key: string, address: string, x25519_pub: string, nickname: string, registered: boolean, device_count: number }
export interface Devices { count: number, devices: Array<{ x25519_pub: string, name: string, linked_at: number, tx_id: string }> }
export interface FeedItem {
  post_id: string, author: string, created_at: number, content_preview: string, content_truncated: boolean, hashtags: string[],
  has_attachment: boolean, attachment_mime: string, likes: number, views: number, size: number, hosting_relay: string
}
export interface PostBody {
  post_id: string, author: string, content: string, content_type: string, hashtags: string[], created_at: number,
  reply_to: string, quote_of: string, attachment_mime?: string, attachment?: string
}
export interface PostStats { views: number, likes: number }
export interface Validators { count: number, total_power: number, validators: Array<{ pub_key: string, address: string, power: number, name?: string }> }
export interface Peers { count: number, peers: Array<{ peer_id: string, multiaddr?: string, version?: string, protocol_version?: number, height?: number }> }
export interface NodeVersion { node_version: string, protocol_version: number, features: string[], chain_id?: string, build?: { tag?: string, commit?: string, date?: string, dirty?: string | boolean } }
export interface ContractInfo {
  contract_id: string, name: string, version?: string, deployer: string, deployed_at: number, deployed_height: number, deploy_tx: string,
  code_hash: string, code_size: number, methods: string[], well_known: boolean, balance_ut: number, log_count: number, seq: number
}
export interface ContractList { count: number, total: number, contracts: ContractInfo[], next_cursor: number | null }
export interface ContractValue { contract_id: string, key: string, value_b64: string | null, value_hex: string | null, value_u64?: number }
export interface ContractLog { seq: number, tx_id: string, height: number, data_b64: string, data_hex: string, text?: string }
export interface ContractLogs { contract_id: string, count: number, total: number, logs: ContractLog[], next_cursor: number | null }
export interface NetworkInfo { chain_id: string, height: number, gas_price?: number }
export interface Limits {
  relay?: { stored_envelopes?: number, stored_bytes?: number, max_stored_bytes: number | null, mailbox_ttl_s: number }
  feed?: { live_posts?: number, disk_used_bytes?: number, disk_limit_bytes: number | null }
}

/**
 * The username registry (a well-known contract), read through contract state: `addr:<pubkey>`
 * holds the username, `name:<username>` the owner's pubkey, both as UTF-8 in `value_hex`. A node
 * without contracts answers 404 to these routes: then there are no usernames, and no error.
 */
export async function usernameRegistry (): Promise<string | undefined> {
  try {
    const known = await find<{ contracts?: Record<string, { contract_id?: string }> }>('/api/well-known-contracts')
    return known?.contracts?.username_registry?.contract_id
  } catch {
    return undefined
  }
}

export async function registryValue (key: string): Promise<string | undefined> {
  const contract = await usernameRegistry()
  if (contract === undefined) return undefined
  try {
    const value = await find<{ value_hex?: string | null }>(`/api/contracts/${enc(contract)}/state/${enc(key)}`)
    return typeof value?.value_hex === 'string' ? utf8OfHex(value.value_hex) : undefined
  } catch {
    return undefined
  }
}

/**
 * Summaries of the blocks after `after`, up to `head`, from the event stream's replay
 * (`/api/events?last_event_id=`, at most the last 1,000): one request instead of one per block.
 * Resolves with what arrived once `head` is in, or after `timeoutMs`.
 */
export async function replayBlocks (after: number, head: number, timeoutMs = 4000): Promise<BlockEvent[]> {
  const abort = new AbortController()
  const timer = setTimeout(() => abort.abort(), timeoutMs)
  const blocks: BlockEvent[] = []
  try {
    const res = await fetch(`/api/events?topics=blocks&last_event_id=${after}`, { headers: authHeaders(), signal: abort.signal })
    if (!res.ok || res.body === null) throw new HttpError(res.status, res.statusText)
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
    let buffered = ''
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      buffered += value
      let end = buffered.indexOf('\n\n')
      while (end >= 0) {
        const event = buffered.slice(0, end)
        buffered = buffered.slice(end + 2)
        end = buffered.indexOf('\n\n')
        const data = event.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim()).join('\n')
        if (!/^event:\s*block$/m.test(event) || data === '') continue
        const block = JSON.parse(data) as BlockEvent
        blocks.push(block)
        if (block.height >= head) return blocks
      }
    }
    return blocks
  } catch (err) {
    if (abort.signal.aborted) return blocks
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
