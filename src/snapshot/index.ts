/**
 * State snapshots: the whole state at one height in chunks, checked against the state hash in a
 * header the validators signed (docs/protocol.md § 5.5). Files for backups; the node's own,
 * taken every `--snapshot-interval` blocks and offered to peers (service.ts); and state sync,
 * which builds a new node's store from the chunks its peers offer (sync.ts).
 */
export { exportSnapshot, importSnapshot, type SnapshotSummary } from './file.js'
export {
  CHUNK_TARGET_BYTES, ChunkBuilder, MAX_CHUNK_BYTES, MAX_MANIFEST_BYTES, SNAPSHOT_FORMAT, SnapshotManifestSchema, buildManifest, chunkInfos, entryLine, sumOfChunks, verifyChunk, verifyManifest,
  type ChunkInfo, type SnapshotManifest, type TrustOptions
} from './format.js'
export { isSnapshotRequest, type SnapshotOffer } from './protocol.js'
export { DEFAULT_SERVE_LIMITS, SNAPSHOT_DIR, SnapshotService, type ServeLimits, type SnapshotServiceOptions } from './service.js'
export { StateSync, type StateSyncOptions, type StateSyncResult, type SyncNetwork } from './sync.js'
