/**
 * GET /api/update-check: compares this node's version with the newest release of the release
 * source. It only reports; updating is the operator's `kith update`. Answers are cached for
 * UPDATE_CHECK_CACHE_MS so that clients polling the endpoint do not poll the source; concurrent
 * checks share one request; failures are not cached (the per-IP rate limit bounds retries).
 */
import { KithError } from '../errors/index.js'
import { compareVersions } from './semver.js'
import { displayUrl, newestRelease, readReleaseFeed, releaseTag, type Fetch } from './release-feed.js'
import type { BuildInfo, UpdateCheck } from './schemas.js'

export const UPDATE_CHECK_CACHE_MS = 60_000

export interface UpdateCheckerOptions {
  /** SVC_UPDATE_SOURCE_URL; without it every check is UPDATE_NO_SOURCE (503) */
  sourceUrl: string | undefined
  timeoutMs: number
  currentVersion: string
  build: BuildInfo
  cacheMs?: number
  now?: () => number
  fetch?: Fetch
}

export class UpdateChecker {
  private cached: { at: number, answer: UpdateCheck } | undefined
  private inFlight: Promise<UpdateCheck> | undefined
  private readonly now: () => number

  constructor (private readonly opts: UpdateCheckerOptions) {
    this.now = opts.now ?? Date.now
  }

  async check (): Promise<UpdateCheck> {
    const sourceUrl = this.opts.sourceUrl
    if (sourceUrl === undefined) throw new KithError('UPDATE_NO_SOURCE', 'no release source is configured (SVC_UPDATE_SOURCE_URL)')
    if (this.cached !== undefined && this.now() - this.cached.at < (this.opts.cacheMs ?? UPDATE_CHECK_CACHE_MS)) return this.cached.answer
    this.inFlight ??= this.ask(sourceUrl).finally(() => { this.inFlight = undefined })
    return await this.inFlight
  }

  private async ask (sourceUrl: string): Promise<UpdateCheck> {
    const feed = await readReleaseFeed(sourceUrl, { timeoutMs: this.opts.timeoutMs, ...(this.opts.fetch !== undefined ? { fetch: this.opts.fetch } : {}) })
    const at = this.now()
    const newest = newestRelease(feed)
    const answer: UpdateCheck = {
      current: this.opts.build,
      ...(newest !== undefined
        ? {
            latest: {
              tag: releaseTag(newest),
              version: newest.version,
              ...(newest.commit !== undefined ? { commit: newest.commit } : {}),
              url: displayUrl(newest.url),
              published_at: newest.published_at,
              sha256: newest.sha256,
              ...(newest.notes !== undefined ? { notes: newest.notes } : {})
            }
          }
        : {}),
      update_available: newest !== undefined && compareVersions(newest.version, this.opts.currentVersion) > 0,
      checked_at: new Date(at).toISOString(),
      source: displayUrl(sourceUrl)
    }
    this.cached = { at, answer }
    return answer
  }
}
