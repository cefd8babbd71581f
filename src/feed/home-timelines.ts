/**
 * Home timelines kept between reads, so that a reader who follows a thousand authors does not pay
 * for a thousand-way merge on every page. Mastodon keeps home feeds between reads for the same
 * reason.
 *
 * Homes pull new posts; commits do not push them. A commit appends each new post to one log, which
 * costs the same whatever the author's follower count. A reader's home takes the log entries since
 * its last read and keeps those by authors it follows. So no post causes work in proportion to its
 * author's followers, and a reader nobody asks for costs nothing.
 *
 * A home holds the newest `window` posts of its authors, or all of them when there are fewer. Every
 * post at or after `floor` is in it (deleted ones are skipped as they are read). A page that reaches
 * past the window goes on with the merge of the authors' lists, as it would without a home.
 *
 * Bounded: at most `homes` homes and `follows` followed authors across them; the least recently read
 * are dropped first. The log keeps the last `log` posts, and a home that fell further behind is built
 * again. A reader's FOLLOW or UNFOLLOW drops its home. Pure, like the index.
 */
import type { FeedIndex, IndexedPost, Page } from './feed-index.js'
import { compareTime, type Position } from './ranking.js'
import { RecentlyUsed } from './recently-used.js'
import { SortedArray, lowerBound } from './sorted.js'

export interface HomeLimits {
  /** homes kept */
  homes: number
  /** followed authors across all homes: what bounds their memory */
  follows: number
  /** posts a home holds: at least a page of the largest limit and one more */
  window: number
  /** new posts remembered for homes to catch up from */
  log: number
}

/** About 2,000,000 × 50 bytes of follow sets and 20,000 × 200 references: under 150 MiB when full. */
export const DEFAULT_HOME_LIMITS: HomeLimits = { homes: 20_000, follows: 2_000_000, window: 200, log: 50_000 }

interface Home {
  follows: Set<string>
  /** ascending by (created, id), as the index's lists */
  posts: SortedArray<IndexedPost>
  /** every post of the followed authors at or after this is in `posts`; undefined: every post is */
  floor: Position | undefined
  /** the log position this home has read up to */
  seq: number
}

export class HomeTimelines {
  /** bounded by count and by followed authors across homes; the one read longest ago goes first */
  private readonly homes: RecentlyUsed<string, Home>
  private log: IndexedPost[] = []
  /** the log position of log[0] */
  private logStart = 0

  constructor (private readonly index: FeedIndex, private readonly limits: HomeLimits = DEFAULT_HOME_LIMITS) {
    this.homes = new RecentlyUsed(limits.follows, (home) => home.follows.size, limits.homes)
  }

  get size (): number {
    return this.homes.size
  }

  /** A committed post, already in the index. */
  added (post: IndexedPost): void {
    this.log.push(post)
    // trimmed in steps of a whole log, so each post is copied at most once
    if (this.log.length >= 2 * this.limits.log) {
      const drop = this.log.length - this.limits.log
      this.log = this.log.slice(drop)
      this.logStart += drop
    }
  }

  /** `reader` followed or unfollowed someone: its home is built again on its next read. */
  followsChanged (reader: string): void {
    this.homes.delete(reader)
  }

  /**
   * The authors `reader` follows: its home's set. A reader without a home gets one, as on its first
   * timeline read, so that for-you, which asks on every request, reads the follow range once
   * (scanning it was a third of a for-you request at 1,000,000 posts); the homes' bounds hold.
   */
  followsOf (reader: string, followed: () => string[]): ReadonlySet<string> {
    const home = this.homes.get(reader)
    if (home !== undefined) return home.follows
    const authors = followed()
    if (authors.length === 0 || authors.length > this.limits.follows / 10) return new Set(authors)
    return this.build(reader, authors).follows
  }

  /** A page of `reader`'s timeline, newest first; `followed` reads its follows when its home is built. */
  page (reader: string, followed: () => string[], page: Page): IndexedPost[] {
    let home = this.homes.get(reader)
    if (home !== undefined && home.seq < this.logStart) {
      this.homes.delete(reader)
      home = undefined
    }
    if (home === undefined) {
      const authors = followed()
      // nothing to keep for a reader who follows nobody (any stranger's key), and a reader following
      // more than a tenth of what all homes may hold is served by the merge alone
      if (authors.length === 0) return []
      if (authors.length > this.limits.follows / 10) return this.index.timeline(authors, page)
      home = this.build(reader, authors)
    } else {
      this.catchUp(home)
    }
    return this.read(home, page)
  }

  private build (reader: string, authors: string[]): Home {
    const newest = this.index.timeline(authors, { limit: this.limits.window })
    const posts = new SortedArray<IndexedPost>(compareTime)
    for (let i = newest.length - 1; i >= 0; i--) posts.push(newest[i])
    const oldest = newest.at(-1)
    const home: Home = {
      follows: new Set(authors),
      posts,
      floor: newest.length >= this.limits.window && oldest !== undefined ? { created: oldest.created, id: oldest.id } : undefined,
      seq: this.logStart + this.log.length
    }
    // room is made before it goes in, so the home being built is never the one dropped
    this.homes.set(reader, home)
    return home
  }

  /** Takes the posts logged since the home's last read that it keeps: its authors', at or after its floor. */
  private catchUp (home: Home): void {
    const end = this.logStart + this.log.length
    for (let seq = home.seq; seq < end; seq++) {
      const post = this.log[seq - this.logStart]
      if (!home.follows.has(post.author) || this.index.get(post.id) !== post) continue
      if (home.floor !== undefined && compareTime(post, home.floor) < 0) continue
      home.posts.insert(post)
    }
    home.seq = end
    const excess = home.posts.length - this.limits.window
    if (excess > 0) {
      home.posts.items.splice(0, excess)
      const oldest = home.posts.items[0]
      home.floor = { created: oldest.created, id: oldest.id }
    }
  }

  private read (home: Home, page: Page): IndexedPost[] {
    const items = home.posts.items
    const out: IndexedPost[] = []
    const start = page.before === undefined ? items.length - 1 : lowerBound(items, page.before, compareTime) - 1
    for (let i = start; i >= 0 && out.length < page.limit; i--) {
      const post = items[i]
      if (this.index.get(post.id) === post) out.push(post) // a deleted post stays until it is trimmed
    }
    if (out.length < page.limit && home.floor !== undefined) {
      // older than the window: the merge, from the floor down (or from `before`, when it is older)
      const before = page.before !== undefined && compareTime(page.before, home.floor) < 0 ? page.before : home.floor
      out.push(...this.index.timeline(home.follows, { limit: page.limit - out.length, before }))
    }
    return out
  }
}
