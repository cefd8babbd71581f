/**
 * `bin/kith update` as an operator runs it, against a local release source serving a feed and
 * real tarballs with their real sha256: a dry run installs nothing, a wrong checksum is refused
 * and leaves nothing behind, a major-version jump needs --allow-major, and an install unpacks the
 * release into DIR/versions/<version> and points DIR/current at it.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, readdir, readlink, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { UpdateReport } from '../../src/release/index.js'
import { KITH_BIN, REPO_ROOT, childEnv } from '../helpers/node-process.js'
import { ReleaseSource, buildReleaseTarball, feedEntry, type BuiltRelease } from '../helpers/release-source.js'

const execFileP = promisify(execFile)
const RUNNING_VERSION = (JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version
const [runningMajor, runningMinor] = RUNNING_VERSION.split('.').map(Number)

interface Run { code: number, report?: UpdateReport, stderr: string }

async function kithUpdate (args: string[], env: Record<string, string> = {}): Promise<Run> {
  try {
    const { stdout, stderr } = await execFileP(KITH_BIN, ['update', ...args], { env: childEnv(env), cwd: REPO_ROOT, timeout: 30_000 })
    return { code: 0, report: JSON.parse(stdout) as UpdateReport, stderr }
  } catch (err) {
    const failed = err as { code?: number, stderr?: string }
    return { code: failed.code ?? -1, stderr: failed.stderr ?? String(err) }
  }
}

describe('kith update', () => {
  const source = new ReleaseSource()
  let minor: BuiltRelease
  let major: BuiltRelease
  let work: string
  const dirs: string[] = []
  const installRoot = async (): Promise<string> => {
    const dir = await mkdtemp(join(work, 'install-'))
    dirs.push(dir)
    return dir
  }
  const feedUrl = (): string => `${source.url}/releases/feed.json`
  const nothingInstalled = async (dir: string): Promise<void> => {
    const left = await readdir(dir)
    const versions = left.includes('versions') ? await readdir(join(dir, 'versions')) : []
    assert.deepEqual({ left, versions }, { left: left.filter((f) => f === 'versions'), versions: [] }, 'no release, no current link, no leftovers')
  }

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'kith-update-'))
    await source.start()
    minor = await buildReleaseTarball(`${runningMajor}.${runningMinor + 1}.0`)
    major = await buildReleaseTarball(`${runningMajor + 1}.0.0`)
    source.answers.set('/releases/minor.tar.gz', { body: minor.tarball })
    source.answers.set('/releases/major.tar.gz', { body: major.tarball })
  })
  after(async () => {
    await source.stop()
    await rm(work, { recursive: true, force: true })
  })

  test('--dry-run reports the newest release and installs nothing', async () => {
    source.answers.set('/releases/feed.json', { json: { releases: [feedEntry(minor, 'minor.tar.gz')] } })
    const dir = await installRoot()
    const run = await kithUpdate(['--dir', dir, '--dry-run'], { SVC_UPDATE_SOURCE_URL: feedUrl() })
    assert.equal(run.code, 0, run.stderr)
    assert.equal(run.report?.action, 'would-install')
    assert.equal(run.report?.current, RUNNING_VERSION)
    assert.equal(run.report?.latest, minor.version)
    assert.equal(run.report?.sha256, minor.sha256)
    assert.equal(source.hits.get('/releases/minor.tar.gz'), undefined, 'the artifact is not even fetched')
    assert.deepEqual(await readdir(dir), [])
  })

  test('an artifact whose sha256 differs from the feed is refused and nothing is installed', async () => {
    const wrong = { ...feedEntry(minor, 'minor.tar.gz'), sha256: major.sha256 }
    source.answers.set('/releases/feed.json', { json: { releases: [wrong] } })
    const dir = await installRoot()
    const run = await kithUpdate(['--source', feedUrl(), '--dir', dir])
    assert.equal(run.code, 1)
    assert.match(run.stderr, new RegExp(`sha256 is ${minor.sha256}, the release feed says ${major.sha256}; nothing was installed`))
    await nothingInstalled(dir)
  })

  test('a major-version jump is refused without --allow-major and installed with it', async () => {
    source.answers.set('/releases/feed.json', { json: { releases: [feedEntry(minor, 'minor.tar.gz'), feedEntry(major, 'major.tar.gz')] } })
    const dir = await installRoot()
    const refused = await kithUpdate(['--source', feedUrl(), '--dir', dir])
    assert.equal(refused.code, 1)
    assert.match(refused.stderr, new RegExp(`${major.version} is a major-version jump from ${RUNNING_VERSION}.*--allow-major`))
    assert.equal(source.hits.get('/releases/major.tar.gz'), undefined)
    await nothingInstalled(dir)

    const allowed = await kithUpdate(['--source', feedUrl(), '--dir', dir, '--allow-major'])
    assert.equal(allowed.code, 0, allowed.stderr)
    assert.equal(allowed.report?.action, 'installed')
    assert.equal(await readlink(join(dir, 'current')), join('versions', major.version))
    assert.equal(await readFile(join(dir, 'current', 'bin', 'RELEASE'), 'utf8'), `kith ${major.version}\n`)
  })

  test('an install unpacks into versions/<version>, switches current, and a second run is up to date', async () => {
    source.answers.set('/releases/feed.json', { json: { releases: [feedEntry(minor, 'minor.tar.gz')] } })
    const dir = await installRoot()
    const run = await kithUpdate(['--source', feedUrl(), '--dir', dir])
    assert.equal(run.code, 0, run.stderr)
    assert.deepEqual(run.report, {
      action: 'installed', current: RUNNING_VERSION, latest: minor.version, tag: `v${minor.version}`,
      url: `${source.url}/releases/minor.tar.gz`, sha256: minor.sha256, path: join(dir, 'versions', minor.version)
    })
    assert.equal(await readlink(join(dir, 'current')), join('versions', minor.version))
    const pkg = JSON.parse(await readFile(join(dir, 'current', 'package.json'), 'utf8')) as { version: string }
    assert.equal(pkg.version, minor.version)
    assert.deepEqual(await readdir(join(dir, 'versions')), [minor.version], 'no download or staging leftovers')

    const again = await kithUpdate(['--source', feedUrl(), '--dir', dir])
    assert.equal(again.code, 0, again.stderr)
    assert.deepEqual(again.report, { action: 'up-to-date', current: minor.version, latest: minor.version })
  })

  test('without a release source or an install root it says what it needs', async () => {
    const noSource = await kithUpdate(['--dir', work])
    assert.equal(noSource.code, 1)
    assert.match(noSource.stderr, /--source URL or SVC_UPDATE_SOURCE_URL/)
    const noDir = await kithUpdate(['--source', feedUrl()])
    assert.equal(noDir.code, 1)
    assert.match(noDir.stderr, /--dir DIR/)
  })
})
