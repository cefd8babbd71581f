/**
 * One length-prefixed frame per direction on a request-response stream: an unsigned varint
 * length (as libp2p's own protocols use) followed by that many bytes. Reads are capped before
 * any buffer is allocated, so a peer cannot make us hold more than the cap.
 */
import type { Stream } from '@libp2p/interface'
import { P2PError } from './errors.js'

const MAX_VARINT_BYTES = 5

export function encodeVarint (value: number): Uint8Array {
  const out: number[] = []
  let v = value
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80)
    v = Math.floor(v / 0x80)
  }
  out.push(v)
  return Uint8Array.from(out)
}

/** `payload` with its varint length in front, as one buffer (one send, no interleaving). */
export function encodeFrame (...parts: Uint8Array[]): Uint8Array {
  const length = parts.reduce((n, p) => n + p.byteLength, 0)
  const prefix = encodeVarint(length)
  const out = new Uint8Array(prefix.byteLength + length)
  out.set(prefix, 0)
  let offset = prefix.byteLength
  for (const p of parts) {
    out.set(p, offset)
    offset += p.byteLength
  }
  return out
}

/**
 * Incremental decoder of one frame: feed it chunks; it returns the frame once complete.
 * Bytes after the frame are ignored (one frame per direction).
 */
export class FrameReader {
  private length = -1
  private lengthValue = 0
  private lengthBytes = 0
  private body: Uint8Array | undefined
  private filled = 0

  constructor (private readonly maxBytes: number) {}

  /** returns the frame when it is complete, undefined while more bytes are needed */
  push (chunk: Uint8Array): Uint8Array | undefined {
    let offset = 0
    while (this.length < 0 && offset < chunk.byteLength) {
      const byte = chunk[offset++]
      this.lengthValue += (byte & 0x7f) * 2 ** (7 * this.lengthBytes)
      this.lengthBytes++
      if ((byte & 0x80) === 0) {
        this.length = this.lengthValue
        if (this.length > this.maxBytes) throw new P2PError('P2P_TOO_LARGE', `frame of ${this.length} bytes exceeds the cap of ${this.maxBytes}`)
        this.body = new Uint8Array(this.length)
      } else if (this.lengthBytes >= MAX_VARINT_BYTES) {
        throw new P2PError('P2P_TOO_LARGE', 'frame length prefix too long')
      }
    }
    if (this.body === undefined) return undefined
    const take = Math.min(this.length - this.filled, chunk.byteLength - offset)
    if (take > 0) {
      this.body.set(chunk.subarray(offset, offset + take), this.filled)
      this.filled += take
    }
    return this.filled === this.length ? this.body : undefined
  }
}

/** Reads one frame from the stream; throws P2P_STREAM_ENDED if the remote closes first. */
export async function readFrame (stream: Stream, maxBytes: number): Promise<Uint8Array> {
  const reader = new FrameReader(maxBytes)
  for await (const chunk of stream) {
    const frame = reader.push(chunk.subarray())
    if (frame !== undefined) return frame
  }
  throw new P2PError('P2P_STREAM_ENDED', 'stream ended before a complete frame arrived')
}

/** Sends bytes, waiting for the stream to drain when its buffer is full. */
export async function sendAll (stream: Stream, bytes: Uint8Array, signal?: AbortSignal): Promise<void> {
  if (!stream.send(bytes)) await stream.onDrain({ signal })
}
