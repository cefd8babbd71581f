import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { IdTable, IN_JOURNAL, IN_LOG, IN_TABLE, MailboxArena, MailboxEntries, type Place } from '../../../src/relay/mailbox-index.js'

/** Deterministic 16-byte ids, as sha256 prefixes like the real ones. */
const idOf = (n: number): Buffer => createHash('sha256').update(String(n)).digest().subarray(0, 16)

describe('IdTable', () => {
  test('agrees with a Map through inserts, replacements, deletes and resizes', () => {
    const table = new IdTable()
    const oracle = new Map<string, [number, number]>()
    let seed = 7
    const rand = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n }
    for (let step = 0; step < 20_000; step++) {
      const n = rand(3000)
      const id = idOf(n)
      const hex = id.toString('hex')
      if (rand(3) === 0) {
        assert.equal(table.delete(id), oracle.delete(hex))
      } else {
        table.set(id, 0, n % 17, 1_700_000_000 + n)
        oracle.set(hex, [n % 17, 1_700_000_000 + n])
      }
    }
    assert.equal(table.size, oracle.size)
    for (let n = 0; n < 3000; n++) {
      const slot = table.find(idOf(n))
      const want = oracle.get(idOf(n).toString('hex'))
      if (want === undefined) assert.equal(slot, -1)
      else assert.deepEqual([table.boxOf(slot), table.sentAtOf(slot)], want)
    }
  })

  test('finds an id at an offset inside a larger buffer (an lmdb key)', () => {
    const table = new IdTable()
    const key = Buffer.concat([Buffer.alloc(6), idOf(1), Buffer.alloc(64)])
    table.set(key, 6, 3, 42)
    assert.equal(table.sentAtOf(table.find(idOf(1))), 42)
    assert.equal(table.delete(key, 6), true)
    assert.equal(table.find(idOf(1)), -1)
  })
})

describe('MailboxEntries', () => {
  test('keeps (sent_at, id) order through out-of-order inserts and removals; counts a sender', () => {
    const box = new MailboxEntries(Buffer.alloc(32, 1), 0, new MailboxArena())
    const alice = Buffer.alloc(32, 0xa)
    const bob = Buffer.alloc(32, 0xb)
    const items = Array.from({ length: 200 }, (_, n) => ({ at: 1000 + (n * 37) % 50, id: idOf(n), sender: n % 3 === 0 ? alice : bob }))
    for (const it of items) box.insert(it.at, it.id, 0, it.sender, 0)
    const sorted = [...items].sort((a, b) => a.at - b.at || Buffer.compare(a.id, b.id))
    assert.deepEqual(Array.from({ length: box.length }, (_, i) => box.idHex(i)), sorted.map((it) => it.id.toString('hex')))
    assert.equal(box.countSender(alice), items.filter((it) => it.sender === alice).length)
    // remove every other entry, then check order, lookups and counts again
    const kept = sorted.filter((_, k) => k % 2 === 1)
    for (const it of sorted.filter((_, k) => k % 2 === 0)) box.removeAt(box.indexOf(it.at, it.id))
    assert.deepEqual(Array.from({ length: box.length }, (_, i) => box.idHex(i)), kept.map((it) => it.id.toString('hex')))
    for (const [i, it] of kept.entries()) assert.equal(box.indexOf(it.at, it.id), i)
    assert.equal(box.countSender(bob), kept.filter((it) => it.sender === bob).length)
    assert.equal(box.lowerBound(1025), kept.findIndex((it) => it.at >= 1025))
  })

  test('a journaled entry keeps its position while marked copied, and reads from the mailbox table once promoted', () => {
    const box = new MailboxEntries(Buffer.alloc(32, 1), 0, new MailboxArena())
    const sender = Buffer.alloc(32, 0xa)
    box.insert(1000, idOf(1), 0, sender, 0, IN_JOURNAL, 7, 123_456, 70_000)
    box.insert(1001, idOf(2), 0, sender, 0, IN_LOG)
    box.insert(999, idOf(3), 0, sender, 0, IN_TABLE)
    assert.deepEqual([0, 1, 2].map((i) => box.place(i)), [IN_TABLE, IN_JOURNAL, IN_LOG])
    assert.deepEqual([box.journalSegment(1), box.journalOffset(1), box.valueLength(1)], [7, 123_456, 70_000])
    box.markCopied(1)
    box.markCopied(2)
    assert.deepEqual([0, 1, 2].map((i) => box.place(i)), [IN_TABLE, IN_JOURNAL, IN_LOG])
    assert.equal(box.promoteCopied(), 2)
    assert.deepEqual([0, 1, 2].map((i) => box.place(i)), [IN_TABLE, IN_TABLE, IN_TABLE])
  })
})

describe('MailboxArena', () => {
  const where = (box: MailboxEntries, i: number): string => box.place(i) === IN_JOURNAL ? `j${box.journalSegment(i)}/${box.journalOffset(i)}/${box.valueLength(i)}` : String(box.place(i))
  const entries = (box: MailboxEntries): string[] => Array.from({ length: box.length }, (_, i) => `${box.sentAt(i)}:${box.idHex(i)}:${where(box, i)}`)

  test('mailboxes sharing slabs keep their own entries as they grow past the shared sizes, shrink and are released', () => {
    const arena = new MailboxArena()
    const boxes = Array.from({ length: 300 }, (_, slot) => new MailboxEntries(Buffer.alloc(32, slot), slot, arena))
    const oracle = boxes.map(() => new Map<string, string>())
    let seed = 11
    const rand = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n }
    // interleaved inserts: box k gets k + 1 entries, so boxes move through every size class and past it (300 > 256 rows)
    for (let round = 0; round < 300; round++) {
      for (let k = round; k < boxes.length; k++) {
        const n = k * 1000 + round
        const at = 1000 + rand(40)
        const place = ([IN_LOG, IN_TABLE, IN_JOURNAL] as Place[])[rand(3)]
        const [segment, offset, length] = place === IN_JOURNAL ? [n % 7, n * 3, 1 + n % 90_000] : [0, 0, 0]
        boxes[k].insert(at, idOf(n), 0, Buffer.alloc(32, k), 0, place, segment, offset, length)
        oracle[k].set(`${at}:${idOf(n).toString('hex')}`, place === IN_JOURNAL ? `j${segment}/${offset}/${length}` : String(place))
      }
    }
    const sorted = (k: number): string[] => [...oracle[k]].map(([key, m]) => `${key}:${m}`).sort((a, b) => Number(a.split(':')[0]) - Number(b.split(':')[0]) || (a < b ? -1 : 1))
    for (const k of [0, 1, 3, 7, 64, 200, 299]) {
      assert.deepEqual(entries(boxes[k]), sorted(k))
      assert.equal(boxes[k].countSender(Buffer.alloc(32, k)), k + 1)
    }
    // empty every other box: its region goes back to the arena, and the neighbours are untouched
    for (let k = 0; k < boxes.length; k += 2) {
      while (boxes[k].length > 0) boxes[k].removeAt(rand(boxes[k].length))
      boxes[k].release()
    }
    for (let k = 1; k < boxes.length; k += 50) assert.deepEqual(entries(boxes[k]), sorted(k))
    // new mailboxes take the freed regions rather than new slabs
    const { slabs } = arena.rowCounts
    const again = Array.from({ length: 150 }, (_, i) => new MailboxEntries(Buffer.alloc(32, 7), 1000 + i, arena))
    for (const [i, box] of again.entries()) for (let e = 0; e < 2 * i + 1; e++) box.insert(2000 + e, idOf(1e6 + i * 1000 + e), 0, Buffer.alloc(32, 7), 0)
    assert.equal(arena.rowCounts.slabs, slabs)
    for (let k = 1; k < boxes.length; k += 50) assert.deepEqual(entries(boxes[k]), sorted(k))
    assert.equal(again[149].length, 299)
    assert.equal(again[149].idHex(298), idOf(1e6 + 149 * 1000 + 298).toString('hex'))
  })

  test('a released mailbox that gets an entry again takes a new region, not its old one', () => {
    const arena = new MailboxArena()
    const stale = new MailboxEntries(Buffer.alloc(32, 1), 0, arena)
    stale.insert(1000, idOf(1), 0, Buffer.alloc(32, 1), 0)
    stale.removeAt(0)
    stale.release()
    // the freed region goes to the next mailbox that needs one of its size
    const next = new MailboxEntries(Buffer.alloc(32, 2), 1, arena)
    next.insert(1000, idOf(2), 0, Buffer.alloc(32, 2), 0)
    stale.insert(1001, idOf(3), 0, Buffer.alloc(32, 1), 0)
    assert.deepEqual([next.length, next.idHex(0)], [1, idOf(2).toString('hex')])
    assert.deepEqual([stale.length, stale.idHex(0)], [1, idOf(3).toString('hex')])
    assert.throws(() => next.release(), /keeps its region/)
  })
})
