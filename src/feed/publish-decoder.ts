/**
 * Decodes publish bodies on worker threads, so the thread that orders transactions does not
 * parse, base64-decode, hash and verify a photo (~17 ms of a 6 MB body, measured in
 * docs/benchmarks.md). Small bodies are decoded inline: a round trip to a worker costs more than
 * they do. The body's bytes go to the worker and the decoded bytes come back as transferred
 * buffers, never copied by the structured clone. A bound on the bodies waiting keeps a flood of
 * uploads from queueing memory without end: past it, MEDIA_BUSY (503, Retry-After).
 */
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import type { Logger } from 'pino'
import { KithError, type ErrorCode } from '../errors/index.js'
import { decodePublishBytes, type DecodedPublish } from './publish-decode.js'

export interface PublishDecoderOptions {
  /** worker threads; 0 decodes every body inline (tests, the simulator) */
  workers: number
  /** bodies at most this large are decoded inline */
  inlineMaxBytes: number
  /** bodies handed to the workers and not yet answered, per worker */
  maxWaitingPerWorker: number
  logger?: Logger
}

export const DEFAULT_DECODER_OPTIONS: PublishDecoderOptions = {
  workers: Math.max(1, availableParallelism() - 1),
  inlineMaxBytes: 64 * 1024,
  maxWaitingPerWorker: 4
}

/** The message a worker gets: the body's own ArrayBuffer, transferred. */
export interface DecodeJob {
  id: number
  body: Uint8Array<ArrayBuffer>
}

/** a decoded publish as it crosses between threads: byte arrays, which arrive as Uint8Array, not Buffer */
export type DecodedWire = Omit<DecodedPublish, 'content' | 'attachment'> & { content: Uint8Array, attachment: { bytes: Uint8Array, mime: string } | undefined }

export type DecodeReply =
  | { id: number, decoded: DecodedWire }
  | { id: number, refused: { code: ErrorCode, message: string } }
  | { id: number, failed: string }

interface Waiting {
  resolve: (decoded: DecodedPublish) => void
  reject: (err: Error) => void
}

interface Slot {
  worker: Worker
  waiting: Map<number, Waiting>
}

const WORKER_URL = new URL('./publish-worker.js', import.meta.url)

/**
 * `bytes` as a view of an ArrayBuffer of its own, which a transfer may take: a copy when it is a
 * slice of a larger one (Node's pool of small buffers), whose transfer would take the rest too.
 */
export function toTransfer (bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) return bytes as Uint8Array<ArrayBuffer>
  return new Uint8Array(bytes)
}

/** The Buffer over a byte array another thread transferred (no copy). */
export function fromTransfer (bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/** A decoded publish made ready to be posted to another thread, with the buffers to transfer (not copy). */
export function decodedForTransfer (decoded: DecodedPublish): { decoded: DecodedWire, transfer: ArrayBuffer[] } {
  const content = toTransfer(decoded.content)
  const attachment = decoded.attachment === undefined ? undefined : { bytes: toTransfer(decoded.attachment.bytes), mime: decoded.attachment.mime }
  return {
    decoded: { ...decoded, content, attachment },
    transfer: attachment === undefined ? [content.buffer] : [content.buffer, attachment.bytes.buffer]
  }
}

/** A decoded publish as another thread posted it: its byte arrays made Buffers again (no copy). */
export function decodedFromTransfer (decoded: DecodedWire): DecodedPublish {
  const { content, attachment } = decoded
  return { ...decoded, content: fromTransfer(content), attachment: attachment === undefined ? undefined : { bytes: fromTransfer(attachment.bytes), mime: attachment.mime } }
}

export class PublishDecoder {
  private readonly slots: Slot[] = []
  private readonly opts: PublishDecoderOptions
  private nextId = 1
  private stopped = false

  constructor (opts: Partial<PublishDecoderOptions> = {}) {
    this.opts = { ...DEFAULT_DECODER_OPTIONS, ...opts }
    for (let i = 0; i < this.opts.workers; i++) this.slots.push(this.spawn())
  }

  /** Decodes `body`, a buffer the caller hands over: a worker may take its memory. */
  async decode (body: Buffer): Promise<DecodedPublish> {
    if (body.length <= this.opts.inlineMaxBytes || this.slots.length === 0) return decodePublishBytes(body)
    if (this.stopped) throw new KithError('UNAVAILABLE', 'the node is shutting down')
    const slot = this.slots.reduce((best, s) => s.waiting.size < best.waiting.size ? s : best)
    if (slot.waiting.size >= this.opts.maxWaitingPerWorker) {
      throw new KithError('MEDIA_BUSY', `too many large publishes are being decoded (${this.slots.length * this.opts.maxWaitingPerWorker} at a time); try again shortly`)
    }
    const id = this.nextId++
    const job: DecodeJob = { id, body: toTransfer(body) }
    return await new Promise((resolve, reject) => {
      slot.waiting.set(id, { resolve, reject })
      slot.worker.ref()
      slot.worker.postMessage(job, [job.body.buffer])
    })
  }

  private spawn (): Slot {
    const worker = new Worker(WORKER_URL)
    const slot: Slot = { worker, waiting: new Map() }
    worker.on('message', (reply: DecodeReply) => this.onReply(slot, reply))
    // A worker that dies fails what it held (a node fault, 500) and is replaced.
    worker.on('error', (err) => this.opts.logger?.error({ err }, 'publish decode worker failed'))
    worker.once('exit', (code) => {
      for (const w of slot.waiting.values()) w.reject(new KithError('INTERNAL', 'decoding the publish failed'))
      slot.waiting.clear()
      if (this.stopped) return
      this.opts.logger?.warn({ code }, 'publish decode worker exited; replacing it')
      this.slots[this.slots.indexOf(slot)] = this.spawn()
    })
    worker.unref()
    return slot
  }

  private onReply (slot: Slot, reply: DecodeReply): void {
    const waiting = slot.waiting.get(reply.id)
    if (waiting === undefined) return
    slot.waiting.delete(reply.id)
    if (slot.waiting.size === 0) slot.worker.unref()
    if ('decoded' in reply) waiting.resolve(decodedFromTransfer(reply.decoded))
    else if ('refused' in reply) waiting.reject(new KithError(reply.refused.code, reply.refused.message))
    else {
      this.opts.logger?.error({ error: reply.failed }, 'publish decode failed')
      waiting.reject(new KithError('INTERNAL', 'decoding the publish failed'))
    }
  }

  async stop (): Promise<void> {
    this.stopped = true
    await Promise.all(this.slots.map(async ({ worker }) => await worker.terminate()))
  }
}
