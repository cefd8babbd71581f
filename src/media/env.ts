/** The media settings read from the environment once at start-up (docs/media.md). */

export interface MediaEnv {
  /** base URL of the scrubbing sidecar (`POST <url>/v1/scrub`); undefined when none is set */
  sidecarUrl: string | undefined
  /** store video and audio as uploaded when no sidecar is set, instead of answering 503 */
  allowUnscrubbedVideo: boolean
  /** how long one sidecar request may take */
  sidecarTimeoutMs: number
}

export const DEFAULT_SIDECAR_TIMEOUT_MS = 30_000

function flag (env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase()
  if (raw === 'true' || raw === '1') return true
  if (raw === '' || raw === 'false' || raw === '0') return false
  throw new Error(`${name} must be true, 1, false or 0, got "${env[name] ?? ''}"`)
}

/** SVC_MEDIA_SIDECAR_URL, SVC_ALLOW_UNSCRUBBED_VIDEO, SVC_MEDIA_SIDECAR_TIMEOUT_MS; throws on a bad value. */
export function readMediaEnv (env: NodeJS.ProcessEnv = process.env): MediaEnv {
  const rawUrl = (env.SVC_MEDIA_SIDECAR_URL ?? '').trim()
  let sidecarUrl: string | undefined
  if (rawUrl !== '') {
    let url: URL | undefined
    try {
      url = new URL(rawUrl)
    } catch {
      url = undefined
    }
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
      throw new Error(`SVC_MEDIA_SIDECAR_URL must be an http(s) base URL such as http://127.0.0.1:9400, got "${rawUrl}"`)
    }
    sidecarUrl = url.href.replace(/\/+$/, '')
  }
  const rawTimeout = (env.SVC_MEDIA_SIDECAR_TIMEOUT_MS ?? '').trim()
  const sidecarTimeoutMs = rawTimeout === '' ? DEFAULT_SIDECAR_TIMEOUT_MS : Number(rawTimeout)
  if (!Number.isSafeInteger(sidecarTimeoutMs) || sidecarTimeoutMs <= 0) {
    throw new Error(`SVC_MEDIA_SIDECAR_TIMEOUT_MS must be a whole number of milliseconds above 0, got "${rawTimeout}"`)
  }
  return { sidecarUrl, allowUnscrubbedVideo: flag(env, 'SVC_ALLOW_UNSCRUBBED_VIDEO'), sidecarTimeoutMs }
}
