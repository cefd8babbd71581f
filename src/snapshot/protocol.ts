/**
 * The snapshot requests peers make of each other on the chain's request protocol
 * (docs/protocol.md § 5.6): what snapshots a node offers, one snapshot's manifest, one chunk.
 * A manifest answers as the JSON line it is in the file, a chunk as its raw bytes (the lines the
 * manifest's lanes cover), so nothing is encoded twice.
 */
import { z } from 'zod'
import { HashSchema } from '../chain/index.js'
import { MAX_CHUNKS } from './format.js'

const Height = z.number().int().min(1)

export const SnapshotRequestSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('snapshots') }),
  z.object({ type: z.literal('snapshot_manifest'), height: Height }),
  z.object({ type: z.literal('snapshot_chunk'), height: Height, index: z.number().int().min(0).max(MAX_CHUNKS - 1) })
])
export type SnapshotRequest = z.output<typeof SnapshotRequestSchema>

export const SnapshotOfferSchema = z.object({
  height: Height,
  block_hash: HashSchema,
  chunks: z.number().int().min(1).max(MAX_CHUNKS),
  /** bytes of the manifest line, so a peer can tell it fits one response */
  manifest_bytes: z.number().int().min(1)
})
export type SnapshotOffer = z.output<typeof SnapshotOfferSchema>

/** The answer to `snapshots`: newest first; a node keeps a few. */
export const SnapshotOffersSchema = z.object({ snapshots: z.array(SnapshotOfferSchema).max(16) })

/** Whether a decoded request belongs to this protocol (the node routes it here). */
export function isSnapshotRequest (request: unknown): boolean {
  const type = (request as { type?: unknown } | null)?.type
  return typeof type === 'string' && type.startsWith('snapshot')
}
