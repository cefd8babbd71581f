/**
 * Gossip payloads larger than one part travel as several gossip messages and are put back
 * together before validation. Why: @libp2p/gossipsub 17 cannot send an RPC frame over 4 MiB
 * (its outbound length-prefix encoder keeps it-length-prefixed's default; js-libp2p issue
 * #3427, PR #3486 unmerged), and block proposals may reach ~8 MiB.
 *
 * Every gossip message's data starts with a kind byte:
 *   0x00 whole  | payload
 *   0x01 part   | sha256(payload) (32) | index u16 | total u16 | payload length u32 | bytes
 * Parts of one payload share the hash, total and length. A receiver holds the parts unvalidated
 * (not forwarded) until all arrived and the hash matches, validates the payload once, and
 * reports that one result for every part, so each hop forwards the parts only after it
 * validated the whole.
 *
 * Gossip messages are unsigned (StrictNoSign), so a part names no author. Parts are gathered per
 * propagation source (`via`), the one identity gossipsub authenticated (the Noise handshake of
 * the connection they came on), and never mixed across peers: a bad part is then blamed on the
 * peer that sent it and nobody else, and one peer cannot spoil another's assembly by sending a
 * forged part under the same hash. The price: gossipsub delivers each part once, from whichever
 * peer was first, so if parts of one payload arrive via different peers, no assembly completes;
 * they time out and are ignored (nobody is penalised), and the payload comes by the pulls that
 * keep consensus live anyway (catch-up requests). It is rare: a peer forwards all parts of a
 * payload together once it validated the whole, the origin sends them to its mesh in a row, and
 * since blocks are bounded to 1 MiB of transactions (MAX_BLOCK_BYTES) a proposal fits one part.
 */
import { createHash } from 'node:crypto'

export const KIND_WHOLE = 0
export const KIND_PART = 1
/** payload bytes per part: with the header and protobuf framing well under 4 MiB */
export const PART_BYTES = 3 * 1024 * 1024
export const PART_HEADER_BYTES = 1 + 32 + 2 + 2 + 4

export interface PartHeader {
  hash: Uint8Array
  index: number
  total: number
  length: number
}

export type Decoded =
  | { kind: 'whole', payload: Uint8Array }
  | { kind: 'part', header: PartHeader, bytes: Uint8Array }
  | { kind: 'malformed', reason: string }

function sha256 (data: Uint8Array): Uint8Array {
  return createHash('sha256').update(data).digest()
}

/** gossip messages carrying `payload`: one whole message, or its parts in order */
export function encodeGossip (payload: Uint8Array, partBytes = PART_BYTES): Uint8Array[] {
  if (payload.byteLength <= partBytes) {
    const out = new Uint8Array(1 + payload.byteLength)
    out[0] = KIND_WHOLE
    out.set(payload, 1)
    return [out]
  }
  const hash = sha256(payload)
  const total = Math.ceil(payload.byteLength / partBytes)
  const parts: Uint8Array[] = []
  for (let index = 0; index < total; index++) {
    const bytes = payload.subarray(index * partBytes, Math.min((index + 1) * partBytes, payload.byteLength))
    const out = new Uint8Array(PART_HEADER_BYTES + bytes.byteLength)
    const view = new DataView(out.buffer, out.byteOffset, out.byteLength)
    out[0] = KIND_PART
    out.set(hash, 1)
    view.setUint16(33, index)
    view.setUint16(35, total)
    view.setUint32(37, payload.byteLength)
    out.set(bytes, PART_HEADER_BYTES)
    parts.push(out)
  }
  return parts
}

/** parses a gossip message's data and checks a part's header is self-consistent */
export function decodeGossip (data: Uint8Array, maxPayloadBytes: number, partBytes = PART_BYTES): Decoded {
  if (data.byteLength === 0) return { kind: 'malformed', reason: 'empty message' }
  if (data[0] === KIND_WHOLE) return { kind: 'whole', payload: data.subarray(1) }
  if (data[0] !== KIND_PART) return { kind: 'malformed', reason: `unknown kind ${data[0]}` }
  if (data.byteLength < PART_HEADER_BYTES) return { kind: 'malformed', reason: 'part header truncated' }
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength)
  const header: PartHeader = {
    hash: data.subarray(1, 33),
    index: view.getUint16(33),
    total: view.getUint16(35),
    length: view.getUint32(37)
  }
  const bytes = data.subarray(PART_HEADER_BYTES)
  if (header.length <= partBytes || header.length > maxPayloadBytes) return { kind: 'malformed', reason: `payload length ${header.length} out of range` }
  if (header.total !== Math.ceil(header.length / partBytes)) return { kind: 'malformed', reason: 'part count does not match the length' }
  if (header.index >= header.total) return { kind: 'malformed', reason: 'part index out of range' }
  const expected = header.index < header.total - 1 ? partBytes : header.length - partBytes * (header.total - 1)
  if (bytes.byteLength !== expected) return { kind: 'malformed', reason: 'part size does not match its index' }
  return { kind: 'part', header, bytes }
}

/** one gossip message awaiting the validation result of the payload it is part of */
export interface PendingPart {
  msgId: string
  via: string
}

interface Assembly {
  /** the propagation source every part of this assembly came from */
  peer: string
  header: PartHeader
  parts: Array<Uint8Array | undefined>
  received: number
  pending: PendingPart[]
  deadline: number
}

export type AddResult =
  /** held: report nothing yet */
  | { status: 'held' }
  /** every part is here and the hash matches: validate `payload`, then report for each of `parts` */
  | { status: 'complete', payload: Uint8Array, parts: PendingPart[] }
  /** one peer's parts contradict each other or the hash: reject each of `parts` (all came via that peer) */
  | { status: 'invalid', reason: string, parts: PendingPart[] }
  /** over the memory budget, or the payload was already assembled: ignore this part */
  | { status: 'ignore', reason: string }

export interface AssemblerOptions {
  /** bytes of claimed payload length held at once, over all assemblies */
  maxBytes: number
  /** assemblies held at once per propagation source */
  maxPerPeer: number
  /** an assembly not complete after this long is dropped and its parts ignored */
  timeoutMs: number
}

const DONE_MEMORY = 1024

/**
 * Holds parts per (topic, propagation source, payload hash) until complete; pure, clock passed
 * in. Memory is bounded by `maxBytes` over all peers and `maxPerPeer` assemblies per peer; the
 * peer is authenticated by its connection, so a sender cannot dodge the per-peer cap with new
 * keys (as it could when assemblies were counted per signing author).
 */
export class Assembler {
  private readonly assemblies = new Map<string, Assembly>()
  private readonly perPeer = new Map<string, number>()
  /** recently completed or failed assemblies, so a straggler does not start a new one */
  private readonly done = new Set<string>()
  private heldBytes = 0

  constructor (private readonly opts: AssemblerOptions) {}

  add (topic: string, header: PartHeader, bytes: Uint8Array, part: PendingPart, now: number): AddResult {
    const peer = part.via
    const key = `${topic}|${peer}|${Buffer.from(header.hash).toString('hex')}`
    if (this.done.has(key)) return { status: 'ignore', reason: 'payload already assembled' }
    let a = this.assemblies.get(key)
    if (a === undefined) {
      if (this.heldBytes + header.length > this.opts.maxBytes) return { status: 'ignore', reason: 'assembly memory budget exhausted' }
      if ((this.perPeer.get(peer) ?? 0) >= this.opts.maxPerPeer) return { status: 'ignore', reason: 'too many assemblies from this peer' }
      a = { peer, header, parts: new Array<Uint8Array | undefined>(header.total).fill(undefined), received: 0, pending: [], deadline: now + this.opts.timeoutMs }
      this.assemblies.set(key, a)
      this.perPeer.set(peer, (this.perPeer.get(peer) ?? 0) + 1)
      this.heldBytes += header.length
    }
    a.pending.push(part)
    if (a.header.total !== header.total || a.header.length !== header.length) return this.finish(key, peer, { status: 'invalid', reason: 'parts disagree on total or length', parts: a.pending })
    if (a.parts[header.index] !== undefined) return this.finish(key, peer, { status: 'invalid', reason: 'two different parts with one index', parts: a.pending })
    a.parts[header.index] = bytes
    a.received++
    if (a.received < a.header.total) return { status: 'held' }
    const payload = new Uint8Array(a.header.length)
    let offset = 0
    for (const p of a.parts) {
      if (p === undefined) continue
      payload.set(p, offset)
      offset += p.byteLength
    }
    if (!Buffer.from(sha256(payload)).equals(Buffer.from(a.header.hash))) return this.finish(key, peer, { status: 'invalid', reason: 'payload hash mismatch', parts: a.pending })
    return this.finish(key, peer, { status: 'complete', payload, parts: a.pending })
  }

  /** drops assemblies past their deadline; returns their parts, to be ignored */
  expire (now: number): PendingPart[] {
    const out: PendingPart[] = []
    for (const [key, a] of this.assemblies) {
      if (a.deadline > now) continue
      out.push(...a.pending)
      this.finish(key, a.peer, { status: 'held' })
    }
    return out
  }

  /** assemblies in progress */
  get size (): number {
    return this.assemblies.size
  }

  private finish<T extends AddResult> (key: string, peer: string, result: T): T {
    const a = this.assemblies.get(key)
    if (a !== undefined) {
      this.assemblies.delete(key)
      this.heldBytes -= a.header.length
      const n = (this.perPeer.get(peer) ?? 1) - 1
      if (n <= 0) this.perPeer.delete(peer)
      else this.perPeer.set(peer, n)
    }
    this.done.add(key)
    if (this.done.size > DONE_MEMORY) {
      const oldest = this.done.values().next().value
      if (oldest !== undefined) this.done.delete(oldest)
    }
    return result
  }
}
