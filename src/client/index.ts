/**
 * Client library for apps, tests and benchmarks: keys, building and signing every transaction
 * type, submitting over HTTP and waiting for confirmation. Depends only on the chain's wire
 * format, never on node internals.
 */
import { sign, toBase64 } from '../crypto/index.js'
import type { ContractRecord } from '../chain/index.js'
import type { Account, Transaction } from './build.js'
import type { PublishRequest, PublishResponse } from './feed.js'
import type { FeedPostItem, Timeline, Trending } from '../feed/index.js'
import { INBOX_AUTH_HEADER, inboxAuthHeader, inboxReadText, type InboxReadEndpoint } from '../protocol/index.js'
import type { InboxItem } from '../relay/index.js'

export type { InboxItem, FeedPostItem, Timeline, Trending }

export * from './build.js'
export * from './feed.js'

export class ApiError extends Error {
  constructor (readonly status: number, message: string) {
    super(message)
    this.name = 'ApiError'
  }
}

export interface ClientOptions {
  baseUrl: string
  token?: string
}

/**
 * A deployed contract as GET /api/contracts answers it: the chain's record (version optional on
 * the wire) and what the API adds, held equal to the API's ContractInfoSchema by
 * test/unit/client/wire-types.test.ts (the client sits below the API and cannot import it).
 */
export type ContractInfo = Flat<Omit<ContractRecord, 'version'> & {
  version?: string | undefined
  /** deployed by the chain at genesis */
  well_known: boolean
  balance_ut: number
  log_count: number
}>

/** One object type instead of an intersection, as a response body is. */
type Flat<T> = { [K in keyof T]: T[K] }

function pageQuery (page: { limit?: number, before?: number }): string {
  const query = new URLSearchParams()
  if (page.limit !== undefined) query.set('limit', String(page.limit))
  if (page.before !== undefined) query.set('before', String(page.before))
  const text = query.toString()
  return text === '' ? '' : `?${text}`
}

/** Thin HTTP client for the node interface. */
export class KithClient {
  constructor (private readonly opts: ClientOptions) {}

  /** false once a node has said it does not require signed reads: later reads skip the nonce */
  private readAuthRequired: boolean | undefined

  async request<T> (method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<T> {
    const headers: Record<string, string> = { ...extraHeaders }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (this.opts.token !== undefined) headers.authorization = `Bearer ${this.opts.token}`
    const res = await fetch(new URL(path, this.opts.baseUrl), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
    const text = await res.text()
    const json: unknown = text === '' ? undefined : JSON.parse(text)
    if (!res.ok) throw new ApiError(res.status, (json as { error?: string } | undefined)?.error ?? res.statusText)
    return json as T
  }

  async submit (tx: Transaction): Promise<{ id: string, status: string }> {
    return await this.request('POST', '/api/tx', tx)
  }

  async getTx (id: string): Promise<Record<string, unknown>> {
    return await this.request('GET', `/api/tx/${encodeURIComponent(id)}`)
  }

  async address (pubOrAddress: string, limit = 50): Promise<{ balance_ut: number, tx_count: number, has_more: boolean, transactions: Array<Record<string, unknown>> }> {
    return await this.request('GET', `/api/address/${encodeURIComponent(pubOrAddress)}?limit=${limit}`)
  }

  async netstats (): Promise<{ height: number, total_txs: number, supply: number, validator_count: number }> {
    return await this.request('GET', '/api/netstats')
  }

  async identity (pubOrAddress: string): Promise<{ pub_key: string, address: string, x25519_pub: string, nickname: string, registered: boolean, device_count: number }> {
    return await this.request('GET', `/api/identity/${encodeURIComponent(pubOrAddress)}`)
  }

  async devices (masterPub: string): Promise<{ master_pub: string, count: number, devices: Array<{ x25519_pub: string, name: string, linked_at: number, tx_id: string }> }> {
    return await this.request('GET', `/api/devices/${encodeURIComponent(masterPub)}`)
  }

  /** POST /relay/broadcast of an envelope sealed by the caller. */
  async broadcast (envelope: Record<string, unknown>): Promise<{ id: string, status: string }> {
    return await this.request('POST', '/relay/broadcast', { envelope })
  }

  /**
   * One page of a mailbox, oldest first; page on with the last item's sent_at and id. With
   * `reader` (the identity the mailbox key is linked to), the read is signed, as nodes running
   * with SVC_RELAY_READ_AUTH require (docs/relay.md): a nonce from the node, then the signed
   * Kith-Inbox-Auth header. A node that requires no signature says so, and is then read unsigned.
   */
  async inbox (x25519Pub: string, page: { since?: number, after?: string, limit?: number, reader?: Account } = {}): Promise<{ pub: string, count: number, has_more: boolean, items: InboxItem[] }> {
    const query = new URLSearchParams({ pub: x25519Pub })
    if (page.since !== undefined) query.set('since', String(page.since))
    if (page.after !== undefined) query.set('after', page.after)
    if (page.limit !== undefined) query.set('limit', String(page.limit))
    return await this.request('GET', `/relay/inbox?${query.toString()}`, undefined, await this.readHeaders('GET /relay/inbox', x25519Pub, page.reader))
  }

  /** The number of envelopes in a mailbox; signed with `reader` as `inbox` is. */
  async inboxCount (x25519Pub: string, reader?: Account): Promise<{ pub: string, count: number }> {
    const query = new URLSearchParams({ pub: x25519Pub })
    return await this.request('GET', `/relay/inbox/count?${query.toString()}`, undefined, await this.readHeaders('GET /relay/inbox/count', x25519Pub, reader))
  }

  /** POST /relay/inbox/nonce: a single-use nonce for one signed read. */
  async readNonce (x25519Pub: string): Promise<{ pub: string, nonce: string, node: string, expires_at: number, required: boolean }> {
    return await this.request('POST', '/relay/inbox/nonce', { pub: x25519Pub })
  }

  private async readHeaders (endpoint: InboxReadEndpoint, x25519Pub: string, reader: Account | undefined): Promise<Record<string, string>> {
    if (reader === undefined || this.readAuthRequired === false) return {}
    const issued = await this.readNonce(x25519Pub)
    this.readAuthRequired = issued.required
    if (!issued.required) return {}
    const sig = toBase64(sign(Buffer.from(inboxReadText(issued.node, endpoint, issued.pub, issued.nonce), 'utf8'), reader.keyPair.secretKey))
    return { [INBOX_AUTH_HEADER]: inboxAuthHeader(reader.pub, issued.nonce, sig) }
  }

  /** POST /feed/publish of a request signed by the author (publishRequest). */
  async publish (request: PublishRequest): Promise<PublishResponse> {
    return await this.request('POST', '/feed/publish', request)
  }

  async postStats (postId: string, me?: string): Promise<{ post_id: string, views: number, likes: number, liked_by_me?: boolean }> {
    const query = me === undefined ? '' : `?me=${encodeURIComponent(me)}`
    return await this.request('GET', `/feed/post/${encodeURIComponent(postId)}/stats${query}`)
  }

  /** Posts of everyone `follower` follows, newest first. */
  async timeline (follower: string, limit?: number): Promise<Timeline> {
    const query = new URLSearchParams({ follower })
    if (limit !== undefined) query.set('limit', String(limit))
    return await this.request('GET', `/feed/timeline?${query.toString()}`)
  }

  /** Posts of the last `window` hours (1 to 168) by likes × 3 + views. */
  async trending (window?: number, limit?: number): Promise<Trending> {
    const query = new URLSearchParams()
    if (window !== undefined) query.set('window', String(window))
    if (limit !== undefined) query.set('limit', String(limit))
    return await this.request('GET', `/feed/trending?${query.toString()}`)
  }

  async wellKnownContracts (): Promise<{ count: number, contracts: Record<string, { contract_id: string, name: string, version?: string, deployed_at: number }> }> {
    return await this.request('GET', '/api/well-known-contracts')
  }

  /** One value of a contract's state; value_hex and value_b64 are null when the key is missing. */
  async contractState (contractId: string, key: string): Promise<{ contract_id: string, key: string, value_b64: string | null, value_hex: string | null, value_u64?: number }> {
    return await this.request('GET', `/api/contracts/${encodeURIComponent(contractId)}/state/${encodeURIComponent(key)}`)
  }

  async contract (contractId: string): Promise<ContractInfo> {
    return await this.request('GET', `/api/contracts/${encodeURIComponent(contractId)}`)
  }

  /** Contracts newest first; page on with `before` = the previous page's next_cursor. */
  async contracts (page: { limit?: number, before?: number } = {}): Promise<{ count: number, total: number, contracts: ContractInfo[], next_cursor: number | null }> {
    return await this.request('GET', `/api/contracts${pageQuery(page)}`)
  }

  async contractLogs (contractId: string, page: { limit?: number, before?: number } = {}): Promise<{ total: number, logs: Array<{ seq: number, tx_id: string, height: number, data_hex: string, text?: string }>, next_cursor: number | null }> {
    return await this.request('GET', `/api/contracts/${encodeURIComponent(contractId)}/logs${pageQuery(page)}`)
  }

  /** The text stored under `key` by the username registry (`name:<username>`, `addr:<pubkey>`), or undefined. */
  async usernameRecord (key: string): Promise<string | undefined> {
    const registry = (await this.wellKnownContracts()).contracts.username_registry
    if (registry === undefined) return undefined
    const value = await this.contractState(registry.contract_id, key)
    return value.value_b64 === null ? undefined : Buffer.from(value.value_b64, 'base64').toString('utf8')
  }

  /** Polls until the transaction is in a block; resolves with its detail. */
  async waitForConfirmation (id: string, opts: { timeoutMs?: number, intervalMs?: number } = {}): Promise<Record<string, unknown>> {
    const deadline = Date.now() + (opts.timeoutMs ?? 30_000)
    for (;;) {
      try {
        const detail = await this.getTx(id)
        if (typeof detail.block_index === 'number') return detail
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 404)) throw err
      }
      if (Date.now() > deadline) throw new Error(`transaction ${id} not confirmed in time`)
      await new Promise((resolve) => setTimeout(resolve, opts.intervalMs ?? 100))
    }
  }

  async submitAndWait (tx: Transaction, opts?: { timeoutMs?: number }): Promise<Record<string, unknown>> {
    await this.submit(tx)
    return await this.waitForConfirmation(tx.id, opts)
  }
}
