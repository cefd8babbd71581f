import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { appendFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Journal, journalRecord } from '../../../src/relay/journal.js'
import { withTempDir } from './helpers.js'

function record (text: string): Buffer {
  const { record, payload } = journalRecord(Buffer.byteLength(text))
  payload.write(text)
  return record
}

function reopen (dir: string): { journal: Journal, replayed: string[] } {
  const replayed: string[] = []
  const journal = new Journal(dir, (payloads) => { for (const p of payloads) replayed.push(p.toString()) })
  return { journal, replayed }
}

const segments = (dir: string): string[] => readdirSync(dir).filter((n) => n.startsWith('journal-')).sort()

describe('Journal', () => {
  test('appends resolve in order with sequence numbers; unreleased records are replayed, in order, at the next open', async () => {
    await withTempDir(async (dir) => {
      const { journal, replayed } = reopen(dir)
      assert.deepEqual(replayed, [])
      const seqs = await Promise.all(['a', 'b', 'c'].map((t) => journal.append(record(t))))
      assert.deepEqual(seqs, [0, 1, 2])
      assert.equal(await journal.append(record('d')), 3)
      await journal.close()
      const second = reopen(dir)
      assert.deepEqual(second.replayed, ['a', 'b', 'c', 'd'])
      await second.journal.close()
      // replayed segments are removed once `replay` returns
      assert.deepEqual(reopen(dir).replayed, [])
    })
  })

  test('large groups (written synchronously) and small ones (thread pool) are answered and replayed in append order', async () => {
    await withTempDir(async (dir) => {
      const { journal } = reopen(dir)
      const first = journal.append(record('solo')) // a group of one: thread pool
      await new Promise((resolve) => setImmediate(resolve)) // its write is under way
      const many = Array.from({ length: 20 }, (_, i) => `m${i}`) // a group of 20 waits for it, then is written synchronously
      const order: string[] = []
      const all = [first.then(() => order.push('solo')), ...many.map(async (t) => { await journal.append(record(t)); order.push(t) })]
      await Promise.all(all)
      assert.deepEqual(order, ['solo', ...many])
      await journal.close()
      assert.deepEqual(reopen(dir).replayed, ['solo', ...many])
    })
  })

  test('close writes what is still queued and waits for a write under way', async () => {
    await withTempDir(async (dir) => {
      const { journal } = reopen(dir)
      const first = journal.append(record('one')) // written by the thread pool on the next check phase
      await new Promise((resolve) => setImmediate(resolve))
      const second = journal.append(record('two')) // queued behind it
      let secondAnswered = false
      void second.then(() => { secondAnswered = true })
      await journal.close()
      // microtasks only: an answer that still needed the thread pool could not arrive in them
      for (let i = 0; i < 10; i++) await Promise.resolve()
      assert.equal(secondAnswered, true, 'answered when close returns: nothing is still being written when the file is closed')
      assert.deepEqual(await Promise.all([first, second]), [0, 1])
      assert.deepEqual(reopen(dir).replayed, ['one', 'two'])
    })
  })

  test('a torn last record and a record with a bad checksum end the replay; what precedes them is kept', async () => {
    await withTempDir(async (dir) => {
      const { journal } = reopen(dir)
      for (const t of ['one', 'two', 'three']) await journal.append(record(t))
      await journal.close()
      const [name] = segments(dir)
      const file = join(dir, name)
      appendFileSync(file, record('torn').subarray(0, 9)) // header and one payload byte, length says 4
      assert.deepEqual(reopen(dir).replayed.slice(0, 3), ['one', 'two', 'three'])

      const { journal: j2 } = reopen(dir)
      for (const t of ['four', 'five']) await j2.append(record(t))
      await j2.close()
      const [name2] = segments(dir)
      const bytes = readFileSync(join(dir, name2))
      bytes[record('four').length + record('five').length - 1] ^= 0xff // corrupt the last payload byte of 'five' (a reused segment: older bytes follow)
      writeFileSync(join(dir, name2), bytes)
      assert.deepEqual(reopen(dir).replayed, ['four'])
    })
  })

  test('release drops the segments whose records are all below the given sequence number', async () => {
    await withTempDir(async (dir) => {
      const { journal } = reopen(dir)
      await journal.append(record('a'))
      await journal.append(record('b'))
      journal.release(1) // 'b' is not durable elsewhere yet: its segment stays
      assert.equal(segments(dir).length, 1)
      journal.release(2) // idle, all below 2: a fresh segment, the old one removed
      assert.equal(segments(dir).length, 1)
      await journal.append(record('c'))
      await journal.close()
      assert.deepEqual(reopen(dir).replayed, ['c'])
    })
  })

  test('released segments are reused as spares; the old records a reused segment still holds are never replayed', async () => {
    await withTempDir(async (dir) => {
      const { journal } = reopen(dir)
      for (const t of ['a', 'b', 'c']) await journal.append(record(t))
      journal.release(3) // segment 1 becomes a spare, still holding a, b and c
      assert.deepEqual(readdirSync(dir).filter((n) => n.endsWith('.log')).sort(), ['journal-0000000002.log', 'spare-0000000001.log'])
      await journal.append(record('d'))
      journal.release(4) // segment 3 is the old segment 1
      assert.deepEqual(readdirSync(dir).filter((n) => n.endsWith('.log')).sort(), ['journal-0000000003.log', 'spare-0000000002.log'])
      await journal.append(record('e')) // overwrites 'a'; 'b' and 'c' follow it in the file
      await journal.close()
      assert.equal(readFileSync(join(dir, 'journal-0000000003.log')).length, 3 * record('a').length)
      assert.deepEqual(reopen(dir).replayed, ['e'])
    })
  })

  test('at most two spares are kept; numbering continues past them', async () => {
    await withTempDir(async (dir) => {
      for (let n = 1; n <= 5; n++) writeFileSync(join(dir, `journal-000000000${n}.log`), '')
      const { journal } = reopen(dir)
      await journal.close()
      assert.deepEqual(readdirSync(dir).filter((n) => n.endsWith('.log')).sort(),
        ['journal-0000000006.log', 'spare-0000000001.log', 'spare-0000000002.log'])
      rmSync(join(dir, 'journal-0000000006.log'))
      reopen(dir) // no segment left: the new one is numbered after the spares, and takes the oldest
      assert.deepEqual(readdirSync(dir).filter((n) => n.endsWith('.log')).sort(), ['journal-0000000003.log', 'spare-0000000002.log'])
    })
  })
})
