/**
 * Wire forms of versioning: the build stamp, the release feed a release source serves
 * (docs/operating.md), and the answer of GET /api/update-check. One schema each; the TypeScript
 * types, the validation of what a source sends and the OpenAPI document all come from these.
 */
import { z } from 'zod'
import { isSemVer } from './semver.js'

/** What `npm run build` stamps into dist/build-info.json (git describe, commit, its date, a dirty tree). */
export const BuildInfoSchema = z.object({
  tag: z.string().meta({ description: '`git describe --tags` of the build, or v<node_version> without git' }),
  commit: z.string().optional().meta({ description: 'full commit hash built' }),
  date: z.string().optional().meta({ description: 'commit date, ISO 8601 UTC' }),
  dirty: z.enum(['true', 'false']).optional().meta({ description: '"true" when tracked files differed from the commit at build time' })
}).meta({ id: 'BuildInfo' })
export type BuildInfo = z.output<typeof BuildInfoSchema>

const SemVerString = z.string().max(256).refine(isSemVer, 'must be a semantic version MAJOR.MINOR.PATCH[-PRE][+BUILD]')
const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters (sha256)')

/** One release in a release feed. Unknown members are ignored. */
export const ReleaseSchema = z.object({
  version: SemVerString,
  tag: z.string().min(1).max(256).optional().meta({ description: 'git tag; v<version> when absent' }),
  commit: z.string().regex(/^[0-9a-f]{7,64}$/, 'must be a hex commit hash').optional(),
  published_at: z.iso.datetime({ offset: true }).meta({ description: 'ISO 8601 date and time' }),
  url: z.string().min(1).max(4096).meta({ description: 'the artifact (a .tar.gz), absolute or relative to the feed URL' }),
  sha256: Sha256Hex.meta({ description: 'sha256 of the artifact, hex' }),
  notes: z.string().max(65_536).optional()
}).meta({ id: 'Release' })
export type Release = z.output<typeof ReleaseSchema>

export const ReleaseFeedSchema = z.object({
  releases: z.array(ReleaseSchema).max(10_000)
}).meta({ id: 'ReleaseFeed' })
export type ReleaseFeed = z.output<typeof ReleaseFeedSchema>

export const LatestReleaseSchema = z.object({
  tag: z.string(),
  version: z.string(),
  commit: z.string().optional(),
  url: z.string().optional().meta({ description: 'absolute artifact URL' }),
  published_at: z.string().optional(),
  sha256: z.string().optional(),
  notes: z.string().optional()
}).meta({ id: 'LatestRelease' })

export const UpdateCheckSchema = z.object({
  current: BuildInfoSchema,
  latest: LatestReleaseSchema.optional().meta({ description: 'the newest release of the feed; absent when the feed lists none' }),
  update_available: z.boolean().meta({ description: 'latest.version is newer (semver precedence) than this node_version' }),
  checked_at: z.string().meta({ description: 'when the release source was read, ISO 8601 UTC (answers are cached briefly)' }),
  source: z.string().optional().meta({ description: 'the release source, without credentials or query' })
}).meta({ id: 'UpdateCheck' })
export type UpdateCheck = z.output<typeof UpdateCheckSchema>
