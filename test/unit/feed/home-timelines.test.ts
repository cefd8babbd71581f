/**
 * Home timelines (src/feed/home-timelines.ts) against the merge they stand in for: over seeded
 * random runs of new posts, deletes, follows and unfollows and reads (whole timelines walked page
 * by page), every page a home serves equals the merge of the reader's authors at that moment.
 * Small limits, so windows overflow, floors move, the log laps homes and homes are evicted.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { FeedIndex, HomeTimelines, compareTime, type IndexedPost, type Page } from '../../../src/feed/index.js'
import { rng } from '../../sim/simulator.js'

const pid = (n: number): string => n.toString(16).padStart(32, '0')
const ids = (posts: readonly IndexedPost[]): string[] => posts.map((p) => p.id)

describe('home timelines', () => {
  test('every page equals the merge of the reader\'s authors, over random posts, deletes, follow changes and reads', () => {
    const SEEDS = Number(process.env.HOME_SEEDS ?? 30)
    let reads = 0
    let pastWindow = 0
    for (let seed = 1; seed <= SEEDS; seed++) {
      const rand = rng(seed)
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]
      const index = new FeedIndex()
      const homes = new HomeTimelines(index, { homes: 3, follows: 12, window: 6, log: 10 })
      const authors = ['a', 'b', 'c', 'd', 'e', 'f']
      const readers = ['r1', 'r2', 'r3', 'r4', 'r5']
      const follows = new Map(readers.map((r) => [r, new Set(authors.filter(() => rand() < 0.5))]))
      let n = 0
      let clock = 1_000_000
      for (let step = 0; step < 400; step++) {
        const roll = rand()
        if (roll < 0.45) {
          // a new post; some come with a time older than the newest (blocks of one second, other authors' clocks)
          clock += Math.floor(rand() * 3)
          n += 1
          index.add({ id: pid(n), author: pick(authors), created: clock - Math.floor(rand() * 4), likes: 0, views: 0 })
          const entry = index.get(pid(n))
          assert.ok(entry !== undefined)
          homes.added(entry)
        } else if (roll < 0.55 && n > 0) {
          index.remove(pid(1 + Math.floor(rand() * n)))
        } else if (roll < 0.62) {
          const reader = pick(readers)
          const set = follows.get(reader) as Set<string>
          const author = pick(authors)
          if (set.has(author)) set.delete(author)
          else set.add(author)
          homes.followsChanged(reader)
        } else {
          const reader = pick(readers)
          const followed = (): string[] => [...(follows.get(reader) as Set<string>)]
          const limit = 1 + Math.floor(rand() * 4)
          let page: Page = { limit }
          for (let guard = 0; guard < 100; guard++) {
            const got = homes.page(reader, followed, page)
            const want = index.timeline(followed(), page)
            assert.deepEqual(ids(got), ids(want), `seed ${seed} step ${step} reader ${reader} page before ${JSON.stringify(page.before)}`)
            reads += 1
            if (guard * limit >= 6) pastWindow += 1
            const last = got.at(-1)
            if (got.length < limit || last === undefined) break
            page = { limit, before: { created: last.created, id: last.id } }
          }
        }
      }
      assert.ok(homes.size <= 3)
    }
    assert.ok(reads > 1000 && pastWindow > 100, `pages read ${reads}, past the window ${pastWindow}`)
  })

  test('a reader following nobody gets an empty page and no home', () => {
    const index = new FeedIndex()
    const homes = new HomeTimelines(index)
    assert.deepEqual(homes.page('stranger', () => [], { limit: 20 }), [])
    assert.equal(homes.size, 0)
  })

  test('follow sets asked for (for-you) are read once and kept as homes, within the homes\' bounds', () => {
    const index = new FeedIndex()
    for (let i = 0; i < 30; i++) index.add({ id: pid(i), author: `a${i % 3}`, created: 1000 + i, likes: 0, views: 0, tags: [] })
    const homes = new HomeTimelines(index, { homes: 4, follows: 1000, window: 5, log: 100 })
    let reads = 0
    const followed = (): string[] => { reads++; return ['a0', 'a1'] }
    assert.deepEqual([...homes.followsOf('r', followed)].sort(), ['a0', 'a1'])
    assert.deepEqual([...homes.followsOf('r', followed)].sort(), ['a0', 'a1'])
    assert.equal(reads, 1, 'the follow range is read once')
    assert.deepEqual(ids(homes.page('r', followed, { limit: 3 })), [pid(28), pid(27), pid(25)], 'the home it made serves the timeline')
    homes.followsChanged('r')
    homes.followsOf('r', followed)
    assert.equal(reads, 2, 'a FOLLOW or UNFOLLOW reads it again')
    assert.equal(homes.followsOf('stranger', () => []).size, 0)
    for (let i = 0; i < 50; i++) homes.followsOf(`reader${i}`, () => ['a2'])
    assert.equal(homes.size, 4, 'a flood of readers keeps the bound')
  })

  test('a post that is not its authors\' newest, and a cursor older than the window, still come in order', () => {
    const index = new FeedIndex()
    const homes = new HomeTimelines(index, { homes: 10, follows: 100, window: 3, log: 100 })
    for (let i = 1; i <= 10; i++) index.add({ id: pid(i), author: 'a', created: i * 10, likes: 0, views: 0 })
    assert.deepEqual(ids(homes.page('r', () => ['a'], { limit: 2 })), [pid(10), pid(9)])
    index.add({ id: pid(11), author: 'a', created: 95, likes: 0, views: 0 }) // between 9 and 10
    homes.added(index.get(pid(11)) as IndexedPost)
    assert.deepEqual(ids(homes.page('r', () => ['a'], { limit: 5 })), [pid(10), pid(11), pid(9), pid(8), pid(7)])
    const old = { created: 35, id: pid(0) }
    assert.deepEqual(ids(homes.page('r', () => ['a'], { limit: 5, before: old })), [pid(3), pid(2), pid(1)])
    assert.ok(compareTime(old, { created: 30, id: pid(3) }) > 0)
  })
})
