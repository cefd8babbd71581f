/**
 * The feed's in-memory indexes over live (committed, undeleted) posts, kept up to date as blocks
 * are applied and views counted, so no listing scans all posts:
 *
 * - per author and per hashtag, a list in time order: a page is a binary search and a walk;
 * - a timeline merges the lists of the authors a user follows with a heap (newest first);
 * - trending and for-you read hour buckets (by creation time) kept sorted by score: a like or
 *   view moves one post inside its bucket, and a request merges the heads of the buckets in its
 *   window, reading about `limit` posts plus those it skips (older than the window's start in
 *   the first bucket, or excluded for for-you), never every post of the window.
 *
 * Pure: no I/O, time passed in. Only what ordering needs is held here (ids, authors, times,
 * counts); the rest of a list entry is read when a page is presented.
 */
import { compareRank, compareTime, type Position, type RankedPost } from './ranking.js'
import { Heap, SortedArray, lowerBound } from './sorted.js'

export interface IndexedPost extends RankedPost {
  /** hashtags, for posts whose body this node holds */
  tags: readonly string[]
}

export interface NewPost {
  id: string
  author: string
  created: number
  likes: number
  views: number
  tags?: readonly string[]
}

export interface Page {
  limit: number
  /** newest-first paging: only posts strictly older than this position */
  before?: Position
}

const HOUR_MS = 3_600_000
/** trending windows reach back at most 168 hours (spec); the rank buckets keep one more */
export const MAX_WINDOW_HOURS = 168
export const FOR_YOU_HOURS = 48

class TimeList extends SortedArray<IndexedPost> {
  constructor (readonly key: string) {
    super(compareTime)
  }
}

/** Where a newest-first walk of `list` starts: the last item strictly before `before`. */
function startOf (list: TimeList, before: Position | undefined): number {
  if (before === undefined) return list.length - 1
  return lowerBound(list.items, before, compareTime) - 1
}

interface Cursor {
  list: readonly IndexedPost[]
  at: number
}

const newestFirst = (a: Cursor, b: Cursor): number => compareTime(b.list[b.at], a.list[a.at])
const bestFirst = (a: Cursor, b: Cursor): number => compareRank(a.list[a.at], b.list[b.at])

export class FeedIndex {
  private readonly posts = new Map<string, IndexedPost>()
  private readonly authors = new Map<string, TimeList>()
  private readonly tags = new Map<string, TimeList>()
  private readonly hours = new Map<number, SortedArray<IndexedPost>>()
  private oldestHour = -Infinity

  get size (): number {
    return this.posts.size
  }

  get (id: string): IndexedPost | undefined {
    return this.posts.get(id)
  }

  add (post: NewPost): void {
    this.place(post, (list, entry) => list.insert(entry))
  }

  /**
   * Adds many posts in any order (the rebuild at start): each list is appended to and sorted
   * once at the end, where add() would splice every out-of-order post into place.
   */
  addAll (posts: Iterable<NewPost>): void {
    const touched = new Set<SortedArray<IndexedPost>>()
    for (const post of posts) {
      this.place(post, (list, entry) => {
        list.push(entry)
        touched.add(list)
      })
    }
    for (const list of touched) list.sort()
  }

  private place (post: NewPost, put: (list: SortedArray<IndexedPost>, entry: IndexedPost) => void): void {
    if (this.posts.has(post.id)) return
    const byAuthor = this.listOf(this.authors, post.author)
    // the author string is shared with its list: one copy per author, not per post
    const entry: IndexedPost = { id: post.id, author: byAuthor.key, created: post.created, likes: post.likes, views: post.views, tags: post.tags ?? [] }
    this.posts.set(entry.id, entry)
    put(byAuthor, entry)
    for (const tag of entry.tags) put(this.listOf(this.tags, tag), entry)
    const bucket = this.bucketOf(entry, true)
    if (bucket !== undefined) put(bucket, entry)
  }

  /** Takes a post out of every listing (deleted on chain). */
  remove (id: string): void {
    const entry = this.posts.get(id)
    if (entry === undefined) return
    this.posts.delete(id)
    this.unlist(this.authors, entry.author, entry)
    for (const tag of entry.tags) this.unlist(this.tags, tag, entry)
    const bucket = this.bucketOf(entry, false)
    bucket?.remove(entry)
    if (bucket?.length === 0) this.hours.delete(hourOf(entry.created))
  }

  setLikes (id: string, likes: number): void {
    const entry = this.posts.get(id)
    if (entry !== undefined && entry.likes !== likes) this.rescore(entry, () => { entry.likes = likes })
  }

  /** Counts one view; the post's new view count, or undefined when it is not listed. */
  addView (id: string): number | undefined {
    const entry = this.posts.get(id)
    if (entry === undefined) return undefined
    this.rescore(entry, () => { entry.views += 1 })
    return entry.views
  }

  /** The posts of one author, newest first. */
  byAuthor (author: string, page: Page): IndexedPost[] {
    return this.walk(this.authors.get(author), page)
  }

  /** Posts carrying `tag` (lowercase), newest first. */
  byTag (tag: string, page: Page): IndexedPost[] {
    return this.walk(this.tags.get(tag), page)
  }

  /** Posts of all `authors`, newest first: a heap merge of their lists. */
  timeline (authors: Iterable<string>, page: Page): IndexedPost[] {
    const cursors: Cursor[] = []
    for (const author of authors) {
      const list = this.authors.get(author)
      if (list === undefined) continue
      const at = startOf(list, page.before)
      if (at >= 0) cursors.push({ list: list.items, at })
    }
    const heap = new Heap<Cursor>(newestFirst, cursors)
    const out: IndexedPost[] = []
    while (out.length < page.limit) {
      const top = heap.peek()
      if (top === undefined) break
      out.push(top.list[top.at])
      if (top.at > 0) {
        top.at -= 1
        heap.topChanged()
      } else {
        heap.pop()
      }
    }
    return out
  }

  /** The best `limit` posts created in the last `windowHours` hours before `nowMs`. */
  trending (windowHours: number, limit: number, nowMs: number): IndexedPost[] {
    return this.ranked(nowMs - windowHours * HOUR_MS, limit, () => false, Infinity, nowMs)
  }

  /**
   * For-you: the best posts of the last 48 hours that `exclude` lets through. `maxScan` bounds
   * how many posts one request may look at, however many it excludes.
   */
  forYou (limit: number, nowMs: number, exclude: (post: IndexedPost) => boolean, maxScan: number): IndexedPost[] {
    return this.ranked(nowMs - FOR_YOU_HOURS * HOUR_MS, limit, exclude, maxScan, nowMs)
  }

  /** Drops rank buckets older than the longest window (their posts stay in the other lists). */
  prune (nowMs: number): void {
    const oldest = hourOf(nowMs - MAX_WINDOW_HOURS * HOUR_MS) - 1
    if (oldest <= this.oldestHour) return
    this.oldestHour = oldest
    for (const hour of this.hours.keys()) if (hour < oldest) this.hours.delete(hour)
  }

  private ranked (fromMs: number, limit: number, exclude: (post: IndexedPost) => boolean, maxScan: number, nowMs: number): IndexedPost[] {
    this.prune(nowMs)
    const firstHour = hourOf(fromMs)
    const cursors: Cursor[] = []
    for (const [hour, bucket] of this.hours) {
      if (hour >= firstHour && bucket.length > 0) cursors.push({ list: bucket.items, at: 0 })
    }
    const heap = new Heap<Cursor>(bestFirst, cursors)
    const out: IndexedPost[] = []
    let scanned = 0
    while (out.length < limit && scanned < maxScan) {
      const top = heap.peek()
      if (top === undefined) break
      const post = top.list[top.at]
      scanned += 1
      if (post.created >= fromMs && !exclude(post)) out.push(post)
      if (top.at + 1 < top.list.length) {
        top.at += 1
        heap.topChanged()
      } else {
        heap.pop()
      }
    }
    return out
  }

  private walk (list: TimeList | undefined, page: Page): IndexedPost[] {
    if (list === undefined) return []
    const out: IndexedPost[] = []
    for (let i = startOf(list, page.before); i >= 0 && out.length < page.limit; i--) out.push(list.items[i])
    return out
  }

  private rescore (entry: IndexedPost, change: () => void): void {
    // the bucket is searched by the old score, so take the post out before changing it
    const bucket = this.bucketOf(entry, false)
    bucket?.remove(entry)
    change()
    bucket?.insert(entry)
  }

  private bucketOf (entry: IndexedPost, create: boolean): SortedArray<IndexedPost> | undefined {
    const hour = hourOf(entry.created)
    if (hour < this.oldestHour) return undefined
    let bucket = this.hours.get(hour)
    if (bucket === undefined && create) {
      bucket = new SortedArray<IndexedPost>(compareRank)
      this.hours.set(hour, bucket)
    }
    return bucket
  }

  private listOf (lists: Map<string, TimeList>, key: string): TimeList {
    let list = lists.get(key)
    if (list === undefined) {
      list = new TimeList(key)
      lists.set(key, list)
    }
    return list
  }

  private unlist (lists: Map<string, TimeList>, key: string, entry: IndexedPost): void {
    const list = lists.get(key)
    if (list === undefined) return
    list.remove(entry)
    if (list.length === 0) lists.delete(key)
  }
}

function hourOf (unixMs: number): number {
  return Math.floor(unixMs / HOUR_MS)
}
