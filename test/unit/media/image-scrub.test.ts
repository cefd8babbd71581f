/**
 * Image scrubbing end to end through MediaScrubber (real sharp in real worker processes): every
 * metadata group an image format can carry is written into a test image and checked present with
 * exiftool, then checked gone from the scrubbed JPEG by the same independent reader; size,
 * aspect, orientation and transparency; and the refusals (bombs, truncated and corrupt files).
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { deflateSync } from 'node:zlib'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import sharp, { type Sharp } from 'sharp'
import { KithError } from '../../../src/errors/index.js'
import { STATUS_BY_CODE } from '../../../src/api/errors.js'
import { MediaScrubber, readMediaEnv, type ScrubbedMedia } from '../../../src/media/index.js'
import { exifRead, exifWrite, groupsOf } from '../../helpers/media-files.js'

const W = 3000
const H = 2000
const SECRETS = ['KithCam', 'K1-Secret', 'SN-424242', 'Alice Example', 'kith-private', 'KITHMAKERNOTE', 'kith comment']

/** exiftool arguments writing EXIF (with a maker note), GPS, XMP, IPTC and a comment. */
function tagArgs (makerNote: string): string[] {
  return [
    '-Make=KithCam', '-Model=K1-Secret', '-SerialNumber=SN-424242', '-DateTimeOriginal=2026:01:02 03:04:05',
    '-GPSLatitude=48.8566', '-GPSLatitudeRef=N', '-GPSLongitude=2.3522', '-GPSLongitudeRef=E',
    '-XMP-dc:Creator=Alice Example', '-XMP-dc:Description=kith-private',
    '-IPTC:By-line=Alice Example', '-IPTC:Keywords=kith-private',
    '-Comment=kith comment', `-MakerNotes<=${makerNote}`
  ]
}

interface Sample {
  format: 'jpeg' | 'png' | 'gif' | 'webp'
  ext: string
  mime: string
  /** the exiftool groups the input must carry before the scrub */
  groups: string[]
  /** tags the input must carry (group:tag → value pattern) */
  tags: Record<string, RegExp>
}

const SAMPLES: Sample[] = [
  {
    format: 'jpeg', ext: 'jpg', mime: 'image/jpeg', groups: ['EXIF', 'ICC_Profile', 'XMP', 'IPTC'],
    tags: { 'EXIF:Make': /KithCam/, 'EXIF:SerialNumber': /SN-424242/, 'EXIF:DateTimeOriginal': /2026/, 'EXIF:GPSLatitude': /48/, 'EXIF:Orientation': /Rotate 90 CW/, 'EXIF:MakerNoteUnknownText': /KITHMAKERNOTE/, 'IPTC:By-line': /Alice/, 'XMP:Creator': /Alice/, 'File:Comment': /kith comment/ }
  },
  {
    format: 'png', ext: 'png', mime: 'image/png', groups: ['EXIF', 'ICC_Profile', 'XMP', 'IPTC'],
    tags: { 'EXIF:Make': /KithCam/, 'EXIF:SerialNumber': /SN-424242/, 'EXIF:GPSLongitude': /2/, 'EXIF:MakerNoteUnknownText': /KITHMAKERNOTE/, 'IPTC:Keywords': /kith-private/, 'XMP:Description': /kith-private/, 'PNG:Comment': /kith comment/ }
  },
  {
    format: 'webp', ext: 'webp', mime: 'image/webp', groups: ['EXIF', 'ICC_Profile', 'XMP'],
    tags: { 'EXIF:Model': /K1-Secret/, 'EXIF:GPSLatitude': /48/, 'EXIF:MakerNoteUnknownText': /KITHMAKERNOTE/, 'XMP:Creator': /Alice/ }
  },
  {
    // GIF has no EXIF: exiftool puts camera and GPS tags into XMP; ICC in an application extension
    format: 'gif', ext: 'gif', mime: 'image/gif', groups: ['XMP', 'ICC_Profile'],
    tags: { 'XMP:Make': /KithCam/, 'XMP:SerialNumber': /SN-424242/, 'XMP:GPSLatitude': /48/, 'File:Comment': /kith comment/ }
  }
]

let scrubber: MediaScrubber
let tempDir: string
let makerNoteFile: string
let p3Icc: string

async function scrubOk (bytes: Buffer, mime: string): Promise<ScrubbedMedia> {
  return await scrubber.scrub(bytes, mime)
}

async function rejected (bytes: Buffer, mime: string, code: string, message: RegExp, s = scrubber): Promise<void> {
  await assert.rejects(s.scrub(bytes, mime), (err: unknown) => {
    assert.ok(err instanceof KithError, `expected a KithError, got ${String(err)}`)
    assert.equal(err.code, code, err.message)
    assert.match(err.message, message)
    return true
  })
}

/** Blue, a red block at the top left (where the orientation test looks), transparent bottom right. */
function baseImage (alpha: boolean): Sharp {
  const raw = Buffer.alloc(W * H * 4)
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = (y * W + x) * 4
      const red = x < 900 && y < 600
      const hole = alpha && x >= W - 900 && y >= H - 600
      raw[i] = red ? 255 : 0
      raw[i + 2] = red ? 0 : 255
      raw[i + 3] = hole ? 0 : 255
    }
  }
  return sharp(raw, { raw: { width: W, height: H, channels: 4 } })
}

/** The colour of the output at (x, y) as [r, g, b]. */
async function pixel (jpeg: Buffer, x: number, y: number): Promise<number[]> {
  const { data, info } = await sharp(jpeg).raw().toBuffer({ resolveWithObject: true })
  const i = (y * info.width + x) * info.channels
  return [data[i], data[i + 1], data[i + 2]]
}

const isRed = (c: number[]): boolean => c[0] > 200 && c[1] < 60 && c[2] < 60
const isBlue = (c: number[]): boolean => c[0] < 60 && c[1] < 60 && c[2] > 200
const isWhite = (c: number[]): boolean => c.every((v) => v > 240)

before(async () => {
  scrubber = MediaScrubber.start({ env: readMediaEnv({}), logger: pino({ level: 'silent' }) })
  tempDir = await mkdtemp(join(tmpdir(), 'kith-media-unit-'))
  makerNoteFile = join(tempDir, 'makernote.bin')
  await writeFile(makerNoteFile, Buffer.from('KITHMAKERNOTE serial 0042\0\0\0\0', 'latin1'))
  // a Display P3 profile, written into GIFs by exiftool (sharp cannot attach one to a GIF)
  p3Icc = join(tempDir, 'p3.icc')
  const withIcc = await sharp({ create: { width: 4, height: 4, channels: 3, background: 'red' } }).jpeg().withIccProfile('p3').toBuffer()
  const icc = (await sharp(withIcc).metadata()).icc
  assert.ok(icc !== undefined)
  await writeFile(p3Icc, icc)
})

after(async () => {
  await scrubber.stop()
  await rm(tempDir, { recursive: true, force: true })
})

describe('image scrub: metadata', () => {
  for (const sample of SAMPLES) {
    it(`${sample.format}: EXIF, GPS, ICC, XMP, IPTC, maker note, comment all gone; 1080 px; JPEG`, async () => {
      const alpha = sample.format !== 'jpeg'
      const base = baseImage(alpha)
      let bytes: Buffer
      if (sample.format === 'jpeg') bytes = await base.jpeg({ quality: 90 }).withIccProfile('p3').toBuffer()
      else if (sample.format === 'png') bytes = await base.png().withIccProfile('p3').toBuffer()
      else if (sample.format === 'webp') bytes = await base.webp().withIccProfile('p3').toBuffer()
      else bytes = await base.gif().toBuffer()
      const extra = sample.format === 'jpeg' ? ['-Orientation#=6'] : []
      const icc = sample.format === 'gif' ? [`-ICC_Profile<=${p3Icc}`] : []
      bytes = await exifWrite(bytes, sample.ext, [...tagArgs(makerNoteFile), ...extra, ...icc])

      // the input really carries what must go, so this test can fail
      const before = await exifRead(bytes, sample.ext)
      for (const group of sample.groups) assert.ok(groupsOf(before).has(group), `input ${sample.format} lacks group ${group}: ${[...groupsOf(before)].join(', ')}`)
      for (const [tag, value] of Object.entries(sample.tags)) assert.match(String(before[tag]), value, `input ${sample.format} ${tag}`)

      const out = await scrubOk(bytes, sample.mime)
      assert.equal(out.mime, 'image/jpeg')
      assert.equal(out.kind, 'image')
      const after = await exifRead(out.bytes, 'jpg')
      assert.equal(after['File:FileType'], 'JPEG')
      const left = [...groupsOf(after)].filter((g) => !['SourceFile', 'ExifTool', 'File', 'JFIF', 'Composite'].includes(g))
      assert.deepEqual(left, [], `metadata groups left: ${left.join(', ')}`)
      const leftTags = Object.keys(after).filter((k) => /GPS|Make|Model|Serial|Comment|Creator|Keyword|Date.*Original|Orientation|ICC|Profile/i.test(k))
      assert.deepEqual(leftTags, [], `tags left: ${leftTags.join(', ')}`)
      // independent of any reader: none of the written values is anywhere in the bytes
      for (const secret of SECRETS) assert.ok(!out.bytes.includes(secret), `output still contains "${secret}"`)

      // longest side 1080, aspect kept, orientation baked in (the JPEG was "Rotate 90 CW")
      const meta = await sharp(out.bytes).metadata()
      assert.equal(meta.format, 'jpeg')
      assert.equal(meta.orientation, undefined)
      if (sample.format === 'jpeg') {
        assert.deepEqual([out.width, out.height, meta.width, meta.height], [720, 1080, 720, 1080])
        // stored top-left is displayed top-right after a 90° clockwise turn
        assert.ok(isRed(await pixel(out.bytes, 720 - 40, 40)), 'red block not at the top right')
        assert.ok(isBlue(await pixel(out.bytes, 40, 40)), 'top left is not blue')
      } else {
        assert.deepEqual([out.width, out.height, meta.width, meta.height], [1080, 720, 1080, 720])
        assert.ok(isRed(await pixel(out.bytes, 40, 40)), 'red block moved')
        assert.ok(isWhite(await pixel(out.bytes, 1080 - 40, 720 - 40)), 'transparency not flattened onto white')
        assert.ok(isBlue(await pixel(out.bytes, 1080 - 40, 40)), 'opaque blue changed')
      }
      assert.equal(meta.channels, 3)
      assert.equal(meta.space, 'srgb')
    })
  }

  it('never enlarges: a 400×300 image stays 400×300', async () => {
    const small = await sharp({ create: { width: 400, height: 300, channels: 3, background: 'green' } }).png().toBuffer()
    const out = await scrubOk(small, 'image/png')
    assert.deepEqual([out.width, out.height], [400, 300])
    const meta = await sharp(out.bytes).metadata()
    assert.deepEqual([meta.format, meta.width, meta.height], ['jpeg', 400, 300])
  })

  it('keeps only the first frame of an animated GIF', async () => {
    const frame = async (colour: string): Promise<Buffer> => await sharp({ create: { width: 200, height: 100, channels: 3, background: colour } }).png().toBuffer()
    const animated = await sharp([await frame('yellow'), await frame('red'), await frame('green')], { join: { animated: true } }).gif().toBuffer()
    const meta = await sharp(animated).metadata()
    assert.equal(meta.pages, 3)
    const out = await scrubOk(animated, 'image/gif')
    assert.deepEqual([out.mime, out.width, out.height], ['image/jpeg', 200, 100])
    const first = await pixel(out.bytes, 100, 50)
    assert.ok(first[0] > 200 && first[1] > 200 && first[2] < 80, `first frame is yellow, got ${first.join(',')}`)
  })
})

/** A valid 1-bit greyscale PNG of w×h: a few hundred KB that decodes to w×h bytes. */
function pngBomb (w: number, h: number): Buffer {
  const chunk = (type: string, data: Buffer): Buffer => {
    const len = Buffer.alloc(4)
    len.writeUInt32BE(data.length)
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(crc32(body))
    return Buffer.concat([len, body, crc])
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(w, 0)
  ihdr.writeUInt32BE(h, 4)
  ihdr[8] = 1 // bit depth
  ihdr[9] = 0 // greyscale
  const raw = Buffer.alloc((1 + Math.ceil(w / 8)) * h) // filter byte 0 and zero pixels on every row
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))])
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = (c & 1) !== 0 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})
function crc32 (buf: Buffer): number {
  let c = 0xffffffff
  for (const byte of buf) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

describe('image scrub: refusals', () => {
  let good: Buffer
  before(async () => {
    // noise, so that a cut through the entropy-coded data really loses pixels
    const noise = Buffer.alloc(1200 * 800 * 3)
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24
    good = await sharp(noise, { raw: { width: 1200, height: 800, channels: 3 } }).jpeg({ quality: 90 }).toBuffer()
  })

  it('a decompression bomb (20000×20000 PNG of a few hundred KB) is refused with the numbers, 400', async () => {
    const bomb = pngBomb(20_000, 20_000)
    assert.ok(bomb.length < 1_000_000, `bomb is ${bomb.length} bytes`)
    await rejected(bomb, 'image/png', 'MEDIA_INVALID', /^image is 20000×20000 = 400 megapixels, over the limit of 50$/)
    assert.equal(STATUS_BY_CODE.MEDIA_INVALID, 400)
    assert.equal((await scrubOk(good, 'image/jpeg')).width, 1080)
  })

  it('a truncated JPEG is refused, not half-decoded', async () => {
    await rejected(good.subarray(0, Math.floor(good.length * 0.6)), 'image/jpeg', 'MEDIA_INVALID', /^image is truncated or corrupt: /)
    assert.equal((await scrubOk(good, 'image/jpeg')).width, 1080)
  })

  it('garbage after a JPEG magic is refused', async () => {
    const garbage = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919) & 0xff))])
    await rejected(garbage, 'image/jpeg', 'MEDIA_INVALID', /^image is truncated or corrupt: /)
    assert.equal((await scrubOk(good, 'image/jpeg')).width, 1080)
  })

  it('a mere libjpeg warning (extraneous bytes before a marker) is accepted: phones write such files', async () => {
    const eoi = good.lastIndexOf(Buffer.from([0xff, 0xd9]))
    const junk = Buffer.concat([good.subarray(0, eoi), Buffer.from([0x00, 0x11, 0x22, 0x33]), good.subarray(eoi)])
    assert.equal((await scrubOk(junk, 'image/jpeg')).width, 1080)
  })

  it('a corrupt PNG (bad checksum in the pixel data) is refused', async () => {
    const png = await sharp({ create: { width: 300, height: 200, channels: 3, background: 'red' } }).png().toBuffer()
    const idat = png.indexOf('IDAT')
    const broken = Buffer.from(png)
    broken[idat + 10] ^= 0xff
    await rejected(broken, 'image/png', 'MEDIA_INVALID', /^image is truncated or corrupt: /)
  })

  it('a mismatched or unsupported type never reaches a worker (400)', async () => {
    const png = await sharp({ create: { width: 10, height: 10, channels: 3, background: 'red' } }).png().toBuffer()
    await rejected(png, 'image/jpeg', 'MEDIA_TYPE_MISMATCH', /^attachment_mime is image\/jpeg but the bytes are a PNG image$/)
    await rejected(png, 'image/tiff', 'MEDIA_UNSUPPORTED', /not supported; supported: image\/jpeg/)
  })

  it('the pixel limit is configurable', async () => {
    const small = MediaScrubber.start({ env: readMediaEnv({}), logger: pino({ level: 'silent' }), maxInputPixels: 500_000, workers: 1 })
    try {
      await rejected(good, 'image/jpeg', 'MEDIA_INVALID', /^image is 1200×800 = 1\.0 megapixels, over the limit of 0\.5$/, small)
    } finally {
      await small.stop()
    }
  })
})
