/**
 * The reference media sidecar as users run it (`bin/kith sidecar --listen 127.0.0.1:0`, a real
 * child process with the system's ffmpeg, Debian's 5.1 here): real MP4, MP3, M4A, WebM and Ogg files carrying tags,
 * chapters, GPS and a cover picture go in, come out without them and still decode; its error
 * answers; and the node-side MediaScrubber against it and against stand-in sidecars that fail.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, symlink } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { pino } from 'pino'
import { KithError } from '../../src/errors/index.js'
import { STATUS_BY_CODE } from '../../src/api/errors.js'
import { MediaScrubber, ffmpegPath, readMediaEnv, type MediaEnv } from '../../src/media/index.js'
import {
  SECRET_CHAPTER, SECRET_LOCATION, SECRET_TAGS, decodesCleanly, makeMedia, mediaInfo, type MediaSample
} from '../helpers/media-files.js'
import { KITH_BIN, REPO_ROOT, childEnv, errorMessage, http, startSidecar, type SidecarProcess } from '../helpers/node-process.js'

async function post (url: string, body: Buffer, contentType: string): Promise<{ status: number, type: string | null, bytes: Buffer }> {
  const res = await fetch(`${url}/v1/scrub`, { method: 'POST', body: new Uint8Array(body), headers: { 'content-type': contentType } })
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) }
}

const SECRET_VALUES = [...Object.values(SECRET_TAGS), SECRET_LOCATION, SECRET_CHAPTER, '48.8566', 'KithSecretHandler', 'KithSecretStream', 'Cover (front)']

interface Case {
  sample: MediaSample
  mime: string
  ext: string
  /** tags (lowercase key → value) the input must carry */
  inputTags: Array<[string, RegExp]>
  /** streams the output keeps */
  outputStreams: RegExp[]
}

const CASES: Case[] = [
  {
    sample: 'mp4', mime: 'video/mp4', ext: 'mp4',
    inputTags: [['title', /KithSecretTitle/], ['artist', /Alice/], ['comment', /hidden/], ['location', /48\.8566/], ['creation_time', /^2026-01-02/], ['handler_name', /KithSecretHandler/], ['encoder', /^Lavf\d/]],
    outputStreams: [/Video: h264/, /Audio: aac/]
  },
  {
    sample: 'mp3', mime: 'audio/mpeg', ext: 'mp3',
    inputTags: [['title', /KithSecretTitle/], ['artist', /Alice/], ['comment', /hidden/], ['comment', /Cover \(front\)/], ['encoder', /^Lavf\d/]],
    outputStreams: [/Audio: mp3/]
  },
  {
    sample: 'm4a', mime: 'audio/mp4', ext: 'm4a',
    inputTags: [['title', /KithSecretTitle/], ['artist', /Alice/], ['creation_time', /^2026-01-02/]],
    outputStreams: [/Audio: aac/]
  },
  {
    sample: 'webm', mime: 'video/webm', ext: 'webm',
    inputTags: [['title', /KithSecretTitle/], ['artist', /Alice/], ['title', /KithSecretStream/]],
    outputStreams: [/Video: vp8/, /Audio: opus/]
  },
  {
    sample: 'ogg-vorbis', mime: 'audio/ogg', ext: 'ogg',
    inputTags: [['title', /KithSecretTitle/], ['artist', /Alice/], ['comment', /hidden/], ['encoder', /Lavc/]],
    outputStreams: [/Audio: vorbis/]
  },
  {
    sample: 'ogg-opus', mime: 'audio/ogg', ext: 'ogg',
    inputTags: [['title', /KithSecretTitle/], ['artist', /Alice/]],
    outputStreams: [/Audio: opus/]
  }
]

let sidecar: SidecarProcess
const samples: Partial<Record<MediaSample, Buffer>> = {}
const standIns: Server[] = []

before(async () => {
  sidecar = await startSidecar(['--max-bytes', '1000000'])
  for (const c of CASES) samples[c.sample] = await makeMedia(c.sample)
})

after(async () => {
  for (const server of standIns) server.closeAllConnections()
  await Promise.all(standIns.map(async (server) => await new Promise((resolve) => server.close(resolve))))
  if (sidecar !== undefined && sidecar.child.exitCode === null) sidecar.child.kill('SIGKILL')
})

describe('bin/kith sidecar', () => {
  it('GET /v1/health and the start-up log name the version of the system ffmpeg it runs, not a bundled 2018 build', async () => {
    const res = await http(sidecar.url, 'GET', '/v1/health')
    assert.equal(res.status, 200)
    const body = res.json as { status: string, ffmpeg: string }
    assert.equal(body.status, 'ok')
    const { stdout } = await promisify(execFile)(ffmpegPath(), ['-hide_banner', '-version'])
    assert.equal(body.ffmpeg, /^ffmpeg version (\S+)/.exec(stdout)?.[1], 'the version of the ffmpeg found on PATH')
    assert.doesNotMatch(body.ffmpeg, /^N-47683|static/, 'not the @ffmpeg-installer build')
    const listening = sidecar.output.join('').split('\n').find((line) => line.includes('"msg":"sidecar listening"'))
    assert.ok(listening !== undefined)
    assert.equal((JSON.parse(listening) as { ffmpeg?: string }).ffmpeg, body.ffmpeg)
  })

  for (const c of CASES) {
    it(`${c.sample}: its tags (and chapters, location, creation time, cover art where it had them) are gone; it still decodes`, async () => {
      const input = samples[c.sample] as Buffer
      const before = await mediaInfo(input, c.ext)
      for (const [key, value] of c.inputTags) {
        assert.ok(before.tags.some(([k, v]) => k === key && value.test(v)), `input ${c.sample} lacks ${key}=${String(value)}: ${JSON.stringify(before.tags)}`)
      }
      if (c.sample === 'mp4') assert.match(before.report, /Chapter #0:0/)
      if (c.sample === 'mp3') assert.ok(before.streams.some((s) => /Video: png/.test(s)), 'input mp3 has no cover picture')

      const res = await post(sidecar.url, input, c.mime)
      assert.equal(res.status, 200, res.bytes.toString())
      assert.equal(res.type, c.mime)
      const out = await mediaInfo(res.bytes, c.ext)
      const secretTags = out.tags.filter(([k, v]) => ['title', 'artist', 'comment', 'location', 'location-eng', 'creation_time', 'date'].includes(k) || SECRET_VALUES.some((s) => v.includes(s)))
      assert.deepEqual(secretTags, [], `${c.sample}: tags left`)
      // an encoder tag naming a version is gone; WebM's muxer still writes the bare word "Lavf"
      assert.deepEqual(out.tags.filter(([k, v]) => k === 'encoder' && v !== 'Lavf'), [], `${c.sample}: encoder tag left`)
      assert.doesNotMatch(out.report, /Chapter #/)
      for (const secret of SECRET_VALUES) assert.ok(!res.bytes.includes(secret), `${c.sample}: output bytes still contain "${secret}"`)
      assert.equal(out.streams.length, c.outputStreams.length, out.streams.join('\n'))
      c.outputStreams.forEach((pattern, i) => assert.match(out.streams[i], pattern))
      assert.equal(await decodesCleanly(res.bytes, c.ext), '', `${c.sample}: output does not decode cleanly`)
    })
  }

  it('refuses what ffmpeg cannot parse with 422 and a JSON error', async () => {
    // a real ftyp box, then garbage: it passes the magic check and fails in ffmpeg
    const broken = Buffer.concat([(samples.mp4 as Buffer).subarray(0, 32), Buffer.alloc(4000, 0x5a)])
    const res = await http(sidecar.url, 'POST', '/v1/scrub', { rawBody: broken.toString('latin1'), headers: { 'content-type': 'video/mp4' } })
    assert.equal(res.status, 422)
    assert.match(errorMessage(res), /^ffmpeg could not process the file as video\/mp4: /)
    assert.doesNotMatch(errorMessage(res), /kith-sidecar-/)
  })

  it('refuses bytes that are not the declared type with 422', async () => {
    const res = await post(sidecar.url, Buffer.from('definitely not a video'), 'video/mp4')
    assert.equal(res.status, 422)
    assert.match(res.bytes.toString(), /Content-Type is video\/mp4 but the bytes are not a recognised/)
  })

  it('refuses an unsupported Content-Type with 415, JavaScript built-in names included', async () => {
    for (const type of ['image/png', 'text/plain', 'video/quicktime', '__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const res = await post(sidecar.url, samples.mp4 as Buffer, type)
      assert.equal(res.status, 415, type)
      assert.match(JSON.parse(res.bytes.toString()).error as string, /is not supported; supported: video\/mp4/)
    }
  })

  it('refuses a body over its cap with 413', async () => {
    const res = await post(sidecar.url, Buffer.alloc(1_000_001, 0), 'video/mp4')
    assert.equal(res.status, 413)
    assert.match(JSON.parse(res.bytes.toString()).error as string, /larger than this sidecar's limit of 1000000 bytes/)
    // the connection and the sidecar are fine afterwards
    assert.equal((await post(sidecar.url, samples.mp3 as Buffer, 'audio/mpeg')).status, 200)
  })

  it('unknown paths are 404 and other methods 405, as JSON', async () => {
    assert.equal((await http(sidecar.url, 'GET', '/nope')).status, 404)
    const res = await http(sidecar.url, 'GET', '/v1/scrub')
    assert.equal(res.status, 405)
    assert.match(errorMessage(res), /not allowed/)
  })
})

/** A stand-in sidecar (a tiny local server): answers with `status`, or never when undefined. */
async function standIn (status: number | undefined): Promise<string> {
  const server = createServer((req, res) => {
    req.resume()
    if (status === undefined) return
    req.once('end', () => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: 'stand-in failure' }))
    })
  })
  standIns.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

describe('MediaScrubber and the sidecar', () => {
  const scrubbers: MediaScrubber[] = []
  const scrubberWith = (env: Partial<MediaEnv>): MediaScrubber => {
    const s = MediaScrubber.start({ env: { ...readMediaEnv({}), ...env }, logger: pino({ level: 'silent' }), workers: 1 })
    scrubbers.push(s)
    return s
  }
  after(async () => { await Promise.all(scrubbers.map(async (s) => { await s.stop() })) })

  async function failsWith (promise: Promise<unknown>, code: string, message: RegExp): Promise<void> {
    await assert.rejects(promise, (err: unknown) => {
      assert.ok(err instanceof KithError, `expected a KithError, got ${String(err)}`)
      assert.equal(err.code, code, err.message)
      assert.match(err.message, message)
      return true
    })
  }

  it('video and audio pass through the real sidecar and come back scrubbed', async () => {
    const scrubber = scrubberWith({ sidecarUrl: sidecar.url })
    const video = await scrubber.scrub(samples.mp4 as Buffer, 'video/mp4')
    assert.deepEqual([video.kind, video.mime], ['video', 'video/mp4'])
    assert.ok(!video.bytes.includes('KithSecretTitle'))
    assert.ok(!video.bytes.equals(samples.mp4 as Buffer))
    const audio = await scrubber.scrub(samples.m4a as Buffer, 'audio/x-m4a')
    assert.deepEqual([audio.kind, audio.mime], ['audio', 'audio/mp4'])
    assert.ok(!audio.bytes.includes('Alice Kithsecret'))
  })

  it('a sidecar refusal reaches the uploader as MEDIA_INVALID (400) with its reason', async () => {
    const scrubber = scrubberWith({ sidecarUrl: sidecar.url })
    const broken = Buffer.concat([(samples.mp4 as Buffer).subarray(0, 32), Buffer.alloc(4000, 0x5a)])
    await failsWith(scrubber.scrub(broken, 'video/mp4'), 'MEDIA_INVALID', /^the media sidecar rejected the attachment: ffmpeg could not process the file/)
  })

  it('a sidecar that answers 500 (stand-in) gives MEDIA_SIDECAR_FAILED (502) without its detail', async () => {
    const scrubber = scrubberWith({ sidecarUrl: await standIn(500) })
    await failsWith(scrubber.scrub(samples.mp4 as Buffer, 'video/mp4'), 'MEDIA_SIDECAR_FAILED', /^the media sidecar failed \(HTTP 500\)$/)
    assert.equal(STATUS_BY_CODE.MEDIA_SIDECAR_FAILED, 502)
  })

  it('a sidecar that never answers (stand-in) gives MEDIA_SIDECAR_TIMEOUT (504)', async () => {
    const scrubber = scrubberWith({ sidecarUrl: await standIn(undefined), sidecarTimeoutMs: 300 })
    await failsWith(scrubber.scrub(samples.mp3 as Buffer, 'audio/mpeg'), 'MEDIA_SIDECAR_TIMEOUT', /did not answer within 300 ms/)
    assert.equal(STATUS_BY_CODE.MEDIA_SIDECAR_TIMEOUT, 504)
  })

  it('a sidecar that cannot be reached gives MEDIA_SIDECAR_FAILED (502)', async () => {
    const url = await standIn(500)
    const server = standIns.pop() as Server
    await new Promise((resolve) => server.close(resolve))
    const scrubber = scrubberWith({ sidecarUrl: url })
    await failsWith(scrubber.scrub(samples.mp4 as Buffer, 'video/mp4'), 'MEDIA_SIDECAR_FAILED', /could not be reached/)
  })

  it('without a sidecar, video and audio get MEDIA_NO_SIDECAR (503) naming both settings, after the magic check', async () => {
    const scrubber = scrubberWith({})
    await failsWith(scrubber.scrub(samples.mp4 as Buffer, 'video/mp4'), 'MEDIA_NO_SIDECAR', /SVC_MEDIA_SIDECAR_URL.*SVC_ALLOW_UNSCRUBBED_VIDEO/)
    await failsWith(scrubber.scrub(samples.mp3 as Buffer, 'audio/mpeg'), 'MEDIA_NO_SIDECAR', /^audio attachments need a media scrubbing sidecar/)
    assert.equal(STATUS_BY_CODE.MEDIA_NO_SIDECAR, 503)
    // the magic check still comes first
    await failsWith(scrubber.scrub(samples.mp3 as Buffer, 'video/mp4'), 'MEDIA_TYPE_MISMATCH', /the bytes are an MP3 audio file/)
  })

  it('without a sidecar but with SVC_ALLOW_UNSCRUBBED_VIDEO, the bytes are kept as they are', async () => {
    const scrubber = scrubberWith(readMediaEnv({ SVC_ALLOW_UNSCRUBBED_VIDEO: 'true' }))
    const out = await scrubber.scrub(samples.webm as Buffer, 'video/webm')
    assert.ok(out.bytes.equals(samples.webm as Buffer))
    assert.deepEqual([out.kind, out.mime], ['video', 'video/webm'])
  })
})

describe('bin/kith sidecar lifecycle', () => {
  it('refuses to start without a usable ffmpeg, saying what to install', async () => {
    const { code, stderr } = await new Promise<{ code: number | null, stderr: string }>((resolve) => {
      execFile(KITH_BIN, ['sidecar', '--listen', '127.0.0.1:0'], { cwd: REPO_ROOT, env: childEnv({ SVC_FFMPEG_PATH: '/nonexistent/ffmpeg' }) }, (err, _stdout, stderr) => {
        resolve({ code: err === null ? 0 : (err as { code?: number }).code ?? null, stderr })
      })
    })
    assert.equal(code, 1)
    assert.match(stderr, /SVC_FFMPEG_PATH=\/nonexistent\/ffmpeg is not an executable file: install Debian's ffmpeg \(apt-get install ffmpeg\)/)
  })

  it('SVC_FFMPEG_PATH names the binary it runs', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kith-ffmpeg-'))
    try {
      const named = join(dir, 'operator-ffmpeg')
      await symlink(ffmpegPath(), named)
      const running = await startSidecar([], { SVC_FFMPEG_PATH: named })
      const listening = JSON.parse(running.output.join('').split('\n').find((line) => line.includes('"msg":"sidecar listening"')) ?? '{}') as { ffmpegPath?: string }
      assert.equal(listening.ffmpegPath, named)
      assert.equal((await post(running.url, samples.mp3 as Buffer, 'audio/mpeg')).status, 200)
      running.child.kill('SIGTERM')
      assert.deepEqual(await running.exited, { code: 0, signal: null })
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('kills an ffmpeg run past --timeout-ms (422), then SIGTERM stops it cleanly (exit 0)', async () => {
    const running = await startSidecar(['--timeout-ms', '1'])
    const res = await post(running.url, samples.mp4 as Buffer, 'video/mp4')
    assert.equal(res.status, 422)
    assert.match(res.bytes.toString(), /took longer than 1 ms to process/)
    running.child.kill('SIGTERM')
    assert.deepEqual(await running.exited, { code: 0, signal: null })
    assert.match(running.output.join(''), /"msg":"stopped"/)
  })

  it('SIGINT too, and the shared one after all the tests above', async () => {
    sidecar.child.kill('SIGINT')
    assert.deepEqual(await sidecar.exited, { code: 0, signal: null })
  })
})
