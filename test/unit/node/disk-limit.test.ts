import { afterEach, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { pino, type Logger } from 'pino'
import { allocatedBytes, watchChainDisk } from '../../../src/node/disk-limit.js'

function capture (): { logger: Logger, lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk: Buffer, _enc, done) { lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>); done() } })
  const logger: Logger = pino({ level: 'info' }, stream)
  return { logger, lines }
}

const settle = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

describe('chain disk limit (advisory)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kith-disk-limit-'))
  afterEach(() => rmSync(join(dir, 'data.mdb'), { force: true }))

  test('counts the blocks a file occupies, not its length', () => {
    const file = join(dir, 'data.mdb')
    writeFileSync(file, Buffer.alloc(3 * 1024 * 1024, 1))
    assert.ok(allocatedBytes(file) >= 3 * 1024 * 1024)
    assert.equal(allocatedBytes(join(dir, 'missing.mdb')), 0)
  })

  test('a file over the limit is reported at once and at every interval, until stopped', async () => {
    const file = join(dir, 'data.mdb')
    writeFileSync(file, Buffer.alloc(3 * 1024 * 1024, 1))
    const { logger, lines } = capture()
    const watch = watchChainDisk({ file, limitMb: 1, logger, intervalMs: 20 })
    assert.equal(lines.length, 1, 'reported at start, before the first interval')
    assert.equal(lines[0].level, 40, 'as a warning')
    assert.equal(lines[0].limitMb, 1)
    assert.equal(lines[0].chainMb, 3)
    for (const deadline = Date.now() + 5000; lines.length < 3 && Date.now() < deadline;) await settle(10)
    watch.stop()
    const reported = lines.length
    assert.ok(reported >= 3, `reported again at each interval (${reported} lines)`)
    await settle(100)
    assert.equal(lines.length, reported, 'nothing after stop()')
  })

  test('a file under the limit is not reported', async () => {
    const file = join(dir, 'data.mdb')
    writeFileSync(file, Buffer.alloc(512 * 1024, 1))
    const { logger, lines } = capture()
    const watch = watchChainDisk({ file, limitMb: 1, logger, intervalMs: 20 })
    await settle(60)
    watch.stop()
    assert.equal(lines.length, 0)
  })
})
