/**
 * Media scrubbing, the only door into src/media. Every attachment of a post goes through
 * `MediaScrubber.scrub` before the feed stores it (spec § Feed, rules 3 and 4): the magic bytes
 * must match the declared mime; images are decoded and re-encoded as a fresh JPEG (at most
 * 1080 px, quality 75, no metadata) by sharp in a small pool of low-priority child processes;
 * video and audio go to the media sidecar named by SVC_MEDIA_SIDECAR_URL, are refused with 503
 * without one, or are kept as uploaded when SVC_ALLOW_UNSCRUBBED_VIDEO is set. `startSidecar` is
 * the reference sidecar (`bin/kith sidecar`): ffmpeg stream copies without tags, chapters or
 * cover art. Nothing here stores anything. Design, limits and measurements: docs/media.md.
 */
export { checkMagic, detect, normaliseMime, SUPPORTED_MIME, type MediaKind, type Detected } from './magic.js'
export { readMediaEnv, DEFAULT_SIDECAR_TIMEOUT_MS, type MediaEnv } from './env.js'
export {
  MediaScrubber, DEFAULT_WORKERS, DEFAULT_MAX_QUEUE, defaultImageWorkers, DEFAULT_JOB_TIMEOUT_MS, DEFAULT_NICENESS,
  type MediaScrubberOptions, type ScrubbedMedia
} from './scrubber.js'
export { scrubImage, ImageRejected, MAX_SIDE_PX, JPEG_QUALITY, DEFAULT_MAX_INPUT_PIXELS, type ScrubbedImage } from './image.js'
export { startSidecar, DEFAULT_SIDECAR_MAX_BYTES, DEFAULT_FFMPEG_TIMEOUT_MS, type Sidecar, type SidecarOptions } from './sidecar-server.js'
export { SCRUB_PATH, HEALTH_PATH } from './sidecar-client.js'
export { ffmpegPath, ffmpegVersion } from './ffmpeg.js'
