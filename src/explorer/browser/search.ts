/**
 * The search box: the shape of the entry says what it may be (format.ts `searchKinds`); each
 * reading is tried in order against the node, and the first that exists is shown. Nothing found
 * is said plainly, with what was tried.
 */
import { HttpError, enc, find, getJson, registryValue, type AddressSummary, type Block, type ContractInfo, type Identity, type TxDetail } from './api.js'
import { fill, h, notFound } from './dom.js'
import { searchKinds, type SearchKind } from './format.js'
import type { Cleanup, View } from './view.js'

const KIND_NAMES: Record<SearchKind, string> = { height: 'block height', tx: 'transaction id', account: 'address or pubkey', post: 'post id', username: 'username', contract: 'contract id' }

/** The page route of the first reading of `q` that exists, or undefined. */
async function resolve (q: string, kind: SearchKind): Promise<string | undefined> {
  switch (kind) {
    case 'height': {
      const height = Number(q.replace(/^#/, ''))
      return height >= 1 && await find<Block>(`/api/blocks/${height}`) !== undefined ? `/block/${height}` : undefined
    }
    case 'tx':
      return await find<TxDetail>(`/api/tx/${enc(q)}`) !== undefined ? `/tx/${enc(q)}` : undefined
    case 'account': {
      const [summary, identity] = await Promise.all([find<AddressSummary>(`/api/address/${enc(q)}?limit=1`), find<Identity>(`/api/identity/${enc(q)}`)])
      if (summary === undefined) return undefined
      // any key is a valid address; one with no trace on the chain is "not found"
      return summary.tx_count > 0 || summary.balance_ut > 0 || identity !== undefined ? `/address/${summary.pub_key}` : undefined
    }
    case 'post': {
      const id = q.toLowerCase()
      try {
        await getJson(`/feed/post/${id}/stats`)
      } catch (err) {
        // 410: deleted on chain, and its page says so
        if (!(err instanceof HttpError && err.status === 410)) return undefined
      }
      return `/post/${id}`
    }
    case 'contract': {
      const id = q.toLowerCase()
      return await find<ContractInfo>(`/api/contracts/${id}`) !== undefined ? `/contract/${id}` : undefined
    }
    case 'username': {
      const owner = await registryValue(`name:${q.replace(/^@/, '').toLowerCase()}`)
      return owner !== undefined ? `/identity/${enc(owner)}` : undefined
    }
  }
}

export async function searchPage (view: View, q: string): Promise<Cleanup> {
  const input = document.getElementById('q') as HTMLInputElement | null
  if (input !== null) input.value = q
  const kinds = searchKinds(q)
  fill(view.main, h('p', { class: 'muted' }, `Searching for ${q}…`))
  for (const kind of kinds) {
    const route = await resolve(q.trim(), kind)
    if (!view.current()) return undefined
    if (route !== undefined) {
      location.replace(`#${route}`)
      return undefined
    }
  }
  fill(view.main, notFound(
    `Nothing on this node matches "${q}".`,
    kinds.length === 0 ? 'Enter a transaction id, an address, a pubkey, a username, a contract id or a block height.' : `Tried it as: ${kinds.map((k) => KIND_NAMES[k]).join(', then ')}.`))
  return undefined
}
