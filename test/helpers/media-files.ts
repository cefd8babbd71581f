/**
 * Real media files for tests, made with the same ffmpeg the sidecar uses (`ffmpegPath()`:
 * SVC_FFMPEG_PATH, else Debian's `ffmpeg`; lavfi test sources), and readers of what a file carries: its tags (`-f ffmetadata`), its streams, and
 * whether it decodes. exiftool (Debian: libimage-exiftool-perl) reads image metadata.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import sharp from 'sharp'
import { ffmpegPath } from '../../src/media/index.js'

const execFileP = promisify(execFile)

export const EXIFTOOL_HINT = 'exiftool is needed by these tests: apt-get install -y libimage-exiftool-perl'

/** Runs `fn` with a fresh temporary directory, removed afterwards. */
export async function withTempDir<T> (fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'kith-media-test-'))
  try {
    return await fn(dir)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** exiftool -j -G -a of the bytes: keys are "Group:Tag". */
export async function exifRead (bytes: Buffer, ext: string): Promise<Record<string, unknown>> {
  return await withTempDir(async (dir) => {
    const file = join(dir, `in.${ext}`)
    await writeFile(file, bytes)
    let stdout: string
    try {
      ({ stdout } = await execFileP('exiftool', ['-j', '-G', '-a', '-b', '-x', 'SourceFile', file], { maxBuffer: 64 * 1024 * 1024 }))
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(EXIFTOOL_HINT, { cause: err })
      throw err
    }
    return (JSON.parse(stdout) as Array<Record<string, unknown>>)[0]
  })
}

/** Writes tags with exiftool (`-TAG=VALUE` arguments) and returns the new bytes. */
export async function exifWrite (bytes: Buffer, ext: string, args: string[]): Promise<Buffer> {
  return await withTempDir(async (dir) => {
    const file = join(dir, `in.${ext}`)
    await writeFile(file, bytes)
    try {
      await execFileP('exiftool', ['-q', '-q', '-overwrite_original', ...args, file])
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(EXIFTOOL_HINT, { cause: err })
      throw err
    }
    return await readFile(file)
  })
}

/** The exiftool groups present ("EXIF", "GPS", "ICC_Profile", ...). */
export function groupsOf (tags: Record<string, unknown>): Set<string> {
  return new Set(Object.keys(tags).map((k) => k.split(':')[0]))
}

export async function ffmpeg (args: string[]): Promise<{ stdout: string, stderr: string }> {
  return await execFileP(ffmpegPath(), ['-nostdin', '-hide_banner', ...args], { maxBuffer: 64 * 1024 * 1024 })
}

export type MediaSample = 'mp4' | 'mp3' | 'm4a' | 'webm' | 'webm-audio' | 'ogg-vorbis' | 'ogg-opus' | 'mkv'

/** Tags every sample carries, where its container can. */
export const SECRET_TAGS: Record<string, string> = {
  title: 'KithSecretTitle',
  artist: 'Alice Kithsecret',
  comment: 'kith-hidden-comment'
}
export const SECRET_LOCATION = '+48.8566+002.3522/'

/** A chapter whose title must not survive the scrub. */
export const SECRET_CHAPTER = 'KithSecretChapter'
const CHAPTERS = `;FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=500\ntitle=${SECRET_CHAPTER}\n`

const SAMPLE_ARGS: Record<MediaSample, { inputs: string[], codecs: string[], format: string[], ext: string, chapters?: boolean }> = {
  mp4: {
    inputs: ['-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10:duration=1', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=1'],
    codecs: ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '64k',
      '-metadata', `location=${SECRET_LOCATION}`, '-metadata', 'creation_time=2026-01-02T03:04:05Z',
      '-metadata:s:v:0', 'handler_name=KithSecretHandler'],
    format: ['-f', 'mp4'],
    ext: 'mp4',
    chapters: true
  },
  mkv: {
    inputs: ['-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=5:duration=0.4'],
    codecs: ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'],
    format: ['-f', 'matroska'],
    ext: 'mkv'
  },
  m4a: {
    inputs: ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1'],
    codecs: ['-c:a', 'aac', '-b:a', '64k', '-metadata', 'creation_time=2026-01-02T03:04:05Z'],
    format: ['-f', 'ipod'],
    ext: 'm4a'
  },
  mp3: {
    // a cover picture (ID3 APIC), an attached-picture video stream to ffmpeg
    inputs: ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-f', 'lavfi', '-i', 'color=c=red:size=32x32:duration=0.1'],
    codecs: ['-map', '0:a', '-map', '1:v', '-frames:v', '1', '-c:a', 'libmp3lame', '-b:a', '64k', '-c:v', 'png',
      '-disposition:v', 'attached_pic', '-id3v2_version', '3', '-metadata:s:v', 'comment=Cover (front)'],
    format: ['-f', 'mp3'],
    ext: 'mp3'
  },
  webm: {
    inputs: ['-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=5:duration=0.6', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=0.6'],
    codecs: ['-c:v', 'libvpx', '-deadline', 'realtime', '-b:v', '100k', '-c:a', 'libopus', '-metadata:s:a:0', 'title=KithSecretStream'],
    format: ['-f', 'webm'],
    ext: 'webm'
  },
  'webm-audio': {
    inputs: ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=0.6'],
    codecs: ['-c:a', 'libopus'],
    format: ['-f', 'webm'],
    ext: 'webm'
  },
  'ogg-vorbis': {
    inputs: ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=0.6'],
    codecs: ['-c:a', 'libvorbis'],
    format: ['-f', 'ogg'],
    ext: 'ogg'
  },
  'ogg-opus': {
    inputs: ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=0.6'],
    codecs: ['-c:a', 'libopus'],
    format: ['-f', 'ogg'],
    ext: 'opus'
  }
}

/** A short real file of the sample kind carrying SECRET_TAGS (and more where noted). */
export async function makeMedia (sample: MediaSample): Promise<Buffer> {
  const spec = SAMPLE_ARGS[sample]
  return await withTempDir(async (dir) => {
    const out = join(dir, `out.${spec.ext}`)
    const tags = Object.entries(SECRET_TAGS).flatMap(([k, v]) => ['-metadata', `${k}=${v}`])
    const chapters: string[] = []
    if (spec.chapters === true) {
      await writeFile(join(dir, 'chapters.txt'), CHAPTERS)
      chapters.push('-i', join(dir, 'chapters.txt'), '-map_chapters', String(spec.inputs.filter((a) => a === '-i').length))
    }
    await ffmpeg(['-v', 'error', ...spec.inputs, ...chapters, ...spec.codecs, ...tags, ...spec.format, out])
    return await readFile(out)
  })
}

export interface MediaInfo {
  /** every tag ffmpeg reads in the input, global and per stream, as [key (lowercase), value] */
  tags: Array<[string, string]>
  /** the "Stream #0:n ..." lines */
  streams: string[]
  /** ffmpeg's description of the input */
  report: string
}

/** What ffmpeg reads in the bytes: its tags (global and per stream) and its streams. */
export async function mediaInfo (bytes: Buffer, ext: string): Promise<MediaInfo> {
  return await withTempDir(async (dir) => {
    const file = join(dir, `in.${ext}`)
    await writeFile(file, bytes)
    const { stderr } = await ffmpeg(['-i', file, '-f', 'ffmetadata', '-'])
    const report = stderr.split(/^Output #0/m)[0]
    const lines = report.split('\n')
    const streams = lines.map((l) => l.trim()).filter((l) => l.startsWith('Stream #0:'))
    const tags: Array<[string, string]> = []
    let inMetadata = false
    for (const line of lines) {
      if (/^\s+Metadata:\s*$/.test(line)) { inMetadata = true; continue }
      const tag = /^\s{4,}([^:]+?)\s*: (.*)$/.exec(line)
      if (inMetadata && tag !== null) tags.push([tag[1].toLowerCase(), tag[2]])
      else inMetadata = false
    }
    return { tags, streams, report }
  })
}

/** Whether ffmpeg decodes every stream of the bytes without a single error. */
export async function decodesCleanly (bytes: Buffer, ext: string): Promise<string> {
  return await withTempDir(async (dir) => {
    const file = join(dir, `in.${ext}`)
    await writeFile(file, bytes)
    const { stderr } = await ffmpeg(['-v', 'error', '-i', file, '-f', 'null', '-'])
    return stderr.trim()
  })
}

/** Tags of a test photo: camera, serial, time, GPS position, XMP creator, IPTC by-line and city. */
export const PHOTO_TAGS = [
  '-Make=KithCam', '-Model=X1 Pro', '-SerialNumber=SN-0042', '-DateTimeOriginal=2026:05:01 12:00:00',
  '-GPSLatitude=52.5200', '-GPSLatitudeRef=N', '-GPSLongitude=13.4050', '-GPSLongitudeRef=E',
  '-XMP-dc:Creator=Secret Photographer', '-XMP-dc:Description=home address', '-IPTC:By-line=Secret Photographer', '-IPTC:City=Berlin'
]

/** A JPEG photo of width × height (a gradient, so it is a real picture) with an ICC profile and PHOTO_TAGS. */
export async function photoWithMetadata (width: number, height: number): Promise<Buffer> {
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
  return await exifWrite(jpeg, 'jpg', PHOTO_TAGS)
}
