/**
 * The image worker pool behind MediaScrubber, with real worker processes: a worker killed under a
 * job, the queue bound, the per-job deadline, CPU priority, close(), and workers that follow
 * their parent out when it dies.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { pino } from 'pino'
import sharp from 'sharp'
import { KithError } from '../../../src/errors/index.js'
import { STATUS_BY_CODE } from '../../../src/api/errors.js'
import { MediaScrubber, readMediaEnv, type MediaScrubberOptions } from '../../../src/media/index.js'
import { waitFor } from '../../helpers/node-process.js'

const started: MediaScrubber[] = []
function start (opts: Partial<MediaScrubberOptions> = {}): MediaScrubber {
  const scrubber = MediaScrubber.start({ env: readMediaEnv({}), logger: pino({ level: 'silent' }), ...opts })
  started.push(scrubber)
  return scrubber
}

function isAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function failsWith (promise: Promise<unknown>, code: string, message?: RegExp): Promise<KithError> {
  let caught: unknown
  await assert.rejects(promise, (err: unknown) => { caught = err; return true })
  assert.ok(caught instanceof KithError, `expected a KithError, got ${String(caught)}`)
  assert.equal(caught.code, code, caught.message)
  if (message !== undefined) assert.match(caught.message, message)
  return caught
}

let image: Buffer

before(async () => {
  const noise = Buffer.alloc(1600 * 1200 * 3)
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24
  image = await sharp(noise, { raw: { width: 1600, height: 1200, channels: 3 } }).jpeg({ quality: 90 }).toBuffer()
})

after(async () => { await Promise.all(started.map(async (s) => { await s.stop() })) })

describe('MediaScrubber worker pool', () => {
  it('a worker killed under a job fails that job (4xx) and is replaced; the next job succeeds', async () => {
    const scrubber = start({ workers: 1 })
    assert.equal((await scrubber.scrub(image, 'image/jpeg')).width, 1080)
    const [pid] = scrubber.workerPids()
    const job = scrubber.scrub(image, 'image/jpeg')
    process.kill(pid, 'SIGKILL')
    const err = await failsWith(job, 'MEDIA_INVALID', /image could not be processed: the image worker stopped \(SIGKILL\)/)
    assert.ok(STATUS_BY_CODE[err.code] >= 400)
    assert.equal((await scrubber.scrub(image, 'image/jpeg')).width, 1080)
    const [replacement] = scrubber.workerPids()
    assert.notEqual(replacement, pid)
    assert.equal(isAlive(pid), false)
  })

  it('beyond the queue bound, a scrub is refused at once with MEDIA_BUSY (503)', async () => {
    const scrubber = start({ workers: 1, maxQueue: 1 })
    const running = scrubber.scrub(image, 'image/jpeg')
    const waiting = scrubber.scrub(image, 'image/jpeg')
    await failsWith(scrubber.scrub(image, 'image/jpeg'), 'MEDIA_BUSY', /too many images are being scrubbed/)
    assert.equal(STATUS_BY_CODE.MEDIA_BUSY, 503)
    assert.equal((await running).width, 1080)
    assert.equal((await waiting).width, 1080)
    // room again
    assert.equal((await scrubber.scrub(image, 'image/jpeg')).width, 1080)
  })

  it('a job past its deadline fails (4xx) and its worker is killed and replaced', async () => {
    const scrubber = start({ workers: 1, jobTimeoutMs: 5 })
    await failsWith(scrubber.scrub(image, 'image/jpeg'), 'MEDIA_INVALID', /image took too long to decode \(over 0\.005 s\)/)
    const firstPids = scrubber.workerPids()
    await failsWith(scrubber.scrub(image, 'image/jpeg'), 'MEDIA_INVALID', /took too long/)
    assert.notDeepEqual(scrubber.workerPids(), firstPids)
  })

  it('every thread of every worker runs at a lower CPU priority (nice 10)', async () => {
    const scrubber = start({ workers: 2 })
    await Promise.all([scrubber.scrub(image, 'image/jpeg'), scrubber.scrub(image, 'image/jpeg')])
    const pids = scrubber.workerPids()
    assert.equal(pids.length, 2)
    for (const pid of pids) {
      const tids = readdirSync(`/proc/${pid}/task`)
      assert.ok(tids.length > 1)
      for (const tid of tids) {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
        // field 19 (nice) counted after the ")" that closes the command name
        const nice = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])
        assert.equal(nice, 10, `thread ${tid} of worker ${pid} has nice ${nice}`)
      }
    }
  })

  it('close() stops the workers; waiting and later scrubs fail with UNAVAILABLE', async () => {
    const scrubber = MediaScrubber.start({ env: readMediaEnv({}), logger: pino({ level: 'silent' }), workers: 1 })
    assert.equal((await scrubber.scrub(image, 'image/jpeg')).width, 1080)
    const pids = scrubber.workerPids()
    // the running one either finishes before its worker leaves or fails with UNAVAILABLE
    const running = scrubber.scrub(image, 'image/jpeg').then(() => 'done', (err: unknown) => err instanceof KithError ? err.code : err)
    const waiting = scrubber.scrub(image, 'image/jpeg')
    await Promise.all([scrubber.stop(), failsWith(waiting, 'UNAVAILABLE')])
    assert.ok(['done', 'UNAVAILABLE'].includes(String(await running)))
    for (const pid of pids) assert.equal(isAlive(pid), false)
    await failsWith(scrubber.scrub(image, 'image/jpeg'), 'UNAVAILABLE')
  })

  it('validates its options', () => {
    assert.throws(() => MediaScrubber.start({ env: readMediaEnv({}), logger: pino({ level: 'silent' }), workers: 0 }), /workers must be a whole number/)
    assert.throws(() => MediaScrubber.start({ env: readMediaEnv({}), logger: pino({ level: 'silent' }), niceness: 25 }), /niceness must be 0 to 19/)
  })
})

describe('MediaScrubber and its parent process', () => {
  const script = join(fileURLToPath(new URL('.', import.meta.url)), 'orphan-child.js')

  async function runChild (mode: 'wait' | 'end'): Promise<{ pids: number[], exited: Promise<number | null>, kill: () => void }> {
    const child = spawn(process.execPath, [script, mode], { stdio: ['ignore', 'pipe', 'inherit'] })
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    let out = ''
    const pids = await new Promise<number[]>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk
        if (out.includes('\n')) resolve((JSON.parse(out.split('\n')[0]) as { pids: number[] }).pids)
      })
      void exited.then(() => reject(new Error(`child exited before printing its workers: ${out}`)))
    })
    return { pids, exited, kill: () => child.kill('SIGKILL') }
  }

  it('workers exit when their parent is killed with SIGKILL', async () => {
    const { pids, exited, kill } = await runChild('wait')
    assert.equal(pids.length, 2)
    for (const pid of pids) assert.ok(isAlive(pid))
    kill()
    await exited
    await waitFor(() => pids.every((pid) => !isAlive(pid)), 10_000, { message: 'orphaned image workers exited' })
  })

  it('an idle scrubber does not keep its process alive', async () => {
    const { pids, exited } = await runChild('end')
    assert.equal(await exited, 0)
    await waitFor(() => pids.every((pid) => !isAlive(pid)), 10_000, { message: 'image workers exited with their parent' })
  })
})
