/** The likers kept for for-you (src/feed/likers.ts): read once per post, followed through likes and unlikes, bounded. */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { Likers } from '../../../src/feed/likers.js'

/** A state of like keys, and how many range scans it was asked for. */
function state (likes: Record<string, string[]>): { scan: (postId: string) => Iterable<string>, scans: () => number, set: (post: string, pubs: string[]) => void } {
  let scans = 0
  return {
    scan: (postId) => { scans++; return [...(likes[postId] ?? [])] },
    scans: () => scans,
    set: (post, pubs) => { likes[post] = pubs }
  }
}

describe('Likers', () => {
  test('a post\'s likers are read with one scan, then answered from memory and followed through committed changes', () => {
    const s = state({ p: ['alice', 'bob'] })
    const likers = new Likers(s.scan)
    assert.equal(likers.likes('p', 2, 'alice'), true)
    assert.equal(likers.likes('p', 2, 'carol'), false)
    assert.equal(likers.likes('p', 2, 'bob'), true)
    assert.equal(s.scans(), 1)
    likers.changed('p', 'carol', () => true)
    likers.changed('p', 'alice', () => false)
    assert.deepEqual(['alice', 'bob', 'carol'].map((pub) => likers.likes('p', 2, pub)), [false, true, true])
    likers.changed('p', 'dave', () => false)
    assert.equal(likers.likes('p', 2, 'dave'), false, 'a refused like (the state has none) is not counted')
    assert.equal(likers.size, 3, 'two likers, and one for the post')
    likers.changed('q', 'alice', () => { throw new Error('not asked: q is not kept') })
    likers.forget(['p'])
    assert.equal(likers.size, 0)
    assert.equal(likers.likes('p', 2, 'bob'), true)
    assert.equal(s.scans(), 2, 'read again after forget')
  })

  test('a post with more likes than the bound is left to the state; the likers kept stay under their bound, the post used longest ago out first', () => {
    const s = state({ big: ['a', 'b', 'c', 'd'], p1: ['a', 'b'], p2: ['c', 'd'], p3: ['e'] })
    // a post weighs its likers plus one
    const likers = new Likers(s.scan, { maxLikers: 7, maxPerPost: 3 })
    assert.equal(likers.likes('big', 4, 'a'), undefined, 'too many to keep: ask the state')
    assert.equal(s.scans(), 0, 'not even scanned')
    likers.likes('p1', 2, 'x')
    likers.likes('p2', 2, 'x')
    assert.equal(likers.size, 6)
    likers.likes('p1', 2, 'x') // p1 used last
    likers.likes('p3', 1, 'x')
    assert.equal(likers.size, 5, 'p2 went')
    const before = s.scans()
    likers.likes('p1', 2, 'x')
    assert.equal(s.scans(), before, 'p1 is still kept')
    likers.likes('p2', 2, 'x')
    assert.equal(s.scans(), before + 1, 'p2 is read again')
    // a post that grows past the bound while kept is dropped
    likers.changed('p3', 'f', () => true)
    likers.changed('p3', 'g', () => true)
    likers.changed('p3', 'h', () => true)
    assert.equal(likers.likes('p3', 4, 'e'), undefined, 'p3 grew past 3 likers: no longer kept, asked of the state')
    assert.ok(likers.size <= 7)
  })
})
