/**
 * Versioning and releases, the only door into src/release: this node's version, protocol version
 * and build (version.ts), semantic versions, the build stamp,
 * the release feed a release source serves, the update check behind GET /api/update-check, and
 * the operator's update tool behind `kith update`. Formats and procedures: docs/operating.md.
 */
export { parseSemVer, isSemVer, compareSemVer, compareVersions, isMajorJump, type SemVer } from './semver.js'
export {
  BuildInfoSchema, ReleaseSchema, ReleaseFeedSchema, LatestReleaseSchema, UpdateCheckSchema,
  type BuildInfo, type Release, type ReleaseFeed, type UpdateCheck
} from './schemas.js'
export { readReleaseFeed, newestRelease, releaseTag, displayUrl, parseSourceUrl, MAX_FEED_BYTES, DEFAULT_SOURCE_TIMEOUT_MS, type Fetch, type FeedReadOptions } from './release-feed.js'
export { UpdateChecker, UPDATE_CHECK_CACHE_MS, type UpdateCheckerOptions } from './check.js'
export { runUpdate, installedVersion, MAX_ARTIFACT_BYTES, DOWNLOAD_TIMEOUT_MS, VERSIONS_DIR, CURRENT_LINK, type UpdateOptions, type UpdateReport } from './install.js'
export { NODE_VERSION, PROTOCOL_VERSION, BUILD_INFO_URL, BUILD } from './version.js'
