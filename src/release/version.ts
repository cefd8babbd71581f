/**
 * The node's version and build metadata: the version from package.json, the build stamped by
 * `npm run build` into dist/build-info.json (stamp-build.ts). A tree compiled
 * without the stamp (plain `tsc`) reports only the tag v<version>.
 */
import { readFileSync } from 'node:fs'
import { BuildInfoSchema, type BuildInfo } from './schemas.js'

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }

export const NODE_VERSION = pkg.version
/** Changes only when the wire protocol breaks (spec, "Versioning"). */
export const PROTOCOL_VERSION = 1
/** dist/build-info.json, next to dist/src/ where this module runs from. */
export const BUILD_INFO_URL = new URL('../../build-info.json', import.meta.url)

export type { BuildInfo }

function readStampedBuild (): BuildInfo {
  let raw: string
  try {
    raw = readFileSync(BUILD_INFO_URL, 'utf8')
  } catch {
    return { tag: `v${NODE_VERSION}` }
  }
  const parsed = BuildInfoSchema.safeParse(JSON.parse(raw))
  if (!parsed.success) throw new Error(`${BUILD_INFO_URL.pathname} is not a build stamp; run \`npm run build\` again`)
  return parsed.data
}

export const BUILD: BuildInfo = readStampedBuild()
