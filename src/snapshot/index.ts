/**
 * State snapshots: the whole state at one height in chunks, checked against the state hash in a
 * header the validators signed (docs/protocol.md § 5.5). Files for backups today; the same
 * manifest and chunks are what peers will offer for state sync.
 */
export { exportSnapshot, importSnapshot, type SnapshotSummary } from './file.js'
export {
  CHUNK_TARGET_BYTES, ChunkBuilder, MAX_CHUNK_BYTES, MAX_MANIFEST_BYTES, SNAPSHOT_FORMAT, SnapshotManifestSchema, buildManifest, chunkInfos, entryLine, sumOfChunks, verifyChunk, verifyManifest,
  type ChunkInfo, type SnapshotManifest, type TrustOptions
} from './format.js'
