/**
 * The reference media sidecar (`bin/kith sidecar`): a small HTTP service that strips container
 * and stream metadata from video and audio by an ffmpeg stream copy (ffmpeg.ts), so nothing is
 * re-encoded. A separate service from the node: ffmpeg parses hostile files, and its CPU and
 * memory stay off the node's machine if the operator wants. Contract in docs/media.md.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { isKithError } from '../errors/index.js'
import { REMUX, ffmpegPath, ffmpegVersion, remuxArgs, runFfmpeg } from './ffmpeg.js'
import { checkMagic, normaliseMime } from './magic.js'
import { HEALTH_PATH, SCRUB_PATH } from './sidecar-client.js'

export interface SidecarOptions {
  host: string | undefined
  port: number
  logger: Logger
  /** request body cap; default 64 MiB */
  maxBytes?: number
  /** per ffmpeg run; default 20 s (below the node's 30 s client timeout, so it gets the 422) */
  timeoutMs?: number
  /** ffmpeg runs at once; default 2 */
  concurrency?: number
  /** requests waiting for an ffmpeg beyond those; more get 503; default 8 */
  maxQueue?: number
  /** the ffmpeg binary; default `ffmpegPath()` (SVC_FFMPEG_PATH, PATH, /usr/bin/ffmpeg) */
  ffmpegPath?: string
}

export interface Sidecar {
  url: string
  close (): Promise<void>
}

export const DEFAULT_SIDECAR_MAX_BYTES = 64 * 1024 * 1024
export const DEFAULT_FFMPEG_TIMEOUT_MS = 20_000
const CLOSE_GRACE_MS = 5000

class HttpError extends Error {
  constructor (readonly status: number, message: string) {
    super(message)
  }
}

/**
 * An answer before the body was read leaves Node to drain the rest of it, so the client sees the
 * answer rather than a reset; `close` after a body that ran over the cap mid-stream.
 */
function sendJson (res: ServerResponse, status: number, body: unknown, close = false): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...(close ? { connection: 'close' } : {}) })
  res.end(text)
}

/** The body, or a 413 as soon as it runs over `maxBytes` (the rest is discarded as it comes). */
async function readBody (req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let refused = false
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size <= maxBytes) chunks.push(chunk)
      else if (!refused) {
        refused = true
        chunks.length = 0
        reject(new HttpError(413, `the body is larger than this sidecar's limit of ${maxBytes} bytes`))
      }
    })
    req.once('end', () => resolve(Buffer.concat(chunks, size)))
    req.once('error', reject)
  })
}

/** ffmpeg's complaint, without the temporary paths, for a 422 body. */
function ffmpegReason (stderr: string, dir: string): string {
  const lines = stderr.split('\n').map((l) => l.split(dir + '/').join('').trim()).filter((l) => l !== '')
  return lines.slice(-2).join('; ').slice(0, 300) || 'no output'
}

export async function startSidecar (opts: SidecarOptions): Promise<Sidecar> {
  const log = opts.logger.child({ module: 'sidecar' })
  const maxBytes = opts.maxBytes ?? DEFAULT_SIDECAR_MAX_BYTES
  const timeoutMs = opts.timeoutMs ?? DEFAULT_FFMPEG_TIMEOUT_MS
  const concurrency = opts.concurrency ?? 2
  const maxQueue = opts.maxQueue ?? 8
  // fails start-up when the binary is missing or does not run
  const ffmpeg = opts.ffmpegPath ?? ffmpegPath()
  const version = await ffmpegVersion(ffmpeg)
  const stopAll = new AbortController()
  const inFlight = new Set<Promise<void>>()
  const waiting: Array<() => void> = []
  let running = 0

  const acquire = async (): Promise<void> => {
    if (running < concurrency) {
      running++
      return
    }
    await new Promise<void>((resolve) => waiting.push(resolve))
  }
  const release = (): void => {
    const next = waiting.shift()
    if (next !== undefined) next()
    else running--
  }

  const scrub = async (body: Buffer, mime: string): Promise<Buffer> => {
    try {
      checkMagic(body, mime)
    } catch (err) {
      if (isKithError(err)) throw new HttpError(422, err.message.replace('attachment_mime', 'Content-Type'))
      throw err
    }
    await acquire()
    if (stopAll.signal.aborted) {
      release()
      throw new HttpError(503, 'the sidecar is shutting down')
    }
    const dir = await mkdtemp(join(tmpdir(), 'kith-sidecar-'))
    try {
      const input = join(dir, 'in')
      const output = join(dir, 'out')
      await writeFile(input, body)
      const run = await runFfmpeg(ffmpeg, remuxArgs(mime, input, output), timeoutMs, stopAll.signal)
      if (run.timedOut) throw new HttpError(422, `the file took longer than ${timeoutMs} ms to process`)
      if (run.code !== 0) throw new HttpError(422, `ffmpeg could not process the file as ${mime}: ${ffmpegReason(run.stderr, dir)}`)
      return await readFile(output)
    } finally {
      release()
      await rm(dir, { recursive: true, force: true })
    }
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0]
    if (path === HEALTH_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
      sendJson(res, 200, { status: 'ok', ffmpeg: version })
      return
    }
    if (path !== SCRUB_PATH) {
      sendJson(res, 404, { error: `no route for ${req.method ?? ''} ${path}` })
      return
    }
    if (req.method !== 'POST') {
      sendJson(res, 405, { error: `method ${req.method ?? ''} is not allowed on ${path}` })
      return
    }
    const mime = normaliseMime(req.headers['content-type'] ?? '')
    if (!REMUX.has(mime)) {
      sendJson(res, 415, { error: `Content-Type ${mime === '' ? '(none)' : mime} is not supported; supported: ${[...REMUX.keys()].join(', ')}` })
      return
    }
    if (running >= concurrency && waiting.length >= maxQueue) {
      sendJson(res, 503, { error: 'the sidecar is busy; try again shortly' })
      return
    }
    const declared = Number(req.headers['content-length'])
    if (Number.isFinite(declared) && declared > maxBytes) {
      sendJson(res, 413, { error: `the body (${declared} bytes) is larger than this sidecar's limit of ${maxBytes} bytes` })
      return
    }
    const started = performance.now()
    try {
      const body = await readBody(req, maxBytes)
      const out = await scrub(body, mime)
      res.writeHead(200, { 'content-type': mime, 'content-length': out.length })
      res.end(out)
      log.info({ mime, inBytes: body.length, outBytes: out.length, ms: Math.round(performance.now() - started) }, 'scrubbed')
    } catch (err) {
      if (err instanceof HttpError) {
        log.info({ mime, status: err.status, error: err.message }, 'refused')
        sendJson(res, err.status, { error: err.message }, err.status === 413 && !req.complete)
      } else {
        log.error({ err, mime }, 'scrub failed')
        sendJson(res, 500, { error: 'internal error' })
      }
    }
  }

  const server = createServer((req, res) => {
    const job = handle(req, res).catch((err: unknown) => { log.error({ err }, 'request failed') })
    inFlight.add(job)
    void job.finally(() => inFlight.delete(job))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port, opts.host, () => { server.off('error', reject); resolve() })
  })
  // once listening, an 'error' is a failed accept (EMFILE): that connection is lost, the sidecar goes on
  server.on('error', (err: NodeJS.ErrnoException) => log.warn({ code: err.code }, 'accepting a connection failed'))
  const address = server.address() as AddressInfo
  const shownHost = address.family === 'IPv6' ? (address.address === '::' ? 'localhost' : `[${address.address}]`) : (address.address === '0.0.0.0' ? '127.0.0.1' : address.address)
  const url = `http://${shownHost}:${address.port}`
  log.info({ url, port: address.port, ffmpeg: version, ffmpegPath: ffmpeg, maxBytes, timeoutMs, concurrency }, 'sidecar listening')

  let closed: Promise<void> | undefined
  const close = async (): Promise<void> => {
    closed ??= (async () => {
      const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeIdleConnections()
      // requests under way finish (bounded); then any ffmpeg still running is killed
      const grace = new Promise<void>((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref())
      await Promise.race([Promise.all([...inFlight]), grace])
      stopAll.abort()
      await Promise.all([...inFlight])
      server.closeAllConnections()
      await serverClosed
    })()
    await closed
  }
  return { url, close }
}
