import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { PresentedPosts, withCounts, type FixedItem } from '../../../src/feed/presented.js'

function item (id: string): FixedItem {
  return {
    post_id: id, author: 'a', created_at: 1, content_preview: 'p', content_truncated: false, content_type: 'text/plain', hashtags: [],
    has_attachment: false, attachment_mime: '', reply_to: '', quote_of: '', hosting_relay: 'r', size: 10, body_available: true
  }
}

describe('PresentedPosts', () => {
  test('holds at most its capacity, the one used longest ago out first', () => {
    const kept = new PresentedPosts(3)
    for (const id of ['a', 'b', 'c']) kept.keep(id, item(id))
    assert.ok(kept.get('a') !== undefined, 'a is used again')
    kept.keep('d', item('d'))
    assert.equal(kept.size, 3)
    assert.equal(kept.get('b'), undefined, 'b was used longest ago')
    assert.deepEqual(['a', 'c', 'd'].map((id) => kept.get(id)?.post_id), ['a', 'c', 'd'])
    for (let i = 0; i < 10_000; i++) kept.keep(`x${i}`, item(`x${i}`))
    assert.equal(kept.size, 3, 'a flood of posts listed once each')
  })

  test('forget and clear drop entries; counts come from the caller', () => {
    const kept = new PresentedPosts(10)
    kept.keep('a', item('a'))
    kept.keep('b', item('b'))
    kept.forget(['a', 'unknown'])
    assert.equal(kept.get('a'), undefined)
    const shown = withCounts(kept.get('b') ?? item('?'), 7, 9)
    assert.deepEqual([shown.likes, shown.views, shown.post_id], [7, 9, 'b'])
    kept.clear()
    assert.equal(kept.size, 0)
  })
})
