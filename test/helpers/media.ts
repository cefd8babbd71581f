/**
 * Media fixtures for tests: photos that carry every kind of metadata the scrubber must remove,
 * written by exiftool (Debian libimage-exiftool-perl, installed by .ci/run), and a reader that
 * lists the metadata groups exiftool finds in some bytes.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'

/** Tags written into test photos: camera, serial, time, GPS position, XMP creator, IPTC by-line, orientation. */
export const PHOTO_TAGS = [
  '-Make=KithCam', '-Model=X1 Pro', '-SerialNumber=SN-0042', '-DateTimeOriginal=2026:05:01 12:00:00',
  '-GPSLatitude=52.5200', '-GPSLatitudeRef=N', '-GPSLongitude=13.4050', '-GPSLongitudeRef=E',
  '-XMP-dc:Creator=Secret Photographer', '-XMP-dc:Description=home address', '-IPTC:By-line=Secret Photographer', '-IPTC:City=Berlin'
]

/** A JPEG of width × height with a gradient (so it is a real picture), an ICC profile, and PHOTO_TAGS. */
export async function jpegWithMetadata (width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3
      raw[i] = (x * 255 / width) | 0
      raw[i + 1] = (y * 255 / height) | 0
      raw[i + 2] = ((x + y) % 64) * 4
    }
  }
  const jpeg = await sharp(raw, { raw: { width, height, channels: 3 } }).withIccProfile('p3').jpeg({ quality: 90 }).toBuffer()
  return withTags(jpeg, 'jpg', PHOTO_TAGS)
}

/** `bytes` with exiftool's tags written in (a temporary file, since exiftool rewrites files). */
export function withTags (bytes: Buffer, ext: string, tags: readonly string[]): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'kith-exif-'))
  try {
    const file = join(dir, `image.${ext}`)
    writeFileSync(file, bytes)
    execFileSync('exiftool', ['-q', '-overwrite_original', ...tags, file])
    return readFileSync(file)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The metadata groups exiftool reads in `bytes`: family 0 (EXIF, XMP, IPTC, ICC_Profile, MakerNotes…) and family 1 (GPS, IFD0…). */
export function exifGroups (bytes: Buffer): Set<string> {
  const out = execFileSync('exiftool', ['-j', '-a', '-G0:1', '-'], { input: bytes, maxBuffer: 16 * 1024 * 1024 })
  const [tags] = JSON.parse(out.toString('utf8')) as Array<Record<string, unknown>>
  const groups = new Set<string>()
  for (const key of Object.keys(tags)) {
    const [family0, family1] = key.split(':')
    if (family1 === undefined) continue
    groups.add(family0)
    groups.add(family1)
  }
  return groups
}
