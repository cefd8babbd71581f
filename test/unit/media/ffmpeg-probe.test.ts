/**
 * The start-up probe of the sidecar's ffmpeg: the real binary names its version; a binary that
 * hangs (a stand-in shell script, since a real ffmpeg cannot be made to hang on -version) is
 * killed and the error says it did not answer, and one that dies says how.
 */
import assert from 'node:assert/strict'
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { ffmpegPath, ffmpegVersion } from '../../../src/media/index.js'

describe('ffmpegVersion', () => {
  let dir = ''
  before(async () => { dir = await mkdtemp(join(tmpdir(), 'kith-probe-')) })
  after(async () => { await rm(dir, { recursive: true, force: true }) })

  async function script (name: string, body: string): Promise<string> {
    const path = join(dir, name)
    await writeFile(path, `#!/bin/sh\n${body}\n`)
    await chmod(path, 0o755)
    return path
  }

  it('reads the version of the system ffmpeg', async () => {
    assert.match(await ffmpegVersion(ffmpegPath()), /^\d+\.\d+/)
  })

  it('a binary that never answers is killed and the error says so', async () => {
    const hangs = await script('hangs', 'exec sleep 30')
    await assert.rejects(ffmpegVersion(hangs, 200), /-version did not answer within 0.2 s/)
  })

  it('a binary that is killed or prints no version names how it failed', async () => {
    const killed = await script('killed', 'kill -9 $$')
    await assert.rejects(ffmpegVersion(killed), /-version failed \(killed by SIGKILL\)/)
    const wrong = await script('wrong', 'echo "not ffmpeg" >&2; exit 3')
    await assert.rejects(ffmpegVersion(wrong), /-version failed \(code 3\): not ffmpeg/)
  })
})
