/**
 * The image scrub itself (spec, Feed rule 3): decode, apply the EXIF orientation, shrink the
 * longest side to at most 1080 px, convert to sRGB, flatten transparency onto white, and write a
 * fresh JPEG at quality 75 with no metadata at all. It runs in the image worker processes
 * (image-worker.ts) and, for comparison, in the benchmark's own process.
 */
import sharp from 'sharp'

/** Limits of spec § Limits ("Image scrub"). */
export const MAX_SIDE_PX = 1080
export const JPEG_QUALITY = 75
/** Decompression-bomb guard: a 12 MP phone photo is far below it, a 20000×20000 PNG far above. */
export const DEFAULT_MAX_INPUT_PIXELS = 50_000_000

export interface ScrubbedImage {
  bytes: Buffer
  width: number
  height: number
}

/** A refusal whose message is meant for the uploader (a 4xx). */
export class ImageRejected extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'ImageRejected'
  }
}

const megapixels = (pixels: number): string => {
  const mp = pixels / 1e6
  return mp >= 10 ? String(Math.round(mp)) : mp.toFixed(1)
}

/** libvips' message, first line only and bounded, for a 4xx answer. */
function decoderMessage (err: unknown): string {
  const text = err instanceof Error ? err.message : String(err)
  const line = text.split('\n').map((l) => l.trim()).find((l) => l !== '') ?? 'unknown error'
  return line.length > 200 ? `${line.slice(0, 200)}…` : line
}

export async function scrubImage (input: Buffer, maxInputPixels = DEFAULT_MAX_INPUT_PIXELS): Promise<ScrubbedImage> {
  // failOn 'error': truncated or invalid pixel data is refused rather than half-decoded, while
  // libjpeg's mere warnings (extraneous bytes before a marker, common in phone photos) are not.
  let width: number | undefined
  let height: number | undefined
  try {
    // header only: refuses a bomb before a single pixel is decoded, with the numbers in the
    // message (no limit on this instance, or sharp's own terse refusal would come first)
    ({ width, height } = await sharp(input, { limitInputPixels: false }).metadata())
  } catch (err) {
    throw new ImageRejected(`image is truncated or corrupt: ${decoderMessage(err)}`)
  }
  if (width === undefined || height === undefined || width < 1 || height < 1) throw new ImageRejected('image has no dimensions in its header')
  if (width * height > maxInputPixels) {
    throw new ImageRejected(`image is ${width}×${height} = ${megapixels(width * height)} megapixels, over the limit of ${megapixels(maxInputPixels)}`)
  }
  try {
    // input → rotate → resize → jpeg keeps libjpeg's shrink-on-load (decoding at 1/2, 1/4 or
    // 1/8 scale), which is most of the speed. No withMetadata/keepMetadata: nothing is copied.
    const { data, info } = await sharp(input, { limitInputPixels: maxInputPixels, failOn: 'error' })
      .rotate()
      .resize({ width: MAX_SIDE_PX, height: MAX_SIDE_PX, fit: 'inside', withoutEnlargement: true })
      .flatten({ background: '#ffffff' })
      .toColourspace('srgb')
      .jpeg({ quality: JPEG_QUALITY })
      .toBuffer({ resolveWithObject: true })
    return { bytes: data, width: info.width, height: info.height }
  } catch (err) {
    throw new ImageRejected(`image is truncated or corrupt: ${decoderMessage(err)}`)
  }
}
