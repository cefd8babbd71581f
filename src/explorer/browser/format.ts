/**
 * Pure helpers of the explorer's browser code: amounts, ids, times, sizes, what a search looks
 * like. No DOM and no network here, so the unit tests run them in Node.
 */

const UT_PER_T = 1_000_000

/** µT as tokens with up to six decimals: 2500000 → "2.5 T", 1000 → "0.001 T". */
export function formatAmount (ut: number): string {
  const whole = Math.trunc(ut / UT_PER_T)
  const frac = Math.abs(ut % UT_PER_T)
  const fracText = frac === 0 ? '' : `.${String(frac).padStart(6, '0').replace(/0+$/, '')}`
  return `${whole.toLocaleString('en-US')}${fracText} T`
}

export function formatCount (n: number): string {
  return n.toLocaleString('en-US')
}

export function formatBytes (n: number): string {
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let value = n / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++ }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`
}

/** A long id shortened in the middle: "a1b2c3…f9e8". */
export function shortId (id: string, keep = 6): string {
  return id.length <= keep * 2 + 1 ? id : `${id.slice(0, keep)}…${id.slice(-keep)}`
}

/**
 * What a table shows of each id: its end, which tells ids apart where the start does not (client
 * ids `tx-<ms><pid><counter>` share their first digits for hours), made longer until no two ids of
 * the table read the same. An id barely longer than what would be shown is shown whole.
 */
export function distinctEnds (ids: readonly string[], keep = 8): Map<string, string> {
  const unique = [...new Set(ids)]
  const longest = Math.max(0, ...unique.map((id) => id.length))
  while (keep < longest && new Set(unique.map((id) => id.slice(-keep))).size < unique.length) keep++
  return new Map(unique.map((id) => [id, id.length <= keep + 1 ? id : `…${id.slice(-keep)}`]))
}

/**
 * The event stream's replay read newest first: `(after, upTo]` height ranges covering the last
 * `span` blocks below `head`, the first `first` blocks long and each next one four times longer.
 * The newest blocks come in one small answer even on a slow link; older ones only when needed.
 */
export function replayWindows (head: number, span: number, first = 16): Array<[after: number, upTo: number]> {
  const windows: Array<[number, number]> = []
  const oldest = Math.max(0, head - span)
  let upTo = head
  let size = first
  while (upTo > oldest) {
    const after = Math.max(oldest, upTo - size)
    windows.push([after, upTo])
    upTo = after
    size *= 4
  }
  return windows
}

/** "12 s ago", "5 min ago", "3 h ago", "2 d ago"; a time in the future counts as now. */
export function timeAgo (when: string | number, nowMs: number): string {
  const ms = typeof when === 'number' ? when : Date.parse(when)
  if (!Number.isFinite(ms)) return ''
  const s = Math.max(0, Math.round((nowMs - ms) / 1000))
  if (s < 60) return `${s} s ago`
  if (s < 3600) return `${Math.floor(s / 60)} min ago`
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`
  return `${Math.floor(s / 86_400)} d ago`
}

/** ISO 8601 as "2025-01-31 12:34:56 UTC". */
export function formatTime (when: string | number): string {
  const d = new Date(typeof when === 'number' ? when : Date.parse(when))
  if (Number.isNaN(d.getTime())) return String(when)
  return `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`
}

/** UTF-8 text of lowercase or uppercase hex; undefined when it is not hex or not UTF-8. */
export function utf8OfHex (hex: string): string | undefined {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(hex)) return undefined
  const bytes = new Uint8Array(hex.length / 2)
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return undefined
  }
}

/** Text meant to be read: undefined when there is none or it holds control characters (a u64's zero bytes, say). */
export function readable (text: string | undefined): string | undefined {
  if (text === undefined || text === '') return undefined
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if ((c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || c === 0x7f) return undefined
  }
  return text
}

/** Base64 (standard alphabet) as lowercase hex; undefined when it is not base64. */
export function hexOfBase64 (b64: string): string | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4 === 1) return undefined
  let bin: string
  try { bin = atob(b64) } catch { return undefined }
  let hex = ''
  for (let i = 0; i < bin.length; i++) hex += bin.charCodeAt(i).toString(16).padStart(2, '0')
  return hex
}

/**
 * Paging of a newest-first list by cursor (`before`: show the items numbered below it): the
 * `before` of the newer page, 'newest' when that is the first page (no cursor), undefined when
 * this already is the first page.
 */
export function newerPage (before: number | undefined, size: number, total: number): number | 'newest' | undefined {
  if (before === undefined || before > total) return undefined
  return before + size > total ? 'newest' : before + size
}

/** A cursor from a route: a positive whole number, else undefined (the newest page). */
export function cursorOf (text: string | undefined): number | undefined {
  const n = Number(text)
  return text !== undefined && /^\d{1,15}$/.test(text) && n >= 1 ? n : undefined
}

/** What a search box entry may be, in the order to try them. */
export type SearchKind = 'height' | 'tx' | 'account' | 'post' | 'username' | 'contract'

export const PUBKEY_RE = /^[0-9a-f]{64}$/
export const ADDRESS_RE = /^kith1[02-9ac-hj-np-z]{20,}$/
export const POST_ID_RE = /^[0-9a-f]{32}$/
export const CONTRACT_ID_RE = /^[0-9a-f]{40}$/
/** the username registry's names: 4 to 32 of a-z, 0-9 and _, ASCII uppercase folded (docs/contracts.md) */
export const USERNAME_RE = /^[a-z0-9_]{4,32}$/i

/**
 * Decides by shape what a search may mean; ambiguous input lists every reading, most likely
 * first. Transaction ids are free-form (`tx-<digits>`, hashes), so `tx` is a reading of almost
 * anything; a block height is plain digits; a pubkey is 64 hex (an account first, then a hash-
 * based transaction id); an address is bech32m with the `kith` prefix; a post id 32 hex; a
 * contract id 40 hex (then a transaction id).
 */
export function searchKinds (input: string): SearchKind[] {
  const q = input.trim()
  if (q === '') return []
  if (/^#?\d{1,15}$/.test(q)) return ['height', 'tx']
  const lower = q.toLowerCase()
  if (PUBKEY_RE.test(lower)) return ['account', 'tx']
  if (ADDRESS_RE.test(lower)) return ['account']
  if (POST_ID_RE.test(lower)) return ['post', 'tx']
  if (CONTRACT_ID_RE.test(lower)) return ['contract', 'tx']
  if (q.startsWith('@')) return USERNAME_RE.test(q.slice(1)) ? ['username'] : []
  if (/^tx-/i.test(q)) return ['tx']
  return USERNAME_RE.test(q) ? ['tx', 'username'] : ['tx']
}

/** Hashtags of a list of posts, most used first (then by name): trending tags from trending posts. */
export function tagCounts (posts: ReadonlyArray<{ hashtags: readonly string[] }>): Array<{ tag: string, posts: number }> {
  const counts = new Map<string, number>()
  for (const post of posts) {
    for (const tag of new Set(post.hashtags)) counts.set(tag, (counts.get(tag) ?? 0) + 1)
  }
  return [...counts].map(([tag, n]) => ({ tag, posts: n })).sort((a, b) => b.posts - a.posts || a.tag.localeCompare(b.tag))
}
