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

const SHA256_K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
  0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
])

/**
 * SHA-256 as hex, in plain code: `crypto.subtle` exists only in a secure context, and the page
 * is often opened over plain http from another machine.
 */
export function sha256Hex (data: Uint8Array): string {
  const bits = data.length * 8
  const padded = new Uint8Array(Math.ceil((data.length + 9) / 64) * 64)
  padded.set(data)
  padded[data.length] = 0x80
  const view = new DataView(padded.buffer)
  view.setUint32(padded.length - 8, Math.floor(bits / 2 ** 32))
  view.setUint32(padded.length - 4, bits >>> 0)
  const hash = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19])
  const w = new Uint32Array(64)
  const rotr = (x: number, n: number): number => (x >>> n) | (x << (32 - n))
  for (let block = 0; block < padded.length; block += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(block + i * 4)
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3)
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10)
      w[i] = w[i - 16] + s0 + w[i - 7] + s1
    }
    let [a, b, c, d, e, f, g, hh] = hash
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + SHA256_K[i] + w[i]) >>> 0
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0
      hh = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = b; b = a; a = (t1 + t2) >>> 0
    }
    hash[0] += a; hash[1] += b; hash[2] += c; hash[3] += d; hash[4] += e; hash[5] += f; hash[6] += g; hash[7] += hh
  }
  return [...hash].map((x) => x.toString(16).padStart(8, '0')).join('')
}

/** The id of the contract a DEPLOY_CONTRACT creates: the first 40 hex of sha256("kith-contract:" + tx id) (src/chain/contracts.ts). */
export function contractIdOf (txId: string): string {
  return sha256Hex(new TextEncoder().encode(`kith-contract:${txId}`)).slice(0, 40)
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
