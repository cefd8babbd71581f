/** Hashtag extraction (spec Feed rule 1, decisions.md) and the one-view-per-address-per-hour limiter. */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { ViewLimiter, VIEW_WINDOW_MS, extractHashtags, normalizeTag } from '../../../src/feed/index.js'

describe('extractHashtags', () => {
  test('a # then letters, digits or _; lowercase; deduplicated; in order', () => {
    assert.deepEqual(extractHashtags('Sunset at #Beach with #friends_2026, #beach again! #'), ['beach', 'friends_2026'])
  })

  test('Unicode letters and digits count; punctuation ends a tag', () => {
    assert.deepEqual(extractHashtags('#Straße #東京 #café-au-lait #٣٤'), ['straße', '東京', 'café', '٣٤'])
  })

  test('a run longer than 40 characters is not a tag; 40 is', () => {
    const forty = 'a'.repeat(40)
    assert.deepEqual(extractHashtags(`#${forty} #${'b'.repeat(41)}`), [forty])
    assert.deepEqual(extractHashtags(`#${'é'.repeat(40)}`), ['é'.repeat(40)], '40 code points, not bytes')
  })

  test('at most 8 per post, the first 8', () => {
    const text = Array.from({ length: 12 }, (_, i) => `#t${i}`).join(' ')
    assert.deepEqual(extractHashtags(text), ['t0', 't1', 't2', 't3', 't4', 't5', 't6', 't7'])
  })

  test('the text is NFC-normalised and marks belong to the run: İstanbul, café in both forms, नमस्ते', () => {
    // İ lowercases (locale-independently) to i + U+0307 COMBINING DOT ABOVE: a mark, kept
    assert.deepEqual(extractHashtags('#İstanbul'), ['i\u0307stanbul'])
    assert.deepEqual(extractHashtags('#I\u0307stanbul'), ['i\u0307stanbul'], 'the same text typed decomposed')
    assert.deepEqual(extractHashtags('#cafe\u0301 #caf\u00e9'), ['caf\u00e9'], 'decomposed and composed café are one tag, stored composed')
    assert.deepEqual(extractHashtags('#नमस्ते दुनिया'), ['नमस्ते'], 'vowel signs and the virama are marks')
    assert.deepEqual(extractHashtags('#ΣΊΣΥΦΟΣ'), ['σίσυφος'])
  })

  test('40 code points are counted on the folded tag', () => {
    assert.deepEqual(extractHashtags(`#${'e\u0301'.repeat(40)}`), ['\u00e9'.repeat(40)], '80 code points typed, 40 after NFC')
    assert.deepEqual(extractHashtags(`#${'İ'.repeat(21)}`), [], 'İ folds to two code points: 42')
  })

  test('normalizeTag folds a listing\'s tag by the same rule, so either form finds the tag', () => {
    for (const typed of ['İstanbul', 'I\u0307stanbul', '#İSTANBUL', 'i\u0307stanbul']) assert.equal(normalizeTag(typed), 'i\u0307stanbul', typed)
    assert.equal(normalizeTag('CAFE\u0301'), 'caf\u00e9')
    assert.equal(normalizeTag('नमस्ते'), 'नमस्ते')
    for (const text of ['#İstanbul', '#cafe\u0301', '#नमस्ते', '#Straße']) assert.equal(normalizeTag(extractHashtags(text)[0]), extractHashtags(text)[0], `${text}: a stored tag is its own lookup`)
  })

  test('normalizeTag takes an optional #, any case; refuses what is not a tag', () => {
    assert.equal(normalizeTag('#Beach'), 'beach')
    assert.equal(normalizeTag('BEACH'), 'beach')
    assert.equal(normalizeTag('two words'), undefined)
    assert.equal(normalizeTag('x'.repeat(41)), undefined)
    assert.equal(normalizeTag('#'), undefined)
  })
})

describe('ViewLimiter', () => {
  test('one view per address per post per hour', () => {
    const views = new ViewLimiter()
    const t = 1_000_000
    assert.equal(views.take('10.0.0.1', 'p1', t), true)
    assert.equal(views.take('10.0.0.1', 'p1', t + 1000), false)
    assert.equal(views.take('10.0.0.2', 'p1', t + 1000), true, 'another address counts')
    assert.equal(views.take('10.0.0.1', 'p2', t + 1000), true, 'another post counts')
    assert.equal(views.take('10.0.0.1', 'p1', t + VIEW_WINDOW_MS - 1), false)
    assert.equal(views.take('10.0.0.1', 'p1', t + VIEW_WINDOW_MS), true, 'an hour later it counts again')
  })

  test('the table is bounded: a full table of live pairs counts no new pair, expired pairs make room', () => {
    const views = new ViewLimiter(3)
    const t = 5_000_000
    for (const address of ['a', 'b', 'c']) assert.equal(views.take(address, 'p', t), true)
    assert.equal(views.take('d', 'p', t + 1), false)
    assert.equal(views.size, 3)
    assert.equal(views.take('d', 'p', t + VIEW_WINDOW_MS), true)
    assert.ok(views.size <= 3)
  })
})
