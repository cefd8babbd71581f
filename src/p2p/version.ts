/**
 * Version announcements on the 'version' topic: who a peer is, what it runs and how far its
 * chain is. JSON, checked with one schema before anything reads it.
 */
import { z } from 'zod'
import { decodeJson } from '../validation.js'

export const VersionAnnouncementSchema = z.object({
  peer_id: z.string().min(1).max(128),
  node_version: z.string().max(128),
  protocol_version: z.number().int().min(0),
  height: z.number().int().min(0),
  chain_id: z.string().max(128),
  /** ms since epoch, strictly increasing per sender: keeps announcements distinct for dedupe */
  at: z.number().int().min(0)
})

export type VersionAnnouncement = z.output<typeof VersionAnnouncementSchema>

export function encodeVersion (v: VersionAnnouncement): Uint8Array {
  return Buffer.from(JSON.stringify(v), 'utf8')
}

export function decodeVersion (data: Uint8Array): VersionAnnouncement | undefined {
  if (data.byteLength > 4096) return undefined
  return decodeJson(VersionAnnouncementSchema, data)
}
