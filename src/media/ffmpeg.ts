/**
 * ffmpeg for the reference sidecar: a maintained build from the operating system (Debian's
 * `ffmpeg` package, security-patched with the distribution), never a bundled one: ffmpeg parses
 * hostile uploads. Also the metadata-stripping remux each format gets.
 */
import { spawn } from 'node:child_process'
import { accessSync, constants, statSync } from 'node:fs'
import { delimiter, join } from 'node:path'

export const FFMPEG_INSTALL_HINT = 'install Debian\'s ffmpeg (apt-get install ffmpeg) or set SVC_FFMPEG_PATH to an ffmpeg binary'
const SYSTEM_FFMPEG = '/usr/bin/ffmpeg'

function isExecutableFile (path: string): boolean {
  try {
    accessSync(path, constants.X_OK)
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/**
 * The ffmpeg binary: SVC_FFMPEG_PATH when set, else `ffmpeg` on PATH, else /usr/bin/ffmpeg.
 * Throws an Error saying what to install when there is none.
 */
export function ffmpegPath (env: NodeJS.ProcessEnv = process.env): string {
  const configured = (env.SVC_FFMPEG_PATH ?? '').trim()
  if (configured !== '') {
    if (!isExecutableFile(configured)) throw new Error(`SVC_FFMPEG_PATH=${configured} is not an executable file: ${FFMPEG_INSTALL_HINT}`)
    return configured
  }
  const candidates = (env.PATH ?? '').split(delimiter).filter((dir) => dir !== '').map((dir) => join(dir, 'ffmpeg'))
  const found = [...candidates, SYSTEM_FFMPEG].find(isExecutableFile)
  if (found === undefined) throw new Error(`no ffmpeg found on PATH or at ${SYSTEM_FFMPEG}: ${FFMPEG_INSTALL_HINT}`)
  return found
}

export interface RunResult {
  code: number | null
  signal: NodeJS.Signals | null
  /** the last lines of stderr (bounded) */
  stderr: string
  timedOut: boolean
}

const STDERR_KEPT = 8192

/** Runs the ffmpeg at `binary`; SIGKILL past `timeoutMs` or when `signal` aborts. */
export async function runFfmpeg (binary: string, args: string[], timeoutMs: number, signal?: AbortSignal): Promise<RunResult> {
  return await new Promise<RunResult>((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] })
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

/**
 * Generous: the first run after `apt-get install` loads some 100 shared libraries from a cold
 * page cache, and on a loaded machine that once took longer than 10 s (a CI run's sidecar failed
 * to start). It is a start-up check, so waiting costs nothing when all is well.
 */
const VERSION_TIMEOUT_MS = 60_000

/** `ffmpeg version 5.1.6-0+deb12u1 Copyright ...` → `5.1.6-0+deb12u1`. */
export async function ffmpegVersion (binary: string, timeoutMs = VERSION_TIMEOUT_MS): Promise<string> {
  const run = await runFfmpeg(binary, ['-hide_banner', '-version'], timeoutMs)
  if (run.timedOut) throw new Error(`${binary} -version did not answer within ${timeoutMs / 1000} s`)
  const match = /ffmpeg version (\S+)/.exec(run.stderr)
  if (run.code !== 0 || match === null) {
    const how = run.signal !== null ? `killed by ${run.signal}` : `code ${String(run.code)}`
    throw new Error(`${binary} -version failed (${how}): ${run.stderr.slice(0, 300)}`)
  }
  return match[1]
}

interface Remux {
  /** demuxer forced on the input: ffmpeg never guesses (no playlist or concat tricks) */
  demuxer: string
  output: readonly string[]
  /** audio uploads keep their audio streams only, which also drops cover art */
  audioOnly: boolean
}

/** The formats the sidecar accepts, by Content-Type (a Map: the Content-Type is the client's text). */
export const REMUX: ReadonlyMap<string, Remux> = new Map(Object.entries({
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
} satisfies Record<string, Remux>))

/**
 * The stream-copy remux that drops container and stream metadata: global and stream tags,
 * chapters, attached pictures and data streams; bitexact so no encoder tag is written.
 */
export function remuxArgs (mime: string, input: string, output: string): string[] {
  const remux = REMUX.get(mime)
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
