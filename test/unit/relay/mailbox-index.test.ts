import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { IdTable, MailboxEntries } from '../../../src/relay/mailbox-index.js'

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
    const box = new MailboxEntries(Buffer.alloc(32, 1), 0)
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
})
