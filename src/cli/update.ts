/**
 * `kith update`: the operator's update tool (src/release/install.ts, docs/operating.md). It reads
 * the release feed of --source (or SVC_UPDATE_SOURCE_URL), installs the newest release into
 * --dir and prints a JSON report. Restarting the node on the new version is the operator's step.
 */
import { basename, dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Command } from 'commander'
import { DEFAULT_SOURCE_TIMEOUT_MS, NODE_VERSION, VERSIONS_DIR, parseSourceUrl, runUpdate } from '../release/index.js'

interface UpdateFlags {
  source?: string
  dir?: string
  allowMajor?: boolean
  dryRun?: boolean
  timeoutMs: string
}

/** When this kith runs from DIR/versions/<version>/ (an install made by `kith update`), DIR. */
function installRootOfThisKith (): string | undefined {
  // dist/src/cli/update.js -> the release root four levels up
  const releaseRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
  return basename(dirname(releaseRoot)) === VERSIONS_DIR ? dirname(dirname(releaseRoot)) : undefined
}

async function update (flags: UpdateFlags): Promise<void> {
  const rawSource = flags.source ?? process.env.SVC_UPDATE_SOURCE_URL
  if (rawSource === undefined || rawSource === '') throw new Error('update needs a release source: --source URL or SVC_UPDATE_SOURCE_URL')
  const dir = flags.dir ?? installRootOfThisKith()
  if (dir === undefined) throw new Error(`update needs --dir DIR (the install root holding ${VERSIONS_DIR}/ and current)`)
  const timeoutMs = Number(flags.timeoutMs)
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) throw new Error(`--timeout-ms expects a whole number above 0, got "${flags.timeoutMs}"`)
  const report = await runUpdate({
    sourceUrl: parseSourceUrl(rawSource),
    dir: resolve(dir),
    allowMajor: flags.allowMajor === true,
    dryRun: flags.dryRun === true,
    runningVersion: NODE_VERSION,
    timeoutMs
  })
  console.log(JSON.stringify(report, null, 2))
}

export function registerUpdateCommand (program: Command): void {
  program.command('update')
    .description('install the newest release of the release feed into DIR/versions/<version> and point DIR/current at it (checksum verified; refuses a major-version jump without --allow-major)')
    .option('--source <url>', 'release feed URL (default SVC_UPDATE_SOURCE_URL)')
    .option('--dir <dir>', `install root holding ${VERSIONS_DIR}/ and current (default: the root this kith runs from, when it is such an install)`)
    .option('--allow-major', 'allow a jump to a new major version')
    .option('--dry-run', 'only report what would be installed')
    .option('--timeout-ms <n>', 'how long the release source may take to answer the feed', String(DEFAULT_SOURCE_TIMEOUT_MS))
    .action(update)
}
