/**
 * Who liked the posts for-you ranks highest. For-you leaves out the posts the reader liked, so it
 * asks, of each candidate with likes, whether this reader liked it: a random lmdb read per
 * candidate, 41 % of a for-you request at a million posts (docs/benchmarks.md). The candidates
 * are much the same posts for every reader (the best of the last hours), so their likers are kept
 * here, each post's read with one range scan of its like keys, then followed through every
 * committed LIKE_POST and UNLIKE_POST.
 *
 * Bounded: a post with more likes than `maxPerPost` is not kept (it is asked of the state, as
 * before), and at most `maxLikers` likers are kept across posts (each post counting one more),
 * the post used longest ago out first.
 */
import { RecentlyUsed } from './recently-used.js'

export interface LikersLimits {
  maxLikers: number
  maxPerPost: number
}

/** About 100 bytes a liker (a 64-character key and its set entry): 50 MB at most. */
export const DEFAULT_LIKERS_LIMITS: LikersLimits = { maxLikers: 500_000, maxPerPost: 10_000 }

export class Likers {
  private readonly posts: RecentlyUsed<string, Set<string>>

  /** `scan(postId)`: the keys of the accounts that like the post now, from committed state */
  constructor (private readonly scan: (postId: string) => Iterable<string>, private readonly limits: LikersLimits = DEFAULT_LIKERS_LIMITS) {
    // a post weighs one more than its likers, so posts liked by nobody still count against the bound
    this.posts = new RecentlyUsed(limits.maxLikers, (likers) => likers.size + 1)
  }

  /** likers kept across posts, plus one per post */
  get size (): number {
    return this.posts.weight
  }

  /**
   * Whether `pub` likes `postId`, a post the index counts `likes` committed likes for; undefined
   * when the post has too many likes to keep (ask the state).
   */
  likes (postId: string, likes: number, pub: string): boolean | undefined {
    const kept = this.posts.get(postId)
    if (kept !== undefined) return kept.has(pub)
    if (likes > this.limits.maxPerPost) return undefined
    const likers = new Set(this.scan(postId))
    // the count and the keys disagree only while a block is being applied: answer what the state says
    if (likers.size <= this.limits.maxPerPost) this.posts.set(postId, likers)
    return likers.has(pub)
  }

  /**
   * A committed LIKE_POST or UNLIKE_POST of `pub`: `likesNow` says what the state holds after the
   * block (asked only of a kept post), so a transaction that changed nothing changes nothing here.
   */
  changed (postId: string, pub: string, likesNow: () => boolean): void {
    const likers = this.posts.get(postId)
    if (likers === undefined) return
    if (likesNow()) likers.add(pub)
    else likers.delete(pub)
    if (likers.size > this.limits.maxPerPost) this.posts.delete(postId)
    else this.posts.reweigh(postId)
  }

  forget (postIds: Iterable<string>): void {
    for (const id of postIds) this.posts.delete(id)
  }
}
