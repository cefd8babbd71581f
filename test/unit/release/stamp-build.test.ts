import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildInfoOf, writeBuildInfo } from '../../../src/release/stamp-build.js'
import { BuildInfoSchema } from '../../../src/release/index.js'

const NO_BUILD_ENV = {}

describe('build stamp', () => {
  const dirs: string[] = []
  const tempDir = async (): Promise<string> => {
    const dir = await mkdtemp(join(tmpdir(), 'kith-stamp-'))
    dirs.push(dir)
    await writeFile(join(dir, 'package.json'), JSON.stringify({ version: '3.4.5' }))
    return dir
  }
  after(async () => { await Promise.all(dirs.map(async (d) => await rm(d, { recursive: true, force: true }))) })

  test('without git (not a repository) the tag is v<package version> and nothing else is claimed', async () => {
    const dir = await tempDir()
    assert.deepEqual(buildInfoOf(dir, NO_BUILD_ENV), { tag: 'v3.4.5' })
  })

  test('in a repository: describe, the full commit, its date in UTC, and whether tracked files changed', async () => {
    const dir = await tempDir()
    const git = (...args: string[]): string => execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim()
    git('init', '-q')
    git('-c', 'user.name=t', '-c', 'user.email=t@example.org', 'add', 'package.json')
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.org', 'commit', '-qm', 'one'],
      { cwd: dir, env: { ...process.env, GIT_COMMITTER_DATE: '2026-03-04T05:06:07+02:00', GIT_AUTHOR_DATE: '2026-03-04T05:06:07+02:00' } })
    git('tag', 'v3.4.5')
    const commit = git('rev-parse', 'HEAD')
    await writeFile(join(dir, 'untracked.log'), 'not part of the build')
    assert.deepEqual(buildInfoOf(dir, NO_BUILD_ENV), { tag: 'v3.4.5', commit, date: '2026-03-04T03:06:07.000Z', dirty: 'false' })

    await writeFile(join(dir, 'package.json'), JSON.stringify({ version: '3.4.5', edited: true }))
    const file = join(dir, 'dist', 'build-info.json')
    writeBuildInfo(dir, file, NO_BUILD_ENV)
    const stamped = BuildInfoSchema.parse(JSON.parse(await readFile(file, 'utf8')))
    assert.equal(stamped.dirty, 'true')
    assert.equal(stamped.commit, commit)
  })

  test('KITH_BUILD_* (a build without .git, e.g. in Docker) win', async () => {
    const dir = await tempDir()
    const env = { KITH_BUILD_TAG: 'v9.9.9', KITH_BUILD_COMMIT: 'f'.repeat(40), KITH_BUILD_DATE: '2026-01-01T00:00:00Z', KITH_BUILD_DIRTY: 'false' }
    assert.deepEqual(buildInfoOf(dir, env), { tag: 'v9.9.9', commit: 'f'.repeat(40), date: '2026-01-01T00:00:00Z', dirty: 'false' })
  })
})
