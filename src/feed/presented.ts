/**
 * What a listing shows of a post that does not change once it is committed with its body on
 * this node: everything but its likes and views (the index has those). Presenting a post reads
 * its chain record and its body's metadata from lmdb, two random reads into files of gigabytes
 * at a million posts, about 15 µs a post; the posts listings show are mostly the same recent and
 * popular ones, so the last ones presented are kept, whether their body is here or not: a post's
 * entry goes when its body is stored here or removed, and when its post is deleted.
 *
 * A post is kept as its JSON text around the two counts, and a page is answered as the text of
 * its posts joined: serialising a page of 20 objects on every request cost about as much as the
 * rest of the request (docs/benchmarks.md, "Listings answered from kept JSON").
 */
import { RecentlyUsed } from './recently-used.js'
import type { FeedPostItem } from './schemas.js'

export type FixedItem = Omit<FeedPostItem, 'likes' | 'views'>

/** About a kilobyte of text each (a preview is at most 280 characters): 20 MB at most. */
export const PRESENTED_POSTS = 20_000

const NON_ASCII = /[\u007f-\uffff]/
const NON_ASCII_ALL = /[\u007f-\uffff]/g
const escapeChar = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`

/**
 * JSON text with every character outside ASCII escaped (`\uXXXX`, surrogate pairs as two): the
 * same value to any JSON reader, and its length is its length in bytes, so it is written as is.
 */
export function asciiJson (value: string | number | boolean | null | object): string {
  const text = JSON.stringify(value)
  return NON_ASCII.test(text) ? text.replace(NON_ASCII_ALL, escapeChar) : text
}

/** A post as listings show it: its JSON text before and after the counts, members in the schema's order. */
export class ListedPost {
  private readonly head: string
  private readonly tail: string

  constructor (f: FixedItem) {
    const lead = asciiJson({
      post_id: f.post_id,
      author: f.author,
      created_at: f.created_at,
      content_preview: f.content_preview,
      content_truncated: f.content_truncated,
      content_type: f.content_type,
      hashtags: f.hashtags,
      has_attachment: f.has_attachment,
      attachment_mime: f.attachment_mime
    })
    const rest = asciiJson({ reply_to: f.reply_to, quote_of: f.quote_of, hosting_relay: f.hosting_relay, size: f.size, body_available: f.body_available })
    this.head = `${lead.slice(0, -1)},"likes":`
    this.tail = `,${rest.slice(1)}`
  }

  json (likes: number, views: number): string {
    return `${this.head}${likes},"views":${views}${this.tail}`
  }
}

/**
 * A listing's posts with the counts they had when listed, and the cursor of the next page: null
 * on the last page, undefined for a listing without pages (trending, for-you).
 */
export class PostPage {
  constructor (private readonly entries: ReadonlyArray<{ post: ListedPost, likes: number, views: number }>, readonly next_cursor?: string | null) {}

  get count (): number {
    return this.entries.length
  }

  /** The posts as the JSON text of an array, ASCII only: what the API answers. */
  json (): string {
    return `[${this.entries.map((e) => e.post.json(e.likes, e.views)).join(',')}]`
  }

  /**
   * The API's answer, ASCII only: `lead`'s members (the listing's own: its author, tag, window…),
   * then count, posts and, for a listing with pages, next_cursor, in the schemas' order.
   */
  answer (lead: Record<string, string | number>): string {
    const members = Object.entries(lead).map(([name, value]) => `${asciiJson(name)}:${asciiJson(value)},`).join('')
    const cursor = this.next_cursor === undefined ? '' : `,"next_cursor":${asciiJson(this.next_cursor)}`
    return `{${members}"count":${this.count},"posts":${this.json()}${cursor}}`
  }

  /** The posts as objects (for callers in this process): the same text, read back. */
  get posts (): FeedPostItem[] {
    return JSON.parse(this.json()) as FeedPostItem[]
  }
}

export class PresentedPosts {
  private readonly items: RecentlyUsed<string, ListedPost>

  constructor (capacity = PRESENTED_POSTS) {
    this.items = new RecentlyUsed(capacity)
  }

  get size (): number {
    return this.items.size
  }

  get (id: string): ListedPost | undefined {
    return this.items.get(id)
  }

  keep (id: string, item: ListedPost): void {
    this.items.set(id, item)
  }

  forget (ids: Iterable<string>): void {
    for (const id of ids) this.items.delete(id)
  }

  clear (): void {
    this.items.clear()
  }
}
