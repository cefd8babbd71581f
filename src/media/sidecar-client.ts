/**
 * The node's side of the media sidecar's HTTP contract (docs/media.md): `POST <url>/v1/scrub`
 * with the raw bytes and the declared mime as Content-Type; 200 carries the scrubbed bytes.
 * Sidecar faults become 5xx answers without its internals; its 4xx refusals reach the uploader.
 */
import type { Logger } from 'pino'
import { KithError } from '../errors/index.js'

export const SCRUB_PATH = '/v1/scrub'
export const HEALTH_PATH = '/v1/health'

async function errorText (res: Response): Promise<string> {
  const text = await res.text()
  try {
    const body = JSON.parse(text) as { error?: unknown }
    if (typeof body.error === 'string' && body.error !== '') return body.error
  } catch { /* not JSON */ }
  const plain = text.trim()
  return plain === '' ? `HTTP ${res.status}` : plain.slice(0, 300)
}

export async function scrubBySidecar (baseUrl: string, bytes: Buffer, mime: string, timeoutMs: number, log: Logger): Promise<Buffer> {
  // one signal for the request and the body: a sidecar that stalls half-way is a timeout too
  const signal = AbortSignal.timeout(timeoutMs)
  try {
    // the DOM typing wants an ArrayBuffer-backed view; a Buffer is one (never a SharedArrayBuffer here)
    const body = new Uint8Array(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength)
    const res = await fetch(baseUrl + SCRUB_PATH, { method: 'POST', body, headers: { 'content-type': mime }, signal })
    if (res.status === 200) return Buffer.from(await res.arrayBuffer())
    const reason = await errorText(res)
    if (res.status === 503) {
      // the sidecar's own back-pressure: the uploader may retry, like MEDIA_BUSY for images
      throw new KithError('MEDIA_BUSY', 'the media sidecar is busy; try again shortly')
    }
    if (res.status >= 400 && res.status < 500) throw new KithError('MEDIA_INVALID', `the media sidecar rejected the attachment: ${reason}`)
    log.warn({ status: res.status, reason }, 'media sidecar failed')
    throw new KithError('MEDIA_SIDECAR_FAILED', `the media sidecar failed (HTTP ${res.status})`)
  } catch (err) {
    if (err instanceof KithError) throw err
    if (signal.aborted) {
      log.warn({ timeoutMs }, 'media sidecar timed out')
      throw new KithError('MEDIA_SIDECAR_TIMEOUT', `the media sidecar did not answer within ${timeoutMs} ms`)
    }
    log.warn({ err }, 'media sidecar unreachable')
    throw new KithError('MEDIA_SIDECAR_FAILED', 'the media sidecar could not be reached')
  }
}
