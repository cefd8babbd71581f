/**
 * Semantic versions (semver.org 2.0.0): parsing and precedence. Enough for choosing the newest
 * release and guarding against major-version jumps; ranges are not needed.
 */

export interface SemVer {
  major: number
  minor: number
  patch: number
  /** dot-separated pre-release identifiers, e.g. ['alpha', '1']; empty for a release */
  prerelease: string[]
}

// MAJOR.MINOR.PATCH without leading zeros, optional -pre-release and +build metadata
const SEMVER_RE = /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/

/** The version `text` names (a leading `v` is allowed), or undefined when it is not semver. */
export function parseSemVer (text: string): SemVer | undefined {
  const match = SEMVER_RE.exec(text)
  if (match === null) return undefined
  const numbers = [match[1], match[2], match[3]].map(Number)
  if (!numbers.every(Number.isSafeInteger)) return undefined
  return { major: numbers[0], minor: numbers[1], patch: numbers[2], prerelease: match[4] === undefined ? [] : match[4].split('.') }
}

export function isSemVer (text: string): boolean {
  return parseSemVer(text) !== undefined
}

function compareIdentifiers (a: string, b: string): number {
  const aNumeric = /^\d+$/.test(a)
  const bNumeric = /^\d+$/.test(b)
  if (aNumeric && bNumeric) return Math.sign(Number(a) - Number(b))
  // numeric identifiers rank below alphanumeric ones
  if (aNumeric !== bNumeric) return aNumeric ? -1 : 1
  return a < b ? -1 : a > b ? 1 : 0
}

/** Precedence: negative when a < b, 0 when equal (build metadata is ignored), positive when a > b. */
export function compareSemVer (a: SemVer, b: SemVer): number {
  const core = Math.sign(a.major - b.major) || Math.sign(a.minor - b.minor) || Math.sign(a.patch - b.patch)
  if (core !== 0) return core
  // a pre-release ranks below the release it leads up to
  if (a.prerelease.length === 0 || b.prerelease.length === 0) return Math.sign(b.prerelease.length - a.prerelease.length)
  for (let i = 0; i < Math.min(a.prerelease.length, b.prerelease.length); i++) {
    const order = compareIdentifiers(a.prerelease[i], b.prerelease[i])
    if (order !== 0) return order
  }
  return Math.sign(a.prerelease.length - b.prerelease.length)
}

/** compareSemVer over version strings; throws on one that is not semver. */
export function compareVersions (a: string, b: string): number {
  return compareSemVer(mustParse(a), mustParse(b))
}

/** True when going from `from` to `to` changes the major version (the update tool's guard). */
export function isMajorJump (from: string, to: string): boolean {
  return mustParse(from).major !== mustParse(to).major
}

function mustParse (text: string): SemVer {
  const parsed = parseSemVer(text)
  if (parsed === undefined) throw new RangeError(`"${text}" is not a semantic version (MAJOR.MINOR.PATCH)`)
  return parsed
}
