/**
 * The build stamp: `npm run build` runs this after tsc to write dist/build-info.json, which
 * version.ts reads, so /api/well-known-version reports the build that is running rather
 * than whatever the environment says at start. Sources, first that answers:
 * KITH_BUILD_TAG / _COMMIT / _DATE / _DIRTY (a build from a tarball or a Docker context without
 * .git), then git, then just v<package version>.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { BuildInfo } from './schemas.js'

/** Output of `git args` in `dir`, or undefined when git is missing or fails (no repository, no tag). */
function git (dir: string, args: string[]): string | undefined {
  try {
    return execFileSync('git', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    return undefined
  }
}

export function buildInfoOf (root: string, env: NodeJS.ProcessEnv = process.env): BuildInfo {
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version
  // an empty value (a Docker ARG not passed) counts as unset
  const given = (name: string): string | undefined => env[name] === '' ? undefined : env[name]
  // only the repository whose top is this tree: not one it happens to be unpacked inside
  const ownRepository = git(root, ['rev-parse', '--show-toplevel']) === realpathSync(root)
  const commit = given('KITH_BUILD_COMMIT') ?? (ownRepository ? git(root, ['rev-parse', 'HEAD']) : undefined)
  const fromGit = commit !== undefined && given('KITH_BUILD_COMMIT') === undefined
  const commitDate = fromGit ? git(root, ['show', '-s', '--format=%cI', 'HEAD']) : undefined
  // Untracked files are left out: a symlinked node_modules or a stray log is not a change to the code.
  const status = fromGit ? git(root, ['status', '--porcelain', '--untracked-files=no']) : undefined
  const date = given('KITH_BUILD_DATE') ?? (commitDate !== undefined ? new Date(commitDate).toISOString() : undefined)
  const dirty = given('KITH_BUILD_DIRTY') ?? (status !== undefined ? String(status !== '') : undefined)
  return {
    tag: given('KITH_BUILD_TAG') ?? (fromGit ? git(root, ['describe', '--tags']) : undefined) ?? `v${version}`,
    ...(commit !== undefined ? { commit } : {}),
    ...(date !== undefined ? { date } : {}),
    ...(dirty === 'true' || dirty === 'false' ? { dirty } : {})
  }
}

export function writeBuildInfo (root: string, file: string, env: NodeJS.ProcessEnv = process.env): BuildInfo {
  const info = buildInfoOf(root, env)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, JSON.stringify(info, null, 2) + '\n')
  return info
}

// Run as a script (`node dist/src/release/stamp-build.js`): the repository root is three levels up.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
  const info = writeBuildInfo(root, join(root, 'dist', 'build-info.json'))
  console.log(`build stamp: ${JSON.stringify(info)}`)
}
