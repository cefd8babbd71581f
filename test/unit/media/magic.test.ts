/**
 * The magic-byte check against the declared mime (spec, Feed rule 4) on real files made by sharp
 * and by the system's ffmpeg, and the media environment settings.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import sharp from 'sharp'
import { KithError } from '../../../src/errors/index.js'
import { STATUS_BY_CODE } from '../../../src/api/errors.js'
import { SUPPORTED_MIME, checkMagic, detect, readMediaEnv } from '../../../src/media/index.js'
import { makeMedia, type MediaSample } from '../../helpers/media-files.js'

function rejects (fn: () => unknown, code: string, message: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof KithError, `expected a KithError, got ${String(err)}`)
    assert.equal(err.code, code)
    assert.match(err.message, message)
    return true
  })
}

const images: Record<string, Buffer> = {}
const media: Partial<Record<MediaSample, Buffer>> = {}

before(async () => {
  const base = sharp({ create: { width: 8, height: 8, channels: 4, background: { r: 10, g: 20, b: 30, alpha: 1 } } })
  images.jpeg = await base.clone().jpeg().toBuffer()
  images.png = await base.clone().png().toBuffer()
  images.gif = await base.clone().gif().toBuffer()
  images.webp = await base.clone().webp().toBuffer()
  for (const sample of ['mp4', 'm4a', 'mp3', 'webm', 'webm-audio', 'ogg-vorbis', 'ogg-opus', 'mkv'] as const) media[sample] = await makeMedia(sample)
})

describe('checkMagic', () => {
  it('accepts each supported format under its declared mime, and says what to store it as', () => {
    const cases: Array<[Buffer | undefined, string, string, string]> = [
      [images.jpeg, 'image/jpeg', 'image', 'image/jpeg'],
      [images.png, 'image/png', 'image', 'image/png'],
      [images.gif, 'image/gif', 'image', 'image/gif'],
      [images.webp, 'image/webp', 'image', 'image/webp'],
      [media.mp4, 'video/mp4', 'video', 'video/mp4'],
      [media.webm, 'video/webm', 'video', 'video/webm'],
      [media['webm-audio'], 'audio/webm', 'audio', 'audio/webm'],
      [media.mp3, 'audio/mpeg', 'audio', 'audio/mpeg'],
      [media['ogg-vorbis'], 'audio/ogg', 'audio', 'audio/ogg'],
      [media['ogg-opus'], 'audio/ogg', 'audio', 'audio/ogg'],
      [media['ogg-opus'], 'audio/opus', 'audio', 'audio/ogg'],
      [media.m4a, 'audio/mp4', 'audio', 'audio/mp4'],
      [media.m4a, 'audio/x-m4a', 'audio', 'audio/mp4'],
      // an audio upload in a generic MP4 container: the sidecar keeps its audio only
      [media.mp4, 'audio/mp4', 'audio', 'audio/mp4'],
      // parameters and case in the declared mime do not matter
      [images.png, 'Image/PNG; charset=binary', 'image', 'image/png']
    ]
    for (const [bytes, declared, kind, mime] of cases) {
      assert.ok(bytes !== undefined)
      assert.deepEqual(checkMagic(bytes, declared), { kind, mime }, declared)
    }
  })

  it('tells M4A from MP4 and WebM from Matroska', () => {
    assert.equal(detect(media.m4a as Buffer)?.what, 'an M4A audio file')
    assert.equal(detect(media.mp4 as Buffer)?.what, 'an MP4 file')
    assert.equal(detect(media.webm as Buffer)?.what, 'a WebM file')
    assert.equal(detect(media.mkv as Buffer)?.what, 'a Matroska (MKV) file')
    rejects(() => checkMagic(media.m4a as Buffer, 'video/mp4'), 'MEDIA_TYPE_MISMATCH', /^attachment_mime is video\/mp4 but the bytes are an M4A audio file$/)
    rejects(() => checkMagic(media.mkv as Buffer, 'video/webm'), 'MEDIA_TYPE_MISMATCH', /video\/webm but the bytes are a Matroska \(MKV\) file/)
  })

  it('refuses bytes that are something else, saying what they are (400)', () => {
    rejects(() => checkMagic(images.png, 'image/jpeg'), 'MEDIA_TYPE_MISMATCH', /^attachment_mime is image\/jpeg but the bytes are a PNG image$/)
    rejects(() => checkMagic(images.jpeg, 'image/webp'), 'MEDIA_TYPE_MISMATCH', /the bytes are a JPEG image/)
    rejects(() => checkMagic(media.mp3 as Buffer, 'video/mp4'), 'MEDIA_TYPE_MISMATCH', /the bytes are an MP3 audio file/)
    rejects(() => checkMagic(media['ogg-vorbis'] as Buffer, 'audio/opus'), 'MEDIA_TYPE_MISMATCH', /the bytes are an Ogg Vorbis audio file/)
    rejects(() => checkMagic(images.gif, 'audio/mpeg'), 'MEDIA_TYPE_MISMATCH', /the bytes are a GIF image/)
    rejects(() => checkMagic(Buffer.from('%PDF-1.7\n'), 'image/png'), 'MEDIA_TYPE_MISMATCH', /a PDF document/)
    rejects(() => checkMagic(Buffer.from('hello, world'), 'image/png'), 'MEDIA_TYPE_MISMATCH', /not a recognised image, video or audio format/)
    rejects(() => checkMagic(Buffer.alloc(0), 'image/png'), 'MEDIA_TYPE_MISMATCH', /the bytes are empty/)
    assert.equal(STATUS_BY_CODE.MEDIA_TYPE_MISMATCH, 400)
  })

  it('refuses a mime outside the supported list, listing the supported ones (400)', () => {
    rejects(() => checkMagic(images.png, 'image/bmp'), 'MEDIA_UNSUPPORTED', /image\/bmp is not supported; supported: image\/jpeg, image\/png, image\/gif, image\/webp, video\/mp4/)
    rejects(() => checkMagic(images.png, ''), 'MEDIA_UNSUPPORTED', /empty attachment_mime/)
    // JavaScript built-in names are not mimes (a lookup in a plain object found them on its prototype: a 500)
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
      rejects(() => checkMagic(images.png, name), 'MEDIA_UNSUPPORTED', new RegExp(`attachment_mime ${name.toLowerCase()} is not supported`))
    }
    for (const mime of ['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'video/mp4', 'video/webm', 'audio/mpeg', 'audio/ogg', 'audio/mp4', 'audio/x-m4a', 'audio/webm']) {
      assert.ok(SUPPORTED_MIME.includes(mime), mime)
    }
    assert.equal(STATUS_BY_CODE.MEDIA_UNSUPPORTED, 400)
  })

  it('needs a real MPEG audio frame after an ID3 tag, not the tag alone', () => {
    const id3Only = Buffer.concat([Buffer.from('ID3\x03\x00\x00\x00\x00\x00\x0a', 'latin1'), Buffer.alloc(10), Buffer.from('not audio')])
    rejects(() => checkMagic(id3Only, 'audio/mpeg'), 'MEDIA_TYPE_MISMATCH', /not a recognised/)
  })
})

describe('readMediaEnv', () => {
  it('has defaults: no sidecar, video refused, 30 s', () => {
    assert.deepEqual(readMediaEnv({}), { sidecarUrl: undefined, allowUnscrubbedVideo: false, sidecarTimeoutMs: 30_000 })
  })

  it('reads the three variables', () => {
    assert.deepEqual(readMediaEnv({ SVC_MEDIA_SIDECAR_URL: 'http://127.0.0.1:9400/', SVC_ALLOW_UNSCRUBBED_VIDEO: 'true', SVC_MEDIA_SIDECAR_TIMEOUT_MS: '5000' }),
      { sidecarUrl: 'http://127.0.0.1:9400', allowUnscrubbedVideo: true, sidecarTimeoutMs: 5000 })
    assert.equal(readMediaEnv({ SVC_ALLOW_UNSCRUBBED_VIDEO: '1' }).allowUnscrubbedVideo, true)
    assert.equal(readMediaEnv({ SVC_ALLOW_UNSCRUBBED_VIDEO: 'false' }).allowUnscrubbedVideo, false)
  })

  it('fails fast on a bad value, naming the variable', () => {
    assert.throws(() => readMediaEnv({ SVC_MEDIA_SIDECAR_URL: 'ftp://x' }), /SVC_MEDIA_SIDECAR_URL must be an http\(s\) base URL/)
    assert.throws(() => readMediaEnv({ SVC_MEDIA_SIDECAR_URL: 'not a url' }), /SVC_MEDIA_SIDECAR_URL/)
    assert.throws(() => readMediaEnv({ SVC_ALLOW_UNSCRUBBED_VIDEO: 'yes' }), /SVC_ALLOW_UNSCRUBBED_VIDEO must be true, 1, false or 0/)
    assert.throws(() => readMediaEnv({ SVC_MEDIA_SIDECAR_TIMEOUT_MS: '0' }), /SVC_MEDIA_SIDECAR_TIMEOUT_MS must be a whole number/)
    assert.throws(() => readMediaEnv({ SVC_MEDIA_SIDECAR_TIMEOUT_MS: '1.5' }), /SVC_MEDIA_SIDECAR_TIMEOUT_MS/)
  })
})
