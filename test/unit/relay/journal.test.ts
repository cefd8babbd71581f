import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { appendFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Journal, journalRecord, type JournalPosition } from '../../../src/relay/journal.js'
import { withTempDir } from './helpers.js'

function record (text: string): Buffer {
  const { record, payload } = journalRecord(Buffer.byteLength(text))
  payload.write(text)
  return record
}

function reopen (dir: string, firstKept = 0): { journal: Journal, replayed: string[], at: JournalPosition[] } {
  const replayed: string[] = []
  const at: JournalPosition[] = []
  const journal = new Journal(dir, firstKept, (payload, position) => { replayed.push(payload.toString()); at.push(position) })
  return { journal, replayed, at }
}

const segments = (dir: string): string[] => readdirSync(dir).filter((n) => n.startsWith('journal-')).sort()
const files = (dir: string): string[] => readdirSync(dir).filter((n) => n.endsWith('.log')).sort()
const text = (journal: Journal, at: JournalPosition, length: number): string | undefined => journal.read(at.segment, at.offset, length)?.toString()

describe('Journal', () => {
  test('appends resolve in order with their positions, where read finds them; kept segments are replayed at every open, with the same positions', async () => {
    await withTempDir(async (dir) => {
      const { journal, replayed } = reopen(dir)
      assert.deepEqual(replayed, [])
      const positions = await Promise.all(['a', 'b', 'c'].map((t) => journal.append(record(t))))
      assert.deepEqual(positions, [8, 17, 26].map((offset) => ({ segment: 1, offset })))
      const d = await journal.append(record('dd'))
      assert.deepEqual(positions.map((at) => text(journal, at, 1)), ['a', 'b', 'c'])
      assert.equal(text(journal, d, 2), 'dd')
      await journal.close()
      const second = reopen(dir)
      assert.deepEqual(second.replayed, ['a', 'b', 'c', 'dd'])
      assert.deepEqual(second.at, [...positions, d])
      assert.equal(text(second.journal, d, 2), 'dd')
      await second.journal.append(record('e'))
      await second.journal.close()
      // segment 1 is kept until released; segment 2 (opened by the second) too
      assert.deepEqual(reopen(dir).replayed, ['a', 'b', 'c', 'dd', 'e'])
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
      assert.deepEqual(await Promise.all([first, second]), [{ segment: 1, offset: 8 }, { segment: 1, offset: 8 + record('one').length }])
      assert.deepEqual(reopen(dir).replayed, ['one', 'two'])
    })
  })

  test('a torn last record and a record with a bad checksum end the replay of their segment; what precedes them is kept', async () => {
    await withTempDir(async (dir) => {
      const { journal } = reopen(dir)
      for (const t of ['one', 'two', 'three']) await journal.append(record(t))
      await journal.close()
      const [name] = segments(dir)
      appendFileSync(join(dir, name), record('torn').subarray(0, 9)) // header and one payload byte, length says 4
      assert.deepEqual(reopen(dir).replayed, ['one', 'two', 'three'])

      // the journal goes on in a new segment, past the torn one
      const { journal: j2 } = reopen(dir)
      for (const t of ['four', 'five']) await j2.append(record(t))
      await j2.close()
      const name2 = segments(dir).at(-1) as string
      const bytes = readFileSync(join(dir, name2))
      bytes[record('four').length + record('five').length - 1] ^= 0xff // corrupt the last payload byte of 'five'
      writeFileSync(join(dir, name2), bytes)
      assert.deepEqual(reopen(dir).replayed, ['one', 'two', 'three', 'four'])
    })
  })

  test('cut starts a new segment; release recycles a closed one, and read then finds nothing; an open recycles those below firstKept', async () => {
    await withTempDir(async (dir) => {
      const { journal } = reopen(dir)
      const a = await journal.append(record('a'))
      assert.equal(await journal.cut(), 2)
      assert.equal(await journal.cut(), 2, 'the new segment is still empty: no other')
      const b = await journal.append(record('b'))
      assert.deepEqual([a.segment, b.segment, journal.current], [1, 2, 2])
      assert.deepEqual(journal.closedSegments, [1])
      journal.release(2) // the current one: kept
      assert.equal(text(journal, b, 1), 'b')
      journal.release(1)
      assert.equal(text(journal, a, 1), undefined)
      assert.deepEqual(files(dir), ['journal-0000000002.log', 'spare-0000000001.log'])
      await journal.close()
      const { journal: j2, replayed } = reopen(dir, 3) // segment 2 is held elsewhere
      assert.deepEqual(replayed, [])
      await j2.close()
      // (the new segment 3 is the spare that was segment 1)
      assert.deepEqual(files(dir), ['journal-0000000003.log', 'spare-0000000002.log'])
    })
  })

  test('released segments are reused as spares; the old records a reused segment still holds are never replayed', async () => {
    await withTempDir(async (dir) => {
      const { journal } = reopen(dir)
      for (const t of ['a', 'b', 'c']) await journal.append(record(t))
      await journal.cut()
      journal.release(1) // segment 1 becomes a spare, still holding a, b and c
      assert.deepEqual(files(dir), ['journal-0000000002.log', 'spare-0000000001.log'])
      await journal.append(record('d'))
      await journal.cut() // segment 3 is the old segment 1
      journal.release(2)
      assert.deepEqual(files(dir), ['journal-0000000003.log', 'spare-0000000002.log'])
      await journal.append(record('e')) // overwrites 'a'; 'b' and 'c' follow it in the file
      await journal.close()
      assert.equal(readFileSync(join(dir, 'journal-0000000003.log')).length, 3 * record('a').length)
      assert.deepEqual(reopen(dir).replayed, ['e'])
    })
  })

  test('at most two spares are kept; numbering continues past them', async () => {
    await withTempDir(async (dir) => {
      for (let n = 1; n <= 5; n++) writeFileSync(join(dir, `journal-000000000${n}.log`), '')
      const { journal } = reopen(dir, 6) // all five held elsewhere: two become spares, and the new segment 6 takes the first
      await journal.close()
      assert.deepEqual(files(dir), ['journal-0000000006.log', 'spare-0000000002.log'])
      rmSync(join(dir, 'journal-0000000006.log'))
      reopen(dir) // no segment left: the new one is numbered after the spares, and takes the oldest
      assert.deepEqual(files(dir), ['journal-0000000003.log'])
      rmSync(join(dir, 'journal-0000000003.log'))
      // nor below firstKept, though its segments are gone: the next open would recycle it unread
      reopen(dir, 10)
      assert.deepEqual(files(dir), ['journal-0000000010.log'])
    })
  })
})
