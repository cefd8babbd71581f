/** The node's version and build metadata, read once from package.json and the environment. */
import { readFileSync } from 'node:fs'

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }

export const NODE_VERSION = pkg.version
/** Changes only when the wire protocol breaks (spec, "Versioning"). */
export const PROTOCOL_VERSION = 1

export interface BuildInfo {
  tag: string
  commit?: string
  date?: string
  dirty?: string
}

export const BUILD: BuildInfo = {
  tag: `v${pkg.version}`,
  ...(process.env.KITH_BUILD_COMMIT !== undefined ? { commit: process.env.KITH_BUILD_COMMIT } : {}),
  ...(process.env.KITH_BUILD_DATE !== undefined ? { date: process.env.KITH_BUILD_DATE } : {})
}
