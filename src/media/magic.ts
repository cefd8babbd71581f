/**
 * What the bytes of an attachment are, from their first bytes and container headers, checked
 * against the declared `attachment_mime` (spec, Feed rule 4). Hand-written rather than the
 * `file-type` package: the check must be synchronous (file-type's API is async only), the set of
 * formats is small, and the distinctions that matter here (M4A against MP4 by the `ftyp` brand,
 * WebM against Matroska by the EBML DocType) need brand-level control anyway (docs/media.md).
 */
import { KithError } from '../errors/index.js'

export type MediaKind = 'image' | 'video' | 'audio'

/** The declared mimes accepted, in the order the error message lists them. */
export const SUPPORTED_MIME: readonly string[] = Object.freeze([
  'image/jpeg', 'image/png', 'image/gif', 'image/webp',
  'video/mp4', 'video/webm', 'video/ogg',
  'audio/mpeg', 'audio/ogg', 'audio/opus', 'audio/mp4', 'audio/x-m4a', 'audio/webm'
])

/** A format recognised in the bytes; `what` completes "the bytes are ...". */
export interface Detected {
  format: Format
  what: string
}

type Format =
  | 'jpeg' | 'png' | 'gif' | 'webp'
  | 'mp4' | 'm4a' | 'webm' | 'matroska' | 'mp3'
  | 'ogg-vorbis' | 'ogg-opus' | 'ogg-flac' | 'ogg-speex' | 'ogg-theora' | 'ogg-other'
  // recognised only to say what they are when refused
  | 'quicktime' | 'heif' | '3gp' | 'bmp' | 'tiff' | 'wav' | 'avi' | 'flac' | 'aac' | 'pdf' | 'zip'

interface Accepts {
  kind: MediaKind
  /** the mime stored with the scrubbed bytes for this declared mime */
  canonical: string
  formats: readonly Format[]
}

// audio/mp4 accepts the generic MP4 brands too: an audio-only MP4 written by a phone's recorder
// often carries `isom` or `mp42`, and the sidecar keeps only the audio streams of an audio upload.
// A Map, not an object: the declared mime is the uploader's text (`__proto__`, `constructor`).
const ACCEPTS: ReadonlyMap<string, Accepts> = new Map(Object.entries({
  'image/jpeg': { kind: 'image', canonical: 'image/jpeg', formats: ['jpeg'] },
  'image/png': { kind: 'image', canonical: 'image/png', formats: ['png'] },
  'image/gif': { kind: 'image', canonical: 'image/gif', formats: ['gif'] },
  'image/webp': { kind: 'image', canonical: 'image/webp', formats: ['webp'] },
  'video/mp4': { kind: 'video', canonical: 'video/mp4', formats: ['mp4'] },
  'video/webm': { kind: 'video', canonical: 'video/webm', formats: ['webm'] },
  'video/ogg': { kind: 'video', canonical: 'video/ogg', formats: ['ogg-theora'] },
  'audio/mpeg': { kind: 'audio', canonical: 'audio/mpeg', formats: ['mp3'] },
  'audio/ogg': { kind: 'audio', canonical: 'audio/ogg', formats: ['ogg-vorbis', 'ogg-opus', 'ogg-flac', 'ogg-speex'] },
  'audio/opus': { kind: 'audio', canonical: 'audio/ogg', formats: ['ogg-opus'] },
  'audio/mp4': { kind: 'audio', canonical: 'audio/mp4', formats: ['m4a', 'mp4'] },
  'audio/x-m4a': { kind: 'audio', canonical: 'audio/mp4', formats: ['m4a', 'mp4'] },
  'audio/webm': { kind: 'audio', canonical: 'audio/webm', formats: ['webm'] }
} satisfies Record<string, Accepts>))

/** `Image/JPEG; charset=x` → `image/jpeg`. */
export function normaliseMime (mime: string): string {
  return mime.split(';')[0].trim().toLowerCase()
}

/**
 * Checks the bytes against the declared mime. Returns the kind and the mime to store the
 * (scrubbed) bytes under; throws MEDIA_UNSUPPORTED for a mime outside SUPPORTED_MIME and
 * MEDIA_TYPE_MISMATCH when the bytes are something else.
 */
export function checkMagic (bytes: Uint8Array, declaredMime: string): { kind: MediaKind, mime: string } {
  const mime = normaliseMime(declaredMime)
  const accepts = ACCEPTS.get(mime)
  if (accepts === undefined) {
    const shown = mime === '' ? 'an empty attachment_mime' : `attachment_mime ${mime}`
    throw new KithError('MEDIA_UNSUPPORTED', `${shown} is not supported; supported: ${SUPPORTED_MIME.join(', ')}`)
  }
  const detected = detect(bytes)
  if (detected === undefined || !accepts.formats.includes(detected.format)) {
    const what = bytes.length === 0 ? 'empty' : detected?.what ?? 'not a recognised image, video or audio format'
    throw new KithError('MEDIA_TYPE_MISMATCH', `attachment_mime is ${mime} but the bytes are ${what}`)
  }
  return { kind: accepts.kind, mime: accepts.canonical }
}

const ascii = (b: Uint8Array, start: number, end: number): string => String.fromCharCode(...b.subarray(start, end))

function startsWith (b: Uint8Array, sig: readonly number[], at = 0): boolean {
  if (b.length < at + sig.length) return false
  for (let i = 0; i < sig.length; i++) if (b[at + i] !== sig[i]) return false
  return true
}

/** Recognises the format of `b`, or undefined. */
export function detect (b: Uint8Array): Detected | undefined {
  if (startsWith(b, [0xff, 0xd8, 0xff])) return { format: 'jpeg', what: 'a JPEG image' }
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { format: 'png', what: 'a PNG image' }
  const head4 = b.length >= 4 ? ascii(b, 0, 4) : ''
  if (b.length >= 6 && (ascii(b, 0, 6) === 'GIF87a' || ascii(b, 0, 6) === 'GIF89a')) return { format: 'gif', what: 'a GIF image' }
  if (head4 === 'RIFF' && b.length >= 12) {
    const form = ascii(b, 8, 12)
    if (form === 'WEBP') return { format: 'webp', what: 'a WebP image' }
    if (form === 'WAVE') return { format: 'wav', what: 'a WAV audio file' }
    if (form === 'AVI ') return { format: 'avi', what: 'an AVI video' }
  }
  if (b.length >= 12 && ascii(b, 4, 8) === 'ftyp') return isoBmff(b)
  if (startsWith(b, [0x1a, 0x45, 0xdf, 0xa3])) return ebml(b)
  if (head4 === 'OggS') return ogg(b)
  const mp3 = mpegAudio(b)
  if (mp3 !== undefined) return mp3
  if (head4 === 'fLaC') return { format: 'flac', what: 'a FLAC audio file' }
  if (head4 === 'II*\0' || head4 === 'MM\0*') return { format: 'tiff', what: 'a TIFF image' }
  if (b.length >= 2 && b[0] === 0x42 && b[1] === 0x4d) return { format: 'bmp', what: 'a BMP image' }
  if (head4 === '%PDF') return { format: 'pdf', what: 'a PDF document' }
  if (startsWith(b, [0x50, 0x4b, 0x03, 0x04])) return { format: 'zip', what: 'a ZIP archive' }
  return undefined
}

// ISO base media (MP4 family): the major brand of the `ftyp` box says what it is.
const M4A_BRANDS = new Set(['M4A ', 'M4B ', 'M4P '])
const HEIF_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'mif1', 'msf1', 'avif', 'avis'])

function isoBmff (b: Uint8Array): Detected {
  // Only the major brand: generic MP4 files list M4A among their compatible brands at times.
  const major = ascii(b, 8, 12)
  if (M4A_BRANDS.has(major)) return { format: 'm4a', what: 'an M4A audio file' }
  if (HEIF_BRANDS.has(major)) return { format: 'heif', what: 'a HEIF/AVIF image' }
  if (major === 'qt  ') return { format: 'quicktime', what: 'a QuickTime movie' }
  if (major.startsWith('3g')) return { format: '3gp', what: 'a 3GP file' }
  return { format: 'mp4', what: 'an MP4 file' }
}

/** Reads an EBML variable-length integer at `at`; `keepMarker` for element ids. */
function vint (b: Uint8Array, at: number, keepMarker: boolean): { value: number, length: number } | undefined {
  const first = b[at]
  if (first === undefined || first === 0) return undefined
  const length = Math.clz32(first) - 23
  if (length > 8 || at + length > b.length) return undefined
  let value = keepMarker ? first : first & (0xff >> length)
  for (let i = 1; i < length; i++) value = value * 256 + b[at + i]
  return { value, length }
}

/** Matroska and WebM share the EBML header; its DocType element (0x4282) tells them apart. */
function ebml (b: Uint8Array): Detected {
  const unknown: Detected = { format: 'matroska', what: 'an EBML file that is not WebM' }
  const id = vint(b, 0, true)
  const size = id === undefined ? undefined : vint(b, id.length, false)
  if (id === undefined || size === undefined) return unknown
  let at = id.length + size.length
  const end = Math.min(at + size.value, b.length)
  while (at < end) {
    const childId = vint(b, at, true)
    const childSize = childId === undefined ? undefined : vint(b, at + childId.length, false)
    if (childId === undefined || childSize === undefined) return unknown
    const data = at + childId.length + childSize.length
    if (childId.value === 0x4282) {
      const docType = ascii(b, data, Math.min(data + childSize.value, b.length)).replace(/\0+$/, '')
      if (docType === 'webm') return { format: 'webm', what: 'a WebM file' }
      if (docType === 'matroska') return { format: 'matroska', what: 'a Matroska (MKV) file' }
      return unknown
    }
    at = data + childSize.value
  }
  return unknown
}

/** The first page of an Ogg stream carries one codec's identification header. */
function ogg (b: Uint8Array): Detected {
  const segments = b[26] ?? 0
  const payload = 27 + segments
  const starts = (text: string, skip = 0): boolean => b.length >= payload + skip + text.length && ascii(b, payload + skip, payload + skip + text.length) === text
  if (b[payload] === 0x01 && starts('vorbis', 1)) return { format: 'ogg-vorbis', what: 'an Ogg Vorbis audio file' }
  if (starts('OpusHead')) return { format: 'ogg-opus', what: 'an Ogg Opus audio file' }
  if (b[payload] === 0x7f && starts('FLAC', 1)) return { format: 'ogg-flac', what: 'an Ogg FLAC audio file' }
  if (starts('Speex   ')) return { format: 'ogg-speex', what: 'an Ogg Speex audio file' }
  if (b[payload] === 0x80 && starts('theora', 1)) return { format: 'ogg-theora', what: 'an Ogg Theora video' }
  return { format: 'ogg-other', what: 'an Ogg file of another codec' }
}

/** MPEG audio: an optional ID3v2 tag (and zero padding), then a valid frame header. */
function mpegAudio (b: Uint8Array): Detected | undefined {
  let at = 0
  if (b.length >= 10 && ascii(b, 0, 3) === 'ID3') {
    // the tag size is syncsafe: 7 bits per byte; a footer adds 10 bytes
    const size = (b[6] & 0x7f) * 2 ** 21 + (b[7] & 0x7f) * 2 ** 14 + (b[8] & 0x7f) * 2 ** 7 + (b[9] & 0x7f)
    at = 10 + size + ((b[5] & 0x10) !== 0 ? 10 : 0)
    while (at < b.length && b[at] === 0) at++
  }
  if (at + 4 > b.length || b[at] !== 0xff || (b[at + 1] & 0xe0) !== 0xe0) return undefined
  const version = (b[at + 1] >> 3) & 0x3
  const layer = (b[at + 1] >> 1) & 0x3
  const bitrate = b[at + 2] >> 4
  const rate = (b[at + 2] >> 2) & 0x3
  // ADTS (AAC) shares the sync word with layer bits 00
  if (layer === 0) return (b[at + 1] & 0xf6) === 0xf0 ? { format: 'aac', what: 'an AAC (ADTS) audio stream' } : undefined
  if (version === 1 || bitrate === 15 || rate === 3) return undefined
  return { format: 'mp3', what: 'an MP3 audio file' }
}
