/**
 * The operator's update tool behind `kith update` (never part of the HTTP interface). It reads
 * the release feed, picks the newest release, refuses a major-version jump unless allowed,
 * downloads the artifact, verifies its sha256 before anything else touches it, unpacks it into
 * DIR/versions/<version>/ and switches the DIR/current symlink to it in one rename. Nothing it
 * fetched is run. Layout and procedure: docs/operating.md.
 */
import { execFile } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createWriteStream } from 'node:fs'
import { lstat, mkdir, readdir, readlink, rename, rm, stat, symlink } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { promisify } from 'node:util'
import { KithError } from '../errors/index.js'
import { newestRelease, readReleaseFeed, releaseTag, requestTarget, displayUrl, type Fetch } from './release-feed.js'
import { compareVersions, isMajorJump, isSemVer } from './semver.js'

const execFileP = promisify(execFile)

/** A release tarball of a Node service with its node_modules is tens of MB; 1 GiB bounds a runaway download. */
export const MAX_ARTIFACT_BYTES = 1024 * 1024 * 1024
export const DOWNLOAD_TIMEOUT_MS = 10 * 60_000
export const VERSIONS_DIR = 'versions'
export const CURRENT_LINK = 'current'

export interface UpdateOptions {
  sourceUrl: string
  /** the install root holding versions/ and current */
  dir: string
  allowMajor: boolean
  dryRun: boolean
  /** the version assumed installed when DIR/current does not name one (the running kith's) */
  runningVersion: string
  timeoutMs: number
  fetch?: Fetch
}

export interface UpdateReport {
  action: 'up-to-date' | 'would-install' | 'installed'
  current: string
  latest?: string
  tag?: string
  url?: string
  sha256?: string
  /** where the release is (installed) or would be unpacked */
  path?: string
}

/** The version DIR/current points to (versions/<version>), or undefined. */
export async function installedVersion (dir: string): Promise<string | undefined> {
  try {
    const target = basename(await readlink(join(dir, CURRENT_LINK)))
    return isSemVer(target) ? target : undefined
  } catch {
    return undefined
  }
}

export async function runUpdate (opts: UpdateOptions): Promise<UpdateReport> {
  const feed = await readReleaseFeed(opts.sourceUrl, { timeoutMs: opts.timeoutMs, ...(opts.fetch !== undefined ? { fetch: opts.fetch } : {}) })
  const current = await installedVersion(opts.dir) ?? opts.runningVersion
  const newest = newestRelease(feed)
  if (newest === undefined || compareVersions(newest.version, current) <= 0) {
    return { action: 'up-to-date', current, ...(newest !== undefined ? { latest: newest.version } : {}) }
  }
  if (isMajorJump(current, newest.version) && !opts.allowMajor) {
    throw new KithError('UPDATE_MAJOR_REFUSED',
      `${newest.version} is a major-version jump from ${current}; read its release notes, then run again with --allow-major`)
  }
  const target = join(opts.dir, VERSIONS_DIR, newest.version)
  const report: UpdateReport = { action: 'would-install', current, latest: newest.version, tag: releaseTag(newest), url: displayUrl(newest.url), sha256: newest.sha256, path: target }
  if (opts.dryRun) return report

  const versions = join(opts.dir, VERSIONS_DIR)
  await mkdir(versions, { recursive: true })
  const suffix = `${newest.version}-${randomBytes(4).toString('hex')}`
  const artifact = join(versions, `.download-${suffix}.tar.gz`)
  const incoming = join(versions, `.incoming-${suffix}`)
  try {
    const digest = await download(newest.url, artifact, opts.fetch ?? fetch)
    if (digest !== newest.sha256) {
      throw new KithError('UPDATE_CHECKSUM_MISMATCH', `the artifact's sha256 is ${digest}, the release feed says ${newest.sha256}; nothing was installed`)
    }
    if (!await exists(target)) {
      await mkdir(incoming)
      await unpack(artifact, incoming)
      await rename(await releaseRoot(incoming), target)
    }
    await switchCurrent(opts.dir, newest.version)
  } finally {
    await rm(artifact, { force: true })
    await rm(incoming, { recursive: true, force: true })
  }
  return { ...report, action: 'installed' }
}

/** Streams `url` into `file`, bounded in size and time; resolves with the sha256 (hex) of what was written. */
async function download (url: string, file: string, doFetch: Fetch): Promise<string> {
  const signal = AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS)
  let res: Response
  try {
    const { href, headers } = requestTarget(url)
    res = await doFetch(href, { signal, headers, redirect: 'follow' })
  } catch (err) {
    throw new KithError('UPDATE_SOURCE_FAILED', `the artifact ${displayUrl(url)} could not be fetched: ${String(err)}`)
  }
  if (!res.ok || res.body === null) throw new KithError('UPDATE_SOURCE_FAILED', `the artifact ${displayUrl(url)} answered HTTP ${res.status}`)
  const hash = createHash('sha256')
  const out = createWriteStream(file, { mode: 0o600 })
  const reader = res.body.getReader()
  let size = 0
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      size += next.value.byteLength
      if (size > MAX_ARTIFACT_BYTES) {
        await reader.cancel()
        throw new KithError('UPDATE_SOURCE_FAILED', `the artifact is larger than ${MAX_ARTIFACT_BYTES} bytes`)
      }
      hash.update(next.value)
      if (!out.write(next.value)) await once(out, 'drain')
    }
  } finally {
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => { if (err) reject(err); else resolve() }))
  }
  return hash.digest('hex')
}

/** tar refuses absolute member names and `..` by default; ownership is not restored from the archive. */
async function unpack (artifact: string, into: string): Promise<void> {
  try {
    await execFileP('tar', ['-xzf', artifact, '-C', into, '--no-same-owner'])
  } catch (err) {
    throw new KithError('UPDATE_SOURCE_FAILED', `the artifact is not a gzip tarball tar can unpack: ${String((err as { stderr?: string }).stderr ?? err).trim()}`)
  }
}

/** A tarball holding a single top-level directory (kith-1.2.3/…) is that directory; otherwise the tree itself. */
async function releaseRoot (incoming: string): Promise<string> {
  const entries = await readdir(incoming, { withFileTypes: true })
  if (entries.length === 1 && entries[0].isDirectory()) return join(incoming, entries[0].name)
  return incoming
}

/** Points DIR/current at versions/<version>: a new link renamed over the old one, so it is never missing. */
async function switchCurrent (dir: string, version: string): Promise<void> {
  const link = join(dir, CURRENT_LINK)
  const existing = await lstat(link).catch(() => undefined)
  if (existing !== undefined && !existing.isSymbolicLink()) throw new KithError('BAD_REQUEST', `${link} exists and is not a symlink; move it away first`)
  const fresh = join(dir, `.current-${randomBytes(4).toString('hex')}`)
  await symlink(join(VERSIONS_DIR, version), fresh)
  await rename(fresh, link)
}

async function exists (path: string): Promise<boolean> {
  return await stat(path).then(() => true, () => false)
}
