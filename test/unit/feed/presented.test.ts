import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { ListedPost, PostPage, PresentedPosts, asciiJson, type FixedItem } from '../../../src/feed/presented.js'
import { FeedPostItemSchema } from '../../../src/feed/schemas.js'

function fixed (id: string, preview = 'p'): FixedItem {
  return {
    post_id: id, author: 'a', created_at: 1, content_preview: preview, content_truncated: false, content_type: 'text/plain', hashtags: [],
    has_attachment: false, attachment_mime: '', reply_to: '', quote_of: '', hosting_relay: 'r', size: 10, body_available: true
  }
}
const item = (id: string): ListedPost => new ListedPost(fixed(id))
const idOf = (post: ListedPost | undefined): string | undefined => post === undefined ? undefined : (JSON.parse(post.json(0, 0)) as { post_id: string }).post_id

describe('PresentedPosts', () => {
  test('holds at most its capacity, the one used longest ago out first', () => {
    const kept = new PresentedPosts(3)
    for (const id of ['a', 'b', 'c']) kept.keep(id, item(id))
    assert.ok(kept.get('a') !== undefined, 'a is used again')
    kept.keep('d', item('d'))
    assert.equal(kept.size, 3)
    assert.equal(kept.get('b'), undefined, 'b was used longest ago')
    assert.deepEqual(['a', 'c', 'd'].map((id) => idOf(kept.get(id))), ['a', 'c', 'd'])
    for (let i = 0; i < 10_000; i++) kept.keep(`x${i}`, item(`x${i}`))
    assert.equal(kept.size, 3, 'a flood of posts listed once each')
  })

  test('forget and clear drop entries; counts come from the caller', () => {
    const kept = new PresentedPosts(10)
    kept.keep('a', item('a'))
    kept.keep('b', item('b'))
    kept.forget(['a', 'unknown'])
    assert.equal(kept.get('a'), undefined)
    const shown = JSON.parse((kept.get('b') ?? item('?')).json(7, 9)) as { likes: number, views: number, post_id: string }
    assert.deepEqual([shown.likes, shown.views, shown.post_id], [7, 9, 'b'])
    kept.clear()
    assert.equal(kept.size, 0)
  })

  test('a listed post\'s text is ASCII, reads back as the item the schema describes, members in its order, any text included', () => {
    const preview = 'café — 東京 😀 "quoted" \\ back\nline \u2028 \u007f'
    const post = new ListedPost({ ...fixed('x', preview), hashtags: ['café'], reply_to: 'r1' })
    const text = post.json(3, 4)
    assert.ok([...text].every((c) => c.charCodeAt(0) < 0x7f), 'ASCII only: its length is its byte length')
    const parsed = FeedPostItemSchema.strict().parse(JSON.parse(text))
    assert.equal(parsed.content_preview, preview)
    assert.deepEqual(parsed.hashtags, ['café'])
    assert.deepEqual([parsed.likes, parsed.views, parsed.reply_to], [3, 4, 'r1'])
    assert.deepEqual(Object.keys(JSON.parse(text) as object), Object.keys(FeedPostItemSchema.shape))
    assert.equal(asciiJson('東'), '"\\u6771"')
  })

  test('a page is the JSON array of its posts with the counts they were listed with', () => {
    const page = new PostPage([{ post: item('a'), likes: 1, views: 2 }, { post: item('b'), likes: 0, views: 5 }], 'next')
    assert.equal(page.count, 2)
    assert.deepEqual(page.posts.map((p) => [p.post_id, p.likes, p.views]), [['a', 1, 2], ['b', 0, 5]])
    assert.equal(page.next_cursor, 'next')
    assert.equal(new PostPage([]).json(), '[]')
  })

  test('a page\'s answer: the listing\'s members, count, posts, and next_cursor only for a listing with pages, ASCII only', () => {
    const posts = [{ post: item('a'), likes: 1, views: 2 }]
    const tagged = new PostPage(posts, null).answer({ tag: 'café' })
    assert.ok([...tagged].every((c) => c.charCodeAt(0) < 0x7f))
    const parsed = JSON.parse(tagged) as Record<string, unknown>
    assert.deepEqual(Object.keys(parsed), ['tag', 'count', 'posts', 'next_cursor'])
    assert.deepEqual([parsed.tag, parsed.count, parsed.next_cursor], ['café', 1, null])
    const trending = JSON.parse(new PostPage(posts).answer({ window: 24 })) as Record<string, unknown>
    assert.deepEqual(Object.keys(trending), ['window', 'count', 'posts'])
    assert.equal(trending.window, 24)
  })
})
