/**
 * Reading a release feed from a release source: a bounded fetch (time and bytes), the feed
 * validated with ReleaseFeedSchema, artifact URLs made absolute. Every failure is a
 * KithError('UPDATE_SOURCE_FAILED'), which the API answers 502.
 */
import { KithError } from '../errors/index.js'
import { safeParse } from '../validation/index.js'
import { compareVersions } from './semver.js'
import { ReleaseFeedSchema, type Release, type ReleaseFeed } from './schemas.js'

/** A feed lists releases, not artifacts: 1 MiB holds thousands. */
export const MAX_FEED_BYTES = 1024 * 1024
export const DEFAULT_SOURCE_TIMEOUT_MS = 5000

export type Fetch = typeof fetch

export interface FeedReadOptions {
  timeoutMs: number
  fetch?: Fetch
}

/** The URL to show and log: no user, password or query (a token may sit in either). */
export function displayUrl (url: string): string {
  const shown = new URL(url)
  shown.username = ''
  shown.password = ''
  shown.search = ''
  shown.hash = ''
  return shown.href
}

/** Checks SVC_UPDATE_SOURCE_URL (and `kith update --source`) once, at start. */
export function parseSourceUrl (raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new Error(`the release source "${raw}" is not a URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`the release source must be an http(s) URL, got "${url.protocol}"`)
  return url.href
}

/**
 * fetch refuses URLs with credentials: user:password of a source (or of an artifact URL resolved
 * against it) go as Basic authorization instead.
 */
export function requestTarget (url: string): { href: string, headers: Record<string, string> } {
  const target = new URL(url)
  if (target.username === '' && target.password === '') return { href: target.href, headers: {} }
  const basic = Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64')
  target.username = ''
  target.password = ''
  return { href: target.href, headers: { authorization: `Basic ${basic}` } }
}

export async function readReleaseFeed (sourceUrl: string, opts: FeedReadOptions): Promise<ReleaseFeed> {
  const doFetch = opts.fetch ?? fetch
  const signal = AbortSignal.timeout(opts.timeoutMs)
  let text: string
  try {
    const { href, headers } = requestTarget(sourceUrl)
    const res = await doFetch(href, { signal, headers: { ...headers, accept: 'application/json' }, redirect: 'follow' })
    if (!res.ok) {
      await res.body?.cancel()
      throw new KithError('UPDATE_SOURCE_FAILED', `the release source answered HTTP ${res.status}`)
    }
    text = await readLimited(res, MAX_FEED_BYTES)
  } catch (err) {
    if (err instanceof KithError) throw err
    if (signal.aborted) throw new KithError('UPDATE_SOURCE_FAILED', `the release source did not answer within ${opts.timeoutMs} ms`)
    throw new KithError('UPDATE_SOURCE_FAILED', 'the release source could not be reached', { cause: String(err) })
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new KithError('UPDATE_SOURCE_FAILED', 'the release source answered something that is not JSON')
  }
  const parsed = safeParse(ReleaseFeedSchema, value)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new KithError('UPDATE_SOURCE_FAILED', `the release source answered an invalid release feed: ${issue.path.join('.')}: ${issue.message}`)
  }
  const feed = parsed.data
  return { releases: feed.releases.map((release, i) => ({ ...release, url: artifactUrl(release.url, sourceUrl, i) })) }
}

function artifactUrl (url: string, sourceUrl: string, index: number): string {
  let absolute: URL
  try {
    absolute = new URL(url, sourceUrl)
  } catch {
    throw new KithError('UPDATE_SOURCE_FAILED', `the release source answered an invalid release feed: releases.${index}.url: not a URL`)
  }
  if (absolute.protocol !== 'http:' && absolute.protocol !== 'https:') throw new KithError('UPDATE_SOURCE_FAILED', `the release source answered an invalid release feed: releases.${index}.url: must be http(s)`)
  return absolute.href
}

async function readLimited (res: Response, maxBytes: number): Promise<string> {
  if (Number(res.headers.get('content-length') ?? 0) > maxBytes) {
    await res.body?.cancel()
    throw new KithError('UPDATE_SOURCE_FAILED', `the release feed is larger than ${maxBytes} bytes`)
  }
  if (res.body === null) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = res.body.getReader()
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    size += next.value.byteLength
    if (size > maxBytes) {
      await reader.cancel()
      throw new KithError('UPDATE_SOURCE_FAILED', `the release feed is larger than ${maxBytes} bytes`)
    }
    chunks.push(next.value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** The release with the highest version (semver precedence), or undefined for an empty feed. */
export function newestRelease (feed: ReleaseFeed): Release | undefined {
  let newest: Release | undefined
  for (const release of feed.releases) {
    if (newest === undefined || compareVersions(release.version, newest.version) > 0) newest = release
  }
  return newest
}

export function releaseTag (release: Release): string {
  return release.tag ?? `v${release.version}`
}
