import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { KithError } from '../../../src/errors/index.js'
import { ReleaseFeedSchema, UpdateChecker, newestRelease, readReleaseFeed, type BuildInfo } from '../../../src/release/index.js'
import { ReleaseSource } from '../../helpers/release-source.js'

const SHA = 'ab'.repeat(32)
const release = (version: string, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ version, published_at: '2026-01-02T03:04:05Z', url: `kith-${version}.tar.gz`, sha256: SHA, ...extra })

function failsWith (code: string, pattern: RegExp) {
  return (err: unknown): boolean => {
    assert.ok(err instanceof KithError, String(err))
    assert.equal(err.code, code)
    assert.match(err.message, pattern)
    return true
  }
}

describe('release feed validation', () => {
  test('a feed of releases with semver, date, artifact URL and sha256 is valid; unknown members are ignored', () => {
    const feed = ReleaseFeedSchema.parse({ releases: [release('1.2.3', { notes: 'fixes', commit: 'abcdef1', extra: true })], generator: 'ci' })
    assert.equal(feed.releases[0].version, '1.2.3')
    assert.equal('extra' in feed.releases[0], false)
  })

  test('each required member is checked', () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [release('1.2'), /version/],
      [release('1.2.3', { sha256: 'xyz' }), /sha256/],
      [release('1.2.3', { sha256: SHA.toUpperCase() }), /sha256/],
      [release('1.2.3', { published_at: 'yesterday' }), /published_at/],
      [release('1.2.3', { url: '' }), /url/],
      [{ version: '1.2.3', published_at: '2026-01-02T03:04:05Z', url: 'a' }, /sha256/]
    ]
    for (const [entry, path] of cases) {
      const result = ReleaseFeedSchema.safeParse({ releases: [entry] })
      assert.equal(result.success, false, JSON.stringify(entry))
      assert.match(result.error?.issues.map((i) => i.path.join('.')).join(' ') ?? '', path)
    }
    assert.equal(ReleaseFeedSchema.safeParse([release('1.2.3')]).success, false, 'a bare array is not a feed')
  })

  test('the newest release is chosen by semver precedence, not feed order', () => {
    const feed = ReleaseFeedSchema.parse({ releases: [release('1.10.0'), release('2.0.0-rc.1'), release('1.9.0')] })
    assert.equal(newestRelease(feed)?.version, '2.0.0-rc.1')
    assert.equal(newestRelease({ releases: [] }), undefined)
  })
})

describe('reading a release source', () => {
  const source = new ReleaseSource()
  before(async () => { await source.start() })
  after(async () => { await source.stop() })

  test('artifact URLs are resolved against the feed URL', async () => {
    source.answers.set('/feeds/stable.json', { json: { releases: [release('1.0.0'), release('1.1.0', { url: 'https://example.org/k.tar.gz' })] } })
    const feed = await readReleaseFeed(`${source.url}/feeds/stable.json`, { timeoutMs: 5000 })
    assert.equal(feed.releases[0].url, `${source.url}/feeds/kith-1.0.0.tar.gz`)
    assert.equal(feed.releases[1].url, 'https://example.org/k.tar.gz')
  })

  test('an error status, garbage, an invalid feed, a non-http artifact URL and silence are UPDATE_SOURCE_FAILED', async () => {
    source.answers.set('/500', { status: 500 })
    source.answers.set('/garbage', { body: '<html>not a feed</html>', contentType: 'text/html' })
    source.answers.set('/invalid', { json: { releases: [release('one')] } })
    source.answers.set('/file-url', { json: { releases: [release('1.0.0', { url: 'file:///etc/passwd' })] } })
    source.answers.set('/hang', { hang: true })
    await assert.rejects(readReleaseFeed(`${source.url}/500`, { timeoutMs: 5000 }), failsWith('UPDATE_SOURCE_FAILED', /HTTP 500/))
    await assert.rejects(readReleaseFeed(`${source.url}/garbage`, { timeoutMs: 5000 }), failsWith('UPDATE_SOURCE_FAILED', /not JSON/))
    await assert.rejects(readReleaseFeed(`${source.url}/invalid`, { timeoutMs: 5000 }), failsWith('UPDATE_SOURCE_FAILED', /releases\.0\.version/))
    await assert.rejects(readReleaseFeed(`${source.url}/file-url`, { timeoutMs: 5000 }), failsWith('UPDATE_SOURCE_FAILED', /http/))
    await assert.rejects(readReleaseFeed(`${source.url}/hang`, { timeoutMs: 200 }), failsWith('UPDATE_SOURCE_FAILED', /did not answer within 200 ms/))
  })

  test('a feed over the size bound is refused', async () => {
    source.answers.set('/huge', { body: JSON.stringify({ releases: [], pad: 'x'.repeat(2 * 1024 * 1024) }), contentType: 'application/json' })
    await assert.rejects(readReleaseFeed(`${source.url}/huge`, { timeoutMs: 5000 }), failsWith('UPDATE_SOURCE_FAILED', /larger than/))
  })
})

describe('update check', () => {
  const build: BuildInfo = { tag: 'v1.0.0', commit: 'c'.repeat(40), date: '2026-01-01T00:00:00.000Z', dirty: 'false' }
  const source = new ReleaseSource()
  before(async () => { await source.start() })
  after(async () => { await source.stop() })

  test('without a source every check is UPDATE_NO_SOURCE', async () => {
    const checker = new UpdateChecker({ sourceUrl: undefined, timeoutMs: 1000, currentVersion: '1.0.0', build })
    await assert.rejects(checker.check(), failsWith('UPDATE_NO_SOURCE', /SVC_UPDATE_SOURCE_URL/))
  })

  test('reports the newest release, caches the answer for the cache time, and hides credentials of the source', async () => {
    let now = 1_000_000
    source.answers.set('/feed.json', { json: { releases: [release('1.0.0'), release('1.1.0', { notes: 'new' })] } })
    const sourceUrl = `http://user:secret@${source.url.slice('http://'.length)}/feed.json?token=t`
    const checker = new UpdateChecker({ sourceUrl, timeoutMs: 5000, currentVersion: '1.0.0', build, cacheMs: 60_000, now: () => now })
    const first = await checker.check()
    assert.equal(first.update_available, true)
    assert.equal(first.latest?.version, '1.1.0')
    assert.equal(first.latest?.tag, 'v1.1.0')
    assert.equal(first.latest?.notes, 'new')
    assert.deepEqual(first.current, build)
    assert.equal(first.checked_at, new Date(1_000_000).toISOString())
    assert.equal(first.source, `${source.url}/feed.json`)

    source.answers.set('/feed.json', { json: { releases: [release('1.0.0')] } })
    now += 59_999
    assert.equal(await checker.check(), first, 'inside the cache time the source is not asked again')
    now += 1
    const second = await checker.check()
    assert.equal(second.update_available, false, 'the node is at the newest release')
    assert.equal(second.latest?.version, '1.0.0')
    assert.equal(source.hits.get('/feed.json'), 2)
  })

  test('concurrent checks share one request; failures are not cached', async () => {
    source.answers.set('/shared.json', { json: { releases: [] } })
    const checker = new UpdateChecker({ sourceUrl: `${source.url}/shared.json`, timeoutMs: 5000, currentVersion: '1.0.0', build })
    const answers = await Promise.all([checker.check(), checker.check(), checker.check()])
    assert.equal(source.hits.get('/shared.json'), 1)
    assert.equal(answers[0].latest, undefined)
    assert.equal(answers[0].update_available, false)

    source.answers.set('/flaky.json', { status: 503 })
    const flaky = new UpdateChecker({ sourceUrl: `${source.url}/flaky.json`, timeoutMs: 5000, currentVersion: '1.0.0', build })
    await assert.rejects(flaky.check(), failsWith('UPDATE_SOURCE_FAILED', /HTTP 503/))
    source.answers.set('/flaky.json', { json: { releases: [release('1.0.1')] } })
    assert.equal((await flaky.check()).update_available, true)
  })
})
