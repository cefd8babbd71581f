/**
 * The feed index as a pure structure: chronological lists with `before` and position paging
 * (posts sharing a second), the timeline merge, trending and for-you orders on crafted likes
 * and views, windows, exclusions, deletes, and agreement with a brute-force ranking over
 * random data.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { FeedIndex, compareRank, compareTime, forYouScore, trendingScore, type IndexedPost } from '../../../src/feed/index.js'

const H = 3_600_000
const NOW = 1_800_000_000_000
const ids = (posts: readonly IndexedPost[]): string[] => posts.map((p) => p.id)
const pid = (n: number): string => n.toString(16).padStart(32, '0')

function post (n: number, author: string, created: number, likes = 0, views = 0, tags: string[] = []): Parameters<FeedIndex['add']>[0] {
  return { id: pid(n), author, created, likes, views, tags }
}

describe('scores', () => {
  test('trending is likes × 3 + views; for-you adds one', () => {
    assert.equal(trendingScore(2, 5), 11)
    assert.equal(forYouScore(2, 5), 12)
    assert.equal(forYouScore(0, 0), 1)
  })
})

describe('chronological lists', () => {
  test('author listing is newest first; `before` leaves out that second and later', () => {
    const index = new FeedIndex()
    index.add(post(1, 'alice', NOW - 30))
    index.add(post(2, 'alice', NOW - 10))
    index.add(post(3, 'bob', NOW - 5))
    index.add(post(4, 'alice', NOW - 20))
    assert.deepEqual(ids(index.byAuthor('alice', { limit: 10 })), [pid(2), pid(4), pid(1)])
    assert.deepEqual(ids(index.byAuthor('alice', { limit: 10, before: { created: NOW - 10, id: '' } })), [pid(4), pid(1)])
    assert.deepEqual(ids(index.byAuthor('carol', { limit: 10 })), [])
  })

  test('paging by position has no gap or repeat when many posts share a second', () => {
    const index = new FeedIndex()
    for (let n = 1; n <= 25; n++) index.add(post(n, 'alice', NOW - (n % 3))) // three seconds, many posts each
    const seen: string[] = []
    let before: { created: number, id: string } | undefined
    for (;;) {
      const page = index.byAuthor('alice', { limit: 4, ...(before !== undefined ? { before } : {}) })
      if (page.length === 0) break
      seen.push(...ids(page))
      const last = page.at(-1) as IndexedPost
      before = { created: last.created, id: last.id }
    }
    assert.equal(seen.length, 25)
    assert.equal(new Set(seen).size, 25)
    const all = index.byAuthor('alice', { limit: 100 })
    assert.deepEqual(seen, ids(all))
    for (let i = 1; i < all.length; i++) assert.ok(compareTime(all[i - 1], all[i]) > 0, 'strictly newest first')
  })

  test('hashtag lists; a removed post leaves every list', () => {
    const index = new FeedIndex()
    index.add(post(1, 'alice', NOW - 3, 0, 0, ['cats', 'dogs']))
    index.add(post(2, 'bob', NOW - 2, 0, 0, ['cats']))
    assert.deepEqual(ids(index.byTag('cats', { limit: 10 })), [pid(2), pid(1)])
    assert.deepEqual(ids(index.byTag('dogs', { limit: 10 })), [pid(1)])
    index.remove(pid(1))
    assert.deepEqual(ids(index.byTag('cats', { limit: 10 })), [pid(2)])
    assert.deepEqual(ids(index.byTag('dogs', { limit: 10 })), [])
    assert.deepEqual(ids(index.byAuthor('alice', { limit: 10 })), [])
    assert.deepEqual(ids(index.trending(24, 10, NOW)), [pid(2)])
  })

  test('timeline merges the followed authors newest first, with paging', () => {
    const index = new FeedIndex()
    index.add(post(1, 'alice', NOW - 50))
    index.add(post(2, 'bob', NOW - 40))
    index.add(post(3, 'carol', NOW - 30))
    index.add(post(4, 'alice', NOW - 20))
    index.add(post(5, 'bob', NOW - 10))
    assert.deepEqual(ids(index.timeline(['alice', 'bob', 'dave'], { limit: 10 })), [pid(5), pid(4), pid(2), pid(1)])
    assert.deepEqual(ids(index.timeline(['alice', 'bob'], { limit: 2 })), [pid(5), pid(4)])
    assert.deepEqual(ids(index.timeline(['alice', 'bob'], { limit: 2, before: { created: NOW - 20, id: pid(4) } })), [pid(2), pid(1)])
    assert.deepEqual(ids(index.timeline([], { limit: 10 })), [])
  })
})

describe('trending', () => {
  test('ranks by likes × 3 + views, then newest; likes and views move posts', () => {
    const index = new FeedIndex()
    index.add(post(1, 'a', NOW - 100, 1, 0)) // 3
    index.add(post(2, 'b', NOW - 200, 0, 4)) // 4
    index.add(post(3, 'c', NOW - 300, 0, 3)) // 3, older than post 1
    index.add(post(4, 'd', NOW - 50, 0, 0)) // 0
    assert.deepEqual(ids(index.trending(24, 10, NOW)), [pid(2), pid(1), pid(3), pid(4)])
    index.setLikes(pid(4), 2) // 6
    assert.deepEqual(ids(index.trending(24, 10, NOW)), [pid(4), pid(2), pid(1), pid(3)])
    index.addView(pid(3))
    index.addView(pid(3)) // 5
    assert.deepEqual(ids(index.trending(24, 2, NOW)), [pid(4), pid(3)])
    index.setLikes(pid(4), 0) // back to 0
    assert.deepEqual(ids(index.trending(24, 10, NOW)), [pid(3), pid(2), pid(1), pid(4)])
  })

  test('the window counts hours back from now, to the second', () => {
    const index = new FeedIndex()
    index.add(post(1, 'a', NOW - 2 * H - 1, 50, 0)) // just outside a 2-hour window
    index.add(post(2, 'b', NOW - 2 * H + 1, 0, 1))
    index.add(post(3, 'c', NOW - 100 * H, 99, 0))
    assert.deepEqual(ids(index.trending(2, 10, NOW)), [pid(2)])
    assert.deepEqual(ids(index.trending(3, 10, NOW)), [pid(1), pid(2)])
    assert.deepEqual(ids(index.trending(168, 10, NOW)), [pid(3), pid(1), pid(2)])
  })

  test('posts older than the longest window leave the ranking but stay listed', () => {
    const index = new FeedIndex()
    index.prune(NOW)
    index.add(post(1, 'a', NOW - 200 * H, 5, 5))
    assert.deepEqual(ids(index.trending(168, 10, NOW)), [])
    assert.deepEqual(ids(index.byAuthor('a', { limit: 10 })), [pid(1)])
    index.setLikes(pid(1), 6) // no bucket to move in: must not throw
    assert.equal(index.get(pid(1))?.likes, 6)
  })
})

describe('for-you', () => {
  test('last 48 hours, ranked, leaving out what the exclusion names; the scan is bounded', () => {
    const index = new FeedIndex()
    index.add(post(1, 'me', NOW - 10, 9, 9))
    index.add(post(2, 'followed', NOW - 20, 8, 0))
    index.add(post(3, 'stranger', NOW - 30, 1, 0))
    index.add(post(4, 'stranger', NOW - 40, 0, 2))
    index.add(post(5, 'stranger', NOW - 49 * H, 50, 0))
    const exclude = (p: IndexedPost): boolean => p.author === 'me' || p.author === 'followed'
    assert.deepEqual(ids(index.forYou(10, NOW, exclude, 1000)), [pid(3), pid(4)])
    assert.deepEqual(ids(index.forYou(10, NOW, exclude, 2)), [], 'two looked at, both excluded')
  })
})

test('trending and for-you agree with a brute-force sort over random data', () => {
  let seed = 42
  const rnd = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n }
  const index = new FeedIndex()
  for (let n = 1; n <= 600; n++) index.add(post(n, `author${rnd(20)}`, NOW - rnd(200 * H), rnd(4), rnd(6)))
  for (let i = 0; i < 2000; i++) {
    const id = pid(1 + rnd(600))
    if (rnd(3) === 0) index.setLikes(id, rnd(5))
    else index.addView(id)
    if (rnd(50) === 0) index.remove(id)
  }
  const live = [...Array(600).keys()].map((i) => index.get(pid(i + 1))).filter((p): p is IndexedPost => p !== undefined)
  for (const window of [1, 5, 24, 100, 168]) {
    const expected = live.filter((p) => p.created >= NOW - window * H).sort(compareRank).slice(0, 25)
    assert.deepEqual(ids(index.trending(window, 25, NOW)), ids(expected), `window ${window}`)
  }
  const exclude = (p: IndexedPost): boolean => p.author === 'author3' || p.likes === 2
  const expected = live.filter((p) => p.created >= NOW - 48 * H && !exclude(p)).sort(compareRank).slice(0, 30)
  assert.deepEqual(ids(index.forYou(30, NOW, exclude, 10_000)), ids(expected))
})

test('timeline agrees with a brute-force sort over random data, page by page', () => {
  let seed = 7
  const rnd = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n }
  const index = new FeedIndex()
  // 60 authors, some with many posts, some with one; many posts share a millisecond
  for (let n = 1; n <= 1500; n++) index.add(post(n, `author${rnd(rnd(60) + 1)}`, NOW - rnd(400) * 1000 - rnd(3)))
  for (let n = 1; n <= 1500; n += 7) index.remove(pid(n))
  const live = [...Array(1500).keys()].map((i) => index.get(pid(i + 1))).filter((p): p is IndexedPost => p !== undefined)
  for (const followed of [['author0'], ['author1', 'author5', 'nobody'], [...Array(60).keys()].map((a) => `author${a}`), [...Array(30).keys()].map((a) => `author${2 * a + 1}`)]) {
    const expected = live.filter((p) => followed.includes(p.author)).sort((a, b) => compareTime(b, a))
    for (const limit of [1, 7, 50, 2000]) {
      const seen: IndexedPost[] = []
      let before: { created: number, id: string } | undefined
      for (;;) {
        const page = index.timeline(followed, { limit, ...(before !== undefined ? { before } : {}) })
        seen.push(...page)
        if (page.length < limit) break
        const last = page.at(-1) as IndexedPost
        before = { created: last.created, id: last.id }
      }
      assert.deepEqual(ids(seen), ids(expected), `${followed.length} authors, pages of ${limit}`)
    }
  }
})

describe('bulk load', () => {
  test('addAll of posts in any order lists exactly what add() in time order lists', () => {
    const authors = ['a', 'b', 'c']
    const posts = Array.from({ length: 300 }, (_, n) =>
      post(n, authors[n % 3], NOW - ((n * 7919) % 200) * 60_000 - (n % 5) * 1000, n % 11, n % 17, n % 4 === 0 ? ['x'] : ['y', 'z']))
    const inOrder = new FeedIndex()
    for (const p of [...posts].sort((a, b) => a.created - b.created)) inOrder.add(p)
    const bulk = new FeedIndex()
    bulk.addAll(posts)
    assert.equal(bulk.size, 300)
    for (const author of authors) assert.deepEqual(ids(bulk.byAuthor(author, { limit: 500 })), ids(inOrder.byAuthor(author, { limit: 500 })))
    for (const tag of ['x', 'y']) assert.deepEqual(ids(bulk.byTag(tag, { limit: 500 })), ids(inOrder.byTag(tag, { limit: 500 })))
    assert.deepEqual(ids(bulk.timeline(authors, { limit: 500 })), ids(inOrder.timeline(authors, { limit: 500 })))
    assert.deepEqual(ids(bulk.trending(24, 500, NOW)), ids(inOrder.trending(24, 500, NOW)))
    assert.equal(ids(bulk.byAuthor('a', { limit: 500 })).length, 100)
  })
})
