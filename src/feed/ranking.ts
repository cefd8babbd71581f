/**
 * Orders of the feed, as pure functions of a post's counts and time: newest first for the
 * chronological listings, score for trending (spec Feed rule 5) and for-you (rule 6).
 */

/** What ordering needs to know of a post. Counts change; id, author and time never do. */
export interface RankedPost {
  readonly id: string
  readonly author: string
  /** unix ms of the block that created it: blocks in one second still come in order */
  readonly created: number
  likes: number
  views: number
}

/** A point in newest-first order: posts strictly older than (created, id) come after it. */
export interface Position {
  created: number
  id: string
}

export function trendingScore (likes: number, views: number): number {
  return likes * 3 + views
}

/** For-you ranks by likes × 3 + views + 1: the same order as trending, kept as the spec words it. */
export function forYouScore (likes: number, views: number): number {
  return trendingScore(likes, views) + 1
}

/** Ascending by (created, id): the order the chronological lists are stored in. */
export function compareTime (a: Position, b: Position): number {
  if (a.created !== b.created) return a.created - b.created
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

/** Best first: higher score, then newer, then the larger id (a total order, so ties cannot shuffle). */
export function compareRank (a: RankedPost, b: RankedPost): number {
  const byScore = trendingScore(b.likes, b.views) - trendingScore(a.likes, a.views)
  return byScore !== 0 ? byScore : -compareTime(a, b)
}
