/**
 * ffmpeg for the reference sidecar: the static binary that the npm package
 * `@ffmpeg-installer/ffmpeg` ships for this platform (ffmpeg 4.1, 2018-12-10 static build), so
 * nothing is downloaded at run time. Also the metadata-stripping remux each format gets.
 */
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'

let cachedPath: string | undefined

/** Path of the ffmpeg binary; throws a clear Error when the platform has none. */
export function ffmpegPath (): string {
  if (cachedPath !== undefined) return cachedPath
  try {
    const installer = createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg') as { path: string }
    cachedPath = installer.path
    return cachedPath
  } catch (err) {
    // the package throws a string for an unsupported platform
    throw new Error(`no ffmpeg binary: @ffmpeg-installer/ffmpeg has none for ${process.platform}-${process.arch} (${err instanceof Error ? err.message : String(err)})`, { cause: err })
  }
}

export interface RunResult {
  code: number | null
  signal: NodeJS.Signals | null
  /** the last lines of stderr (bounded) */
  stderr: string
  timedOut: boolean
}

const STDERR_KEPT = 8192

/** Runs ffmpeg; SIGKILL past `timeoutMs` or when `signal` aborts. */
export async function runFfmpeg (args: string[], timeoutMs: number, signal?: AbortSignal): Promise<RunResult> {
  return await new Promise<RunResult>((resolve, reject) => {
    const child = spawn(ffmpegPath(), args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    let stdout = ''
    let timedOut = false
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout = (stdout + chunk).slice(-STDERR_KEPT) })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr = (stderr + chunk).slice(-STDERR_KEPT) })
    const kill = (): void => { child.kill('SIGKILL') }
    const timer = setTimeout(() => { timedOut = true; kill() }, timeoutMs)
    signal?.addEventListener('abort', kill, { once: true })
    child.once('error', (err) => { clearTimeout(timer); reject(err) })
    child.once('close', (code, sig) => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', kill)
      resolve({ code, signal: sig, stderr: stderr === '' ? stdout : stderr, timedOut })
    })
  })
}

/** `ffmpeg version N-47683-g0e8eb07980-static ...` → `N-47683-g0e8eb07980-static`. */
export async function ffmpegVersion (): Promise<string> {
  const run = await runFfmpeg(['-hide_banner', '-version'], 10_000)
  const match = /ffmpeg version (\S+)/.exec(run.stderr)
  if (run.code !== 0 || match === null) throw new Error(`ffmpeg -version failed (code ${String(run.code)}): ${run.stderr.slice(0, 300)}`)
  return match[1]
}

interface Remux {
  /** demuxer forced on the input: ffmpeg never guesses (no playlist or concat tricks) */
  demuxer: string
  output: readonly string[]
  /** audio uploads keep their audio streams only, which also drops cover art */
  audioOnly: boolean
}

/** The formats the sidecar accepts, by Content-Type. */
export const REMUX: Readonly<Record<string, Remux>> = {
  'video/mp4': { demuxer: 'mov', output: ['-f', 'mp4', '-movflags', '+faststart'], audioOnly: false },
  'audio/mp4': { demuxer: 'mov', output: ['-f', 'mp4', '-brand', 'M4A ', '-movflags', '+faststart'], audioOnly: true },
  'audio/x-m4a': { demuxer: 'mov', output: ['-f', 'mp4', '-brand', 'M4A ', '-movflags', '+faststart'], audioOnly: true },
  'video/webm': { demuxer: 'matroska', output: ['-f', 'webm'], audioOnly: false },
  'audio/webm': { demuxer: 'matroska', output: ['-f', 'webm'], audioOnly: true },
  'video/ogg': { demuxer: 'ogg', output: ['-f', 'ogg'], audioOnly: false },
  'audio/ogg': { demuxer: 'ogg', output: ['-f', 'ogg'], audioOnly: true },
  'audio/opus': { demuxer: 'ogg', output: ['-f', 'ogg'], audioOnly: true },
  // no ID3v2 or ID3v1 tag at all (ID3 holds the tags and the cover picture)
  'audio/mpeg': { demuxer: 'mp3', output: ['-f', 'mp3', '-id3v2_version', '0', '-write_id3v1', '0'], audioOnly: true }
}

/**
 * The stream-copy remux that drops container and stream metadata: global and stream tags,
 * chapters, attached pictures and data streams; bitexact so no encoder tag is written.
 */
export function remuxArgs (mime: string, input: string, output: string): string[] {
  const remux = REMUX[mime]
  if (remux === undefined) throw new Error(`no remux for ${mime}`)
  // 0:V is video that is not an attached picture; subtitles, data and attachments are not mapped
  const maps = remux.audioOnly ? ['-map', '0:a'] : ['-map', '0:V?', '-map', '0:a?']
  return [
    '-nostdin', '-hide_banner', '-loglevel', 'error', '-y',
    '-protocol_whitelist', 'file', '-f', remux.demuxer, '-i', input,
    ...maps, '-c', 'copy',
    '-map_metadata', '-1', '-map_chapters', '-1',
    '-fflags', '+bitexact', '-flags:v', '+bitexact', '-flags:a', '+bitexact',
    ...remux.output, output
  ]
}
