import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { open } from 'lmdb'
import { KithError } from '../../../src/errors/index.js'
import { RelayStore, type Envelope } from '../../../src/relay/index.js'
import { envelopeFromUpload, presentInboxItem, type DeleteProof } from '../../../src/relay/envelope.js'
import { BUCKET_SECONDS, bucketOf } from '../../../src/relay/store.js'
import { valueText } from '../../../src/relay/store-values.js'
import { T0, fakeClock, newClient, sealEnvelope, withTempDir, type Client } from './helpers.js'

const DAY = 86_400_000
const T0S = T0 / 1000

function env (from: Client, to: string, sentAt: number, text = `m${Math.random()}`): Envelope {
  return envelopeFromUpload(sealEnvelope(from, to, text), sentAt)
}

function proof (e: Envelope): DeleteProof {
  return { id: e.id, recipient_pub: e.recipient_pub, sent_at: e.sent_at, ed25519_pub: 'a'.repeat(64), sig: 'AAAA', ts: 0, text: '' }
}

async function code (p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p
  } catch (err) {
    if (err instanceof KithError) return err.code
    throw err
  }
  return undefined
}

describe('RelayStore durability', () => {
  test('a stored envelope is there after closing and reopening; a second put of its id is false', async () => {
    await withTempDir(async (dir) => {
      const clock = fakeClock()
      const alice = newClient()
      const bob = newClient()
      const e = env(alice, bob.pub, T0S)
      let store = RelayStore.open(dir, { ttlMs: DAY, clock })
      assert.equal(await store.put(e), true)
      assert.equal(await store.put(e), false)
      await store.close()
      store = RelayStore.open(dir, { ttlMs: DAY, clock })
      assert.deepEqual(store.inbox(bob.pub, { limit: 10 }), { items: [e], hasMore: false })
      assert.equal(store.count(bob.pub), 1)
      assert.equal(store.has(e.id), true)
      assert.deepEqual(store.get(e.id), e)
      await store.close()
    })
  })

  for (const mergeMin of [undefined, 100]) {
    test(`every id answered before kill -9 is on disk after it, exactly once${mergeMin === undefined ? '' : ', with merges running'}`, async () => {
      await withTempDir(async (dir) => {
        const args = [join(fileURLToPath(new URL('.', import.meta.url)), 'crash-child.js'), dir, ...(mergeMin === undefined ? [] : [String(mergeMin)])]
        const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
        const answered: Envelope[] = []
        const lines = createInterface({ input: child.stdout })
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
        for await (const line of lines) {
          answered.push(JSON.parse(line) as Envelope)
          if (answered.length === 1500) { child.kill('SIGKILL'); break }
        }
        await exited
        const store = RelayStore.open(dir, { ttlMs: DAY, clock: { now: Date.now } })
        try {
          const missing = answered.filter((e) => store.get(e.id) === undefined)
          assert.deepEqual(missing.map((e) => e.id), [])
          const page = store.inbox(answered[0].recipient_pub, { limit: 10_000 })
          assert.equal(new Set(page.items.map((e) => e.id)).size, page.items.length, 'an envelope served twice')
          assert.equal(page.items.length, store.count(answered[0].recipient_pub))
          if (mergeMin !== undefined) assert.ok(store.size.merged > 0, 'no merge had finished: the test did not test merging')
        } finally {
          await store.close()
        }
      })
    })
  }
})

describe('RelayStore inbox', () => {
  test('oldest first by (sent_at, id); since is inclusive; after pages without repeats; has_more', async () => {
    await withTempDir(async (dir) => {
      const clock = fakeClock()
      const store = RelayStore.open(dir, { ttlMs: DAY, clock })
      const alice = newClient()
      const bob = newClient()
      const all: Envelope[] = []
      for (const at of [T0S - 30, T0S - 20, T0S - 20, T0S - 20, T0S - 10, T0S]) {
        const e = env(alice, bob.pub, at)
        all.push(e)
        await store.put(e)
      }
      await store.put(env(alice, newClient().pub, T0S - 20)) // another mailbox
      all.sort((a, b) => a.sent_at - b.sent_at || (a.id < b.id ? -1 : 1))

      const first = store.inbox(bob.pub, { limit: 2 })
      assert.deepEqual(first.items, all.slice(0, 2))
      assert.equal(first.hasMore, true)
      // since alone is inclusive: the same-second item comes again (clients dedupe by id)
      const bySince = store.inbox(bob.pub, { since: first.items[1].sent_at, limit: 10 })
      assert.deepEqual(bySince.items, all.slice(1))
      // since + after continues exactly after the last item
      const last = first.items[1]
      const second = store.inbox(bob.pub, { since: last.sent_at, after: last.id, limit: 3 })
      assert.deepEqual(second.items, all.slice(2, 5))
      assert.equal(second.hasMore, true)
      const third = store.inbox(bob.pub, { since: second.items[2].sent_at, after: second.items[2].id, limit: 3 })
      assert.deepEqual(third, { items: all.slice(5), hasMore: false })
      assert.deepEqual(store.inbox(bob.pub, { since: T0S + 1, limit: 5 }), { items: [], hasMore: false })
      assert.deepEqual(store.inbox(newClient().pub, { limit: 5 }), { items: [], hasMore: false })
      // a page stops at the character budget, but always holds one item
      const tiny = store.inbox(bob.pub, { limit: 10, maxBytes: 1 })
      assert.equal(tiny.items.length, 1)
      assert.equal(tiny.hasMore, true)
      assert.equal(store.count(bob.pub), 6)
      await store.close()
    })
  })
})

describe('RelayStore TTL', () => {
  test('expired envelopes are never served, even before the sweep; the sweep deletes them in batches', async () => {
    await withTempDir(async (dir) => {
      const clock = fakeClock()
      const store = RelayStore.open(dir, { ttlMs: DAY / 2, clock })
      const alice = newClient()
      const bob = newClient()
      const old = [0, 1, 2, 3, 4].map((i) => env(alice, bob.pub, T0S + i))
      const young = env(alice, bob.pub, T0S + 3600)
      for (const e of [...old, young]) await store.put(e)
      const gone = old[4]
      await store.delete(gone.id, bob.pub, proof(gone))
      assert.equal(store.count(bob.pub), 5)

      // exactly at sent_at + ttl an envelope has expired: T0S+0 and T0S+1 are gone
      clock.set((T0S + 1) * 1000 + DAY / 2)
      assert.deepEqual(store.inbox(bob.pub, { limit: 10 }).items.map((e) => e.sent_at), [T0S + 2, T0S + 3, T0S + 3600])
      assert.equal(store.count(bob.pub), 3)
      assert.equal(store.get(old[0].id), undefined)
      assert.equal(store.has(old[0].id), true, 'known until swept')

      clock.advance(10_000) // all of `old` (and the tombstone) expired, `young` is live
      assert.equal(store.count(bob.pub), 1)
      assert.equal(store.inbox(bob.pub, { since: 0, limit: 10 }).items[0].id, young.id)
      const batches: number[] = []
      for (;;) {
        const n = await store.sweepExpired(clock.now(), 2)
        batches.push(n)
        if (n < 2) break
      }
      assert.deepEqual(batches, [2, 2, 1])
      assert.equal(store.has(old[0].id), false)
      assert.equal(store.tombstone(gone.id), undefined)
      assert.equal(store.count(bob.pub), 1)
      assert.deepEqual(store.digests(0, Number.MAX_SAFE_INTEGER).map((d) => [d.bucket, d.live, d.deleted]), [[bucketOf(young.sent_at), 1, 0]])
      await store.close()
    })
  })
})

describe('RelayStore caps', () => {
  test('over the per-sender cap the new envelope is refused; another sender still gets in; nothing is evicted', async () => {
    await withTempDir(async (dir) => {
      const clock = fakeClock()
      const store = RelayStore.open(dir, { ttlMs: DAY, clock, limits: { maxPerMailbox: 5, maxPerSender: 3 } })
      const spammer = newClient()
      const friend = newClient()
      const bob = newClient()
      const kept: Envelope[] = []
      for (let i = 0; i < 3; i++) { const e = env(spammer, bob.pub, T0S + i); kept.push(e); assert.equal(await store.put(e), true) }
      assert.equal(await code(store.put(env(spammer, bob.pub, T0S + 9))), 'RELAY_MAILBOX_FULL')
      for (let i = 0; i < 2; i++) { const e = env(friend, bob.pub, T0S + i); kept.push(e); assert.equal(await store.put(e), true) }
      // the mailbox is now full: even a sender with no envelope in it is refused
      assert.equal(await code(store.put(env(newClient(), bob.pub, T0S))), 'RELAY_MAILBOX_FULL')
      assert.deepEqual(new Set(store.inbox(bob.pub, { limit: 10 }).items.map((e) => e.id)), new Set(kept.map((e) => e.id)))
      // other mailboxes are not affected
      assert.equal(await store.put(env(spammer, newClient().pub, T0S)), true)
      // a delete makes room again
      await store.delete(kept[3].id, bob.pub, proof(kept[3]))
      assert.equal(await store.put(env(newClient(), bob.pub, T0S + 5)), true)
      await store.close()
    })
  })

  test('the global byte cap: stored bytes are counted through put, delete, merge and reopening; past the cap a new envelope is refused (507), none evicted', async () => {
    await withTempDir(async (dir) => {
      const clock = fakeClock()
      const bob = newClient()
      const probe = env(newClient(), bob.pub, T0S)
      const size = valueText(probe).length
      // room for three envelopes of this size, not four
      const limits = { maxStoredBytes: 3 * size + size / 2 }
      let store = RelayStore.open(dir, { ttlMs: DAY, clock, limits })
      const kept = [probe, env(newClient(), bob.pub, T0S + 1), env(newClient(), newClient().pub, T0S + 2)]
      for (const e of kept) assert.equal(await store.put(e), true)
      assert.equal(store.storedBytes, kept.reduce((sum, e) => sum + valueText(e).length, 0))
      const refused = env(newClient(), bob.pub, T0S + 3)
      assert.equal(await code(store.put(refused)), 'RELAY_STORAGE_FULL')
      assert.equal(store.has(refused.id), false)
      assert.deepEqual(kept.map((e) => store.has(e.id)), [true, true, true], 'nothing is evicted')
      const full = store.storedBytes

      // the count survives a merge into the mailbox table and a reopening (values read for their length)
      await store.merge()
      assert.equal(store.storedBytes, full)
      await store.close()
      store = RelayStore.open(dir, { ttlMs: DAY, clock, limits })
      assert.equal(store.storedBytes, full)
      assert.equal(await code(store.put(refused)), 'RELAY_STORAGE_FULL')

      // a delete makes room again
      await store.delete(kept[0].id, bob.pub, proof(kept[0]))
      assert.equal(store.storedBytes, full - valueText(kept[0]).length)
      assert.equal(await store.put(refused), true)
      await store.close()
    })
  })

  test('expired envelopes do not count against the caps, even before the sweep', async () => {
    await withTempDir(async (dir) => {
      const clock = fakeClock()
      const store = RelayStore.open(dir, { ttlMs: DAY, clock, limits: { maxPerMailbox: 10, maxPerSender: 2 } })
      const alice = newClient()
      const bob = newClient()
      await store.put(env(alice, bob.pub, T0S - 100))
      await store.put(env(alice, bob.pub, T0S))
      assert.equal(await code(store.put(env(alice, bob.pub, T0S))), 'RELAY_MAILBOX_FULL')
      clock.set((T0S - 100) * 1000 + DAY)
      assert.equal(await store.put(env(alice, bob.pub, T0S + 1)), true)
      await store.close()
    })
  })
})

describe('RelayStore deletes and digests', () => {
  test('a deleted id stays known as a tombstone, so it cannot be stored again', async () => {
    await withTempDir(async (dir) => {
      const store = RelayStore.open(dir, { ttlMs: DAY, clock: fakeClock() })
      const bob = newClient()
      const e = env(newClient(), bob.pub, T0S)
      await store.put(e)
      assert.equal(await store.delete(e.id, newClient().pub, proof(e)), 'not_found', 'another mailbox')
      assert.equal(await store.delete(e.id, bob.pub, proof(e)), 'deleted')
      assert.equal(await store.delete(e.id, bob.pub, proof(e)), 'already_deleted')
      assert.equal(await store.put(e), false)
      assert.equal(store.count(bob.pub), 0)
      assert.equal(store.get(e.id), undefined)
      assert.equal(store.tombstone(e.id)?.sent_at, e.sent_at)
      assert.equal(await store.delete('0'.repeat(32), bob.pub, proof(e)), 'not_found')
      await store.close()
    })
  })

  test('bucket digests: count and XOR of ids per hour, live and deleted apart; ids listed a page at a time', async () => {
    await withTempDir(async (dir) => {
      const clock = fakeClock()
      const a = RelayStore.open(join(dir, 'a'), { ttlMs: DAY, clock })
      const b = RelayStore.open(join(dir, 'b'), { ttlMs: DAY, clock })
      const alice = newClient()
      const bob = newClient()
      const hour = bucketOf(T0S)
      const es = [0, 1, 2, 3].map((i) => env(alice, bob.pub, hour * BUCKET_SECONDS + i * 60))
      const next = env(alice, bob.pub, (hour + 1) * BUCKET_SECONDS)
      for (const e of [...es, next]) await a.put(e)
      for (const e of [es[2], es[0], es[3], es[1]]) await b.put(e) // same set, other order
      assert.deepEqual(a.digest(hour), b.digest(hour))
      assert.equal(a.digest(hour).live, 4)
      assert.deepEqual(b.digest(hour + 1), { bucket: hour + 1, live: 0, live_xor: '0'.repeat(32), deleted: 0, deleted_xor: '0'.repeat(32) })
      assert.deepEqual(a.digests(hour, hour + 1).map((d) => d.bucket), [hour, hour + 1])

      await a.delete(es[1].id, bob.pub, proof(es[1]))
      const da = a.digest(hour)
      assert.equal(da.live, 3)
      assert.equal(da.deleted, 1)
      assert.notDeepEqual(da, b.digest(hour))
      await b.delete(es[1].id, bob.pub, proof(es[1]))
      assert.deepEqual(a.digest(hour), b.digest(hour))

      const p1 = a.idsInBucket(hour, { limit: 2 })
      assert.equal(p1.live.length + p1.deleted.length, 2)
      assert.ok(p1.next !== undefined)
      const p2 = a.idsInBucket(hour, { after: p1.next, limit: 2 })
      assert.equal(p2.next, undefined)
      assert.deepEqual(new Set([...p1.live, ...p2.live]), new Set([es[0].id, es[2].id, es[3].id]))
      assert.deepEqual([...p1.deleted, ...p2.deleted], [es[1].id])
      await a.close()
      await b.close()
    })
  })
})

describe('RelayStore merge (the log into the mailbox table)', () => {
  /** Everything a reader can see of a store, for before/after comparisons. */
  function view (store: RelayStore, boxes: string[], ids: string[], hours: number[]): unknown {
    return {
      pages: boxes.map((pub) => store.inbox(pub, { limit: 10_000 })),
      paged: boxes.map((pub) => store.inbox(pub, { limit: 3, since: T0S + 600, after: undefined })),
      gets: ids.map((id) => store.get(id) ?? null),
      digests: store.digests(hours[0], hours[hours.length - 1]),
      buckets: hours.map((h) => [store.idsInBucket(h, { limit: 7 }), store.idsInBucket(h)])
    }
  }

  const journalSegments = (dir: string): string[] => readdirSync(dir).filter((n) => n.startsWith('journal-')).sort()

  function tableCounts (dir: string): { log: number, mailboxes: number[] } {
    const raw = open({ path: dir, readOnly: true })
    try {
      const count = (name: string): number => raw.openDB({ name, keyEncoding: 'binary', encoding: 'binary' }).getKeysCount()
      return { log: count('envelopes'), mailboxes: [count('mailboxes-0'), count('mailboxes-1')] }
    } finally {
      void raw.close()
    }
  }

  test('pages, gets, digests and bucket ids are the same before, after and after reopening; the log is left empty', async () => {
    await withTempDir(async (dir) => {
      const clock = fakeClock()
      const senders = [newClient(), newClient()]
      const boxes = [newClient().pub, newClient().pub, newClient().pub]
      const es = Array.from({ length: 90 }, (_, i) => env(senders[i % 2], boxes[i % 3], T0S - 3 * 3600 + Math.floor(Math.random() * 3 * 3600)))
      const hours = [bucketOf(T0S) - 3, bucketOf(T0S) - 2, bucketOf(T0S) - 1, bucketOf(T0S)]
      let store = RelayStore.open(dir, { ttlMs: DAY, clock, autoMerge: false })
      for (const e of es) assert.equal(await store.put(e), true)
      for (const e of [es[4], es[50]]) assert.equal(await store.delete(e.id, e.recipient_pub, proof(e)), 'deleted')
      const ids = es.map((e) => e.id)
      let before = view(store, boxes, ids, hours)
      assert.equal(store.size.merged, 0)

      await store.merge()
      assert.equal(store.size.merged, 88)
      assert.deepEqual(view(store, boxes, ids, hours), before)
      // a new envelope goes to the log, and pages interleave it with the merged ones
      const late = env(senders[0], boxes[0], T0S - 3600)
      assert.equal(await store.put(late), true)
      const page = store.inbox(boxes[0], { limit: 10_000 }).items
      assert.deepEqual(page.map((e) => e.id), [...page].sort((a, b) => a.sent_at - b.sent_at || (a.id < b.id ? -1 : 1)).map((e) => e.id))
      assert.ok(page.some((e) => e.id === late.id))
      assert.equal(await store.delete(late.id, boxes[0], proof(late)), 'deleted')
      before = view(store, boxes, ids, hours)
      await store.close()
      assert.deepEqual(tableCounts(dir), { log: 0, mailboxes: [0, 88] })

      store = RelayStore.open(dir, { ttlMs: DAY, clock, autoMerge: false })
      assert.equal(store.size.merged, 88)
      assert.deepEqual(view(store, boxes, ids, hours), before)
      // and once more: into the first table again
      await store.merge()
      assert.deepEqual(view(store, boxes, ids, hours), before)
      await store.close()
      assert.deepEqual(tableCounts(dir), { log: 0, mailboxes: [88, 0] })
    })
  })

  test('envelopes are read from the journal until a merge copies them into the mailbox table and recycles the segments it took; one deleted before stays deleted', async () => {
    await withTempDir(async (dir) => {
      const clock = fakeClock()
      const alice = newClient()
      const boxes = Array.from({ length: 8 }, () => newClient().pub)
      const es = Array.from({ length: 300 }, (_, i) => env(alice, boxes[i % boxes.length], T0S - 300 + i, `m${i}`))
      const opts = { ttlMs: DAY, clock, autoMerge: false }
      let store = RelayStore.open(dir, opts)
      await Promise.all(es.map(async (e) => await store.put(e)))
      assert.equal(await store.delete(es[7].id, es[7].recipient_pub, proof(es[7])), 'deleted')
      await store.close()
      // lmdb holds none of them: the journal alone does
      assert.deepEqual(tableCounts(dir), { log: 0, mailboxes: [0, 0] })
      store = RelayStore.open(dir, opts)
      // the segments the first session wrote, closed now
      const segmentsBefore = journalSegments(dir).slice(0, -1)
      assert.ok(segmentsBefore.length > 0)
      assert.equal(boxes.reduce((n, pub) => n + store.count(pub), 0), 299)
      assert.equal(store.get(es[7].id), undefined)
      assert.deepEqual(store.get(es[299].id), es[299])
      assert.deepEqual(store.inbox(boxes[3], { limit: 5 }).items, es.filter((e) => e.recipient_pub === boxes[3]).slice(0, 5))
      await store.merge()
      assert.equal(store.size.merged, 299)
      // every segment it took is recycled; the journal goes on in a new one
      assert.deepEqual(journalSegments(dir).filter((n) => segmentsBefore.includes(n)), [])
      const late = env(alice, boxes[0], T0S + 1)
      assert.equal(await store.put(late), true)
      await store.close()
      assert.deepEqual(tableCounts(dir).mailboxes.sort(), [0, 299])
      store = RelayStore.open(dir, opts)
      assert.equal(boxes.reduce((n, pub) => n + store.count(pub), 0), 300)
      assert.equal(store.get(es[7].id), undefined)
      assert.deepEqual(store.get(late.id), late)
      assert.deepEqual(store.get(es[0].id), es[0])
      await store.close()
    })
  })

  test('a store written before the journal became the log level: its log\'s envelopes are served beside new ones, and a merge takes both and empties the log', async () => {
    await withTempDir(async (dir) => {
      const clock = fakeClock()
      const alice = newClient()
      const bob = newClient()
      const older = [env(alice, bob.pub, T0S - 10), env(alice, bob.pub, T0S - 5)]
      // the log as lmdb held it: sent_at(6) ‖ id ‖ recipient ‖ sender -> the stored value
      const raw = open({ path: dir, compression: false })
      const log = raw.openDB<Buffer, Buffer>({ name: 'envelopes', keyEncoding: 'binary', encoding: 'binary' })
      await raw.openDB({ name: 'meta' }).put('format', 3)
      for (const e of older) {
        const key = Buffer.alloc(86)
        key.writeUIntBE(e.sent_at, 0, 6)
        key.write(e.id, 6, 'hex')
        key.write(e.recipient_pub, 22, 'hex')
        key.write(e.sender_pub, 54, 'hex')
        await log.put(key, Buffer.from(valueText(e), 'latin1'))
      }
      await raw.close()
      const store = RelayStore.open(dir, { ttlMs: DAY, clock, autoMerge: false })
      const newer = env(alice, bob.pub, T0S)
      assert.equal(await store.put(newer), true)
      assert.deepEqual(store.inbox(bob.pub, { limit: 10 }).items, [...older, newer])
      await store.merge()
      assert.equal(store.size.merged, 3)
      assert.deepEqual(store.inbox(bob.pub, { limit: 10 }).items, [...older, newer])
      await store.close()
      const counts = tableCounts(dir)
      assert.deepEqual([counts.log, counts.mailboxes[0] + counts.mailboxes[1]], [0, 3])
    })
  })

  test('a closed journal segment whose envelopes have all expired or been deleted is recycled by the sweep', async () => {
    await withTempDir(async (dir) => {
      const clock = fakeClock()
      const alice = newClient()
      const bob = newClient()
      const opts = { ttlMs: DAY, clock, autoMerge: false }
      let store = RelayStore.open(dir, opts)
      const es = [0, 1, 2].map((i) => env(alice, bob.pub, T0S + i))
      for (const e of es) await store.put(e)
      await store.close()
      store = RelayStore.open(dir, opts) // segment 1 is closed now; 2 takes new envelopes
      assert.deepEqual(journalSegments(dir), ['journal-0000000001.log', 'journal-0000000002.log'])
      assert.equal(await store.delete(es[0].id, bob.pub, proof(es[0])), 'deleted')
      assert.equal(await store.sweepExpired(clock.now(), 100), 0)
      assert.deepEqual(journalSegments(dir), ['journal-0000000001.log', 'journal-0000000002.log'], 'two of its envelopes are live')
      clock.advance(DAY + 10_000)
      assert.equal(await store.sweepExpired(clock.now(), 100), 3) // two envelopes and the tombstone
      assert.deepEqual(journalSegments(dir), ['journal-0000000002.log'])
      await store.close()
      store = RelayStore.open(dir, opts)
      assert.equal(store.count(bob.pub), 0)
      await store.close()
    })
  })

  test('deletes while a merge runs reach the new table: nothing deleted comes back after reopening', async () => {
    await withTempDir(async (dir) => {
      const clock = fakeClock()
      const alice = newClient()
      const boxes = Array.from({ length: 40 }, () => newClient().pub)
      // several turns of copying (5 ms a turn), switching and removing (2,000 envelopes a turn)
      const es = Array.from({ length: 6000 }, (_, i) => env(alice, boxes[i % boxes.length], T0S - Math.floor(Math.random() * 3600), `m${i}`))
      let store = RelayStore.open(dir, { ttlMs: DAY, clock, sync: false, autoMerge: false, limits: { maxPerMailbox: 10_000, maxPerSender: 10_000 } })
      await Promise.all(es.map(async (e) => await store.put(e)))
      const merging = store.merge()
      const gone: Envelope[] = []
      for (let turn = 0; turn < 12; turn++) {
        await new Promise((resolve) => setImmediate(resolve))
        // from the first and the last mailboxes in copy order: copied already, and not yet
        for (const e of [es[turn], es[5999 - turn]]) {
          assert.equal(await store.delete(e.id, e.recipient_pub, proof(e)), 'deleted')
          gone.push(e)
        }
      }
      await merging
      assert.equal(gone.filter((e) => store.get(e.id) !== undefined).length, 0)
      await store.close()
      const counts = tableCounts(dir)
      assert.deepEqual(counts.mailboxes.reduce((a, b) => a + b) + counts.log, es.length - gone.length)
      store = RelayStore.open(dir, { ttlMs: DAY, clock })
      assert.equal(gone.filter((e) => store.get(e.id) !== undefined || !store.has(e.id)).length, 0, 'a deleted envelope came back, or lost its tombstone')
      assert.equal(boxes.reduce((n, pub) => n + store.count(pub), 0), es.length - gone.length)
      await store.close()
    })
  })

  test('merged envelopes expire: never served after the TTL, and the sweep removes them from disk', async () => {
    await withTempDir(async (dir) => {
      const clock = fakeClock()
      const alice = newClient()
      const bob = newClient()
      const store = RelayStore.open(dir, { ttlMs: DAY, clock, autoMerge: false })
      const old = [env(alice, bob.pub, T0S - 100), env(alice, bob.pub, T0S - 50)]
      for (const e of old) await store.put(e)
      await store.merge()
      const fresh = env(alice, bob.pub, T0S + 3600)
      await store.put(fresh)
      clock.advance(DAY - 10_000)
      assert.deepEqual(store.inbox(bob.pub, { limit: 10 }).items.map((e) => e.id), [fresh.id])
      assert.equal(store.get(old[0].id), undefined)
      assert.equal(await store.sweepExpired(clock.now(), 1), 1)
      assert.equal(await store.sweepExpired(clock.now(), 10), 1)
      assert.equal(await store.sweepExpired(clock.now(), 10), 0)
      assert.equal(store.size.merged, 0)
      await store.close()
      assert.deepEqual(tableCounts(dir), { log: 0, mailboxes: [0, 0] })
    })
  })

  test('the log is merged by itself once it holds mergeMin envelopes and half as many as the mailbox table', async () => {
    await withTempDir(async (dir) => {
      const clock = fakeClock()
      const alice = newClient()
      const bob = newClient()
      const store = RelayStore.open(dir, { ttlMs: DAY, clock, mergeMin: 50 })
      for (let i = 0; i < 49; i++) await store.put(env(alice, bob.pub, T0S + i))
      await new Promise((resolve) => setTimeout(resolve, 300))
      assert.equal(store.size.merged, 0)
      await store.put(env(alice, bob.pub, T0S + 49))
      for (let wait = 0; store.size.merged < 50 && wait < 100; wait++) await new Promise((resolve) => setTimeout(resolve, 50))
      assert.equal(store.size.merged, 50)
      assert.equal(store.count(bob.pub), 50)
      await store.close()
    })
  })
})

describe('RelayStore format 1', () => {
  test('a store written by the format-1 layout (tables keyed by mailbox) opens with its envelopes and tombstones', async () => {
    await withTempDir(async (dir) => {
      const clock = fakeClock()
      const alice = newClient()
      const bob = newClient()
      const kept = [env(alice, bob.pub, T0S), env(alice, bob.pub, T0S + 1)]
      const deleted = env(alice, bob.pub, T0S + 2)
      // the format-1 layout, written as that code wrote it
      const old = open({ path: dir, compression: false })
      const mailbox = old.openDB<Envelope, [string, number, string]>({ name: 'mailbox' })
      const ids = old.openDB<object, string>({ name: 'ids' })
      for (const e of kept) {
        await mailbox.put([e.recipient_pub, e.sent_at, e.id], e)
        await ids.put(e.id, { recipient_pub: e.recipient_pub, sender_pub: e.sender_pub, sent_at: e.sent_at })
      }
      await ids.put(deleted.id, { recipient_pub: bob.pub, sender_pub: alice.pub, sent_at: deleted.sent_at, deleted: proof(deleted) })
      await old.close()

      for (let round = 0; round < 2; round++) {
        const store = RelayStore.open(dir, { ttlMs: DAY, clock })
        assert.deepEqual(store.inbox(bob.pub, { limit: 10 }), { items: kept, hasMore: false })
        assert.deepEqual(store.tombstone(deleted.id), proof(deleted))
        assert.equal(await store.put(deleted), false, 'a deleted envelope is not stored again')
        assert.deepEqual(store.digest(bucketOf(T0S)), { ...store.digest(bucketOf(T0S)), live: 2, deleted: 1 })
        await store.close()
      }
    })
  })
})

describe('RelayStore stored value', () => {
  test('the hand-written item text is JSON.stringify of the served item, with fee_sig after a newline', () => {
    const alice = newClient()
    const bob = newClient()
    const free = env(alice, bob.pub, T0S)
    assert.equal(valueText(free), JSON.stringify(presentInboxItem(free)))
    const paid = { ...free, fee_ut: 250, fee_sig: 'c2lnbmF0dXJl' }
    assert.equal(valueText(paid), `${JSON.stringify(presentInboxItem(paid))}\nc2lnbmF0dXJl`)
    const anonymous = { ...free, sender_ed25519_pub: '' }
    assert.deepEqual(JSON.parse(valueText(anonymous)), presentInboxItem(anonymous))
  })
})
