/**
 * What a listing shows of a post that does not change once it is committed with its body on
 * this node: everything but its likes and views (the index has those). Presenting a post reads
 * its chain record and its body's metadata from lmdb, two random reads into files of gigabytes
 * at a million posts, about 15 µs a post; the posts listings show are mostly the same recent and
 * popular ones, so the last ones presented are kept. Posts whose body is not here are not kept
 * (the body may still come), and a post's entry goes when its body does.
 */
import type { FeedPostItem } from './schemas.js'

export type FixedItem = Omit<FeedPostItem, 'likes' | 'views'>

/** About a kilobyte each: 20 MB at most. */
export const PRESENTED_POSTS = 20_000

export class PresentedPosts {
  private readonly items = new Map<string, FixedItem>()

  constructor (private readonly capacity = PRESENTED_POSTS) {}

  get size (): number {
    return this.items.size
  }

  get (id: string): FixedItem | undefined {
    const item = this.items.get(id)
    if (item !== undefined) {
      // used last, so evicted last
      this.items.delete(id)
      this.items.set(id, item)
    }
    return item
  }

  keep (id: string, item: FixedItem): void {
    this.items.delete(id)
    this.items.set(id, item)
    if (this.items.size > this.capacity) this.items.delete(this.items.keys().next().value as string)
  }

  forget (ids: Iterable<string>): void {
    for (const id of ids) this.items.delete(id)
  }

  clear (): void {
    this.items.clear()
  }
}

/** A listing's entry: the kept part with the index's counts, members in the schema's order. */
export function withCounts (fixed: FixedItem, likes: number, views: number): FeedPostItem {
  return {
    post_id: fixed.post_id,
    author: fixed.author,
    created_at: fixed.created_at,
    content_preview: fixed.content_preview,
    content_truncated: fixed.content_truncated,
    content_type: fixed.content_type,
    hashtags: fixed.hashtags,
    has_attachment: fixed.has_attachment,
    attachment_mime: fixed.attachment_mime,
    likes,
    views,
    reply_to: fixed.reply_to,
    quote_of: fixed.quote_of,
    hosting_relay: fixed.hosting_relay,
    size: fixed.size,
    body_available: fixed.body_available
  }
}
