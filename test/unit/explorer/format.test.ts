/** The explorer's pure browser helpers: amounts, times, what a search entry may be, trending tags. */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  cursorOf, distinctEnds, formatAmount, formatBytes, hexOfBase64, newerPage, readable, replayWindows, searchKinds, shortId, tagCounts, timeAgo, utf8OfHex
} from '../../../src/explorer/browser/format.js'
import { addressOf } from '../../../src/chain/index.js'

test('amounts: µT shown as tokens with up to six decimals', () => {
  assert.equal(formatAmount(2_500_000), '2.5 T')
  assert.equal(formatAmount(1000), '0.001 T')
  assert.equal(formatAmount(1), '0.000001 T')
  assert.equal(formatAmount(0), '0 T')
  assert.equal(formatAmount(1_000_000_000_000), '1,000,000 T')
})

test('sizes, ids and ages', () => {
  assert.equal(formatBytes(512), '512 B')
  assert.equal(formatBytes(1536), '1.5 KiB')
  assert.equal(formatBytes(300 * 1024 * 1024), '300 MiB')
  assert.equal(shortId('abcdef0123456789abcdef', 4), 'abcd…cdef')
  assert.equal(shortId('short'), 'short')
  const now = Date.parse('2025-01-01T12:00:00Z')
  assert.equal(timeAgo('2025-01-01T11:59:50Z', now), '10 s ago')
  assert.equal(timeAgo('2025-01-01T11:00:00Z', now), '1 h ago')
  assert.equal(timeAgo('2025-01-01T12:00:05Z', now), '0 s ago', 'a clock a little ahead is "now"')
})

test('contract values: UTF-8 of hex, undefined for what is not', () => {
  assert.equal(utf8OfHex(Buffer.from('alice_01', 'utf8').toString('hex')), 'alice_01')
  assert.equal(utf8OfHex('zz'), undefined)
  assert.equal(utf8OfHex('ff'), undefined)
  assert.equal(readable('count'), 'count')
  assert.equal(readable('\u0002\u0000\u0000\u0000\u0000\u0000\u0000\u0000'), undefined, 'a u64 is not text')
  assert.equal(readable('two\nlines\tand a tab'), 'two\nlines\tand a tab')
  assert.equal(readable(''), undefined)
  assert.equal(readable(undefined), undefined)
  assert.equal(hexOfBase64(Buffer.from('hi there').toString('base64')), Buffer.from('hi there').toString('hex'))
  assert.equal(hexOfBase64(''), '')
  assert.equal(hexOfBase64('not base64!'), undefined)
})

test('cursor paging: the newer page\'s cursor, and cursors from a route', () => {
  assert.equal(newerPage(undefined, 20, 75), undefined, 'the newest page')
  assert.equal(newerPage(56, 20, 75), 'newest')
  assert.equal(newerPage(36, 20, 75), 56)
  assert.equal(newerPage(76, 20, 75), undefined, 'a cursor past the top is the newest page')
  assert.equal(cursorOf('36'), 36)
  assert.equal(cursorOf(undefined), undefined)
  assert.equal(cursorOf('0'), undefined)
  assert.equal(cursorOf('x'), undefined)
})

test('search: the shape of the entry decides what to try, in order', () => {
  const pub = 'ab'.repeat(32)
  assert.deepEqual(searchKinds('42'), ['height', 'tx'])
  assert.deepEqual(searchKinds(' #42 '), ['height', 'tx'])
  assert.deepEqual(searchKinds(pub), ['account', 'tx'])
  assert.deepEqual(searchKinds(pub.toUpperCase()), ['account', 'tx'])
  assert.deepEqual(searchKinds(addressOf(pub)), ['account'])
  assert.deepEqual(searchKinds('cd'.repeat(16)), ['post', 'tx'])
  assert.deepEqual(searchKinds('ef'.repeat(20)), ['contract', 'tx'])
  assert.deepEqual(searchKinds('EF'.repeat(20)), ['contract', 'tx'])
  assert.deepEqual(searchKinds('tx-17000000000000001'), ['tx'])
  assert.deepEqual(searchKinds('@alice'), ['username'])
  assert.deepEqual(searchKinds('@al'), [], 'too short for a username')
  assert.deepEqual(searchKinds('alice'), ['tx', 'username'])
  assert.deepEqual(searchKinds('not a thing!'), ['tx'])
  assert.deepEqual(searchKinds('   '), [])
})

test('trending hashtags: counted once per post, most used first', () => {
  assert.deepEqual(tagCounts([{ hashtags: ['b', 'a', 'a'] }, { hashtags: ['a'] }, { hashtags: [] }]), [{ tag: 'a', posts: 2 }, { tag: 'b', posts: 1 }])
})

test('ids in a table: the end that tells them apart, longer only where two ends are the same', () => {
  // client ids share their first digits: the counter at the end differs
  const ids = ['tx-17956609681130021266000000010', 'tx-17956609681130021266000000009']
  assert.deepEqual([...distinctEnds(ids).values()], ['…00000010', '…00000009'])
  // two processes' first transactions end alike: the end grows until it reaches the pid
  const twoProcesses = ['tx-17956609681130000123000000001', 'tx-17956609681130000456000000001']
  assert.deepEqual([...distinctEnds(twoProcesses).values()], ['…3000000001', '…6000000001'])
  assert.equal(distinctEnds(['abc']).get('abc'), 'abc', 'a short id whole')
  assert.equal(distinctEnds(['123456789']).get('123456789'), '123456789', 'no ellipsis that would save one character')
  assert.equal(distinctEnds(['same', 'same']).size, 1)
})

test('the replay read newest first: windows growing back from the head, covering the span once', () => {
  assert.deepEqual(replayWindows(1100, 1000), [[1084, 1100], [1020, 1084], [764, 1020], [100, 764]])
  assert.deepEqual(replayWindows(5, 1000), [[0, 5]])
  assert.deepEqual(replayWindows(0, 1000), [])
  assert.deepEqual(replayWindows(40, 1000), [[24, 40], [0, 24]])
})
