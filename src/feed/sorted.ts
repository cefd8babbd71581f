/**
 * The two containers the feed index is built from: an array kept sorted by a comparator
 * (binary search, append when in order) and a binary heap for merging several of them.
 */
export type Compare<T> = (a: T, b: T) => number

/** First index whose item is not less than `key`. */
export function lowerBound<T, K> (items: readonly T[], key: K, compare: (item: T, key: K) => number): number {
  let lo = 0
  let hi = items.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (compare(items[mid], key) < 0) lo = mid + 1
    else hi = mid
  }
  return lo
}

export class SortedArray<T> {
  readonly items: T[] = []

  constructor (private readonly compare: Compare<T>) {}

  get length (): number {
    return this.items.length
  }

  insert (item: T): void {
    const last = this.items.at(-1)
    // new posts are the newest: appending is the common case
    if (last === undefined || this.compare(last, item) < 0) this.items.push(item)
    else this.items.splice(lowerBound(this.items, item, this.compare), 0, item)
  }

  /** Appends without keeping order: for a bulk load, which calls sort() once at the end. */
  push (item: T): void {
    this.items.push(item)
  }

  sort (): void {
    this.items.sort(this.compare)
  }

  /** Removes `item` (found by its current sort key); false when it is not here. */
  remove (item: T): boolean {
    const at = lowerBound(this.items, item, this.compare)
    for (let i = at; i < this.items.length && this.compare(this.items[i], item) === 0; i++) {
      if (this.items[i] === item) {
        this.items.splice(i, 1)
        return true
      }
    }
    return false
  }
}

/**
 * Min-heap by `compare` (put the best first in the comparator to pop the best). Built from a whole
 * array in O(n) (Floyd), not by n pushes: a timeline starts with one cursor per followed author,
 * a thousand of them for some readers. A merge advances the top in place and calls `topChanged`
 * instead of popping and pushing a new cursor.
 */
export class Heap<T> {
  private readonly items: T[]

  /** Takes `items` over (they are reordered in place). */
  constructor (private readonly compare: Compare<T>, items: T[] = []) {
    this.items = items
    for (let i = (items.length >>> 1) - 1; i >= 0; i--) this.siftDown(i)
  }

  get size (): number {
    return this.items.length
  }

  /** The best item, left in the heap. */
  peek (): T | undefined {
    return this.items[0]
  }

  push (item: T): void {
    const items = this.items
    items.push(item)
    let i = items.length - 1
    while (i > 0) {
      const parent = (i - 1) >>> 1
      if (this.compare(items[i], items[parent]) >= 0) break
      ;[items[i], items[parent]] = [items[parent], items[i]]
      i = parent
    }
  }

  pop (): T | undefined {
    const items = this.items
    const top = items[0]
    const last = items.pop()
    if (items.length > 0 && last !== undefined) {
      items[0] = last
      this.siftDown(0)
    }
    return top
  }

  /** Restores the order after the top item (from `peek`) was changed in place to rank no better. */
  topChanged (): void {
    this.siftDown(0)
  }

  private siftDown (from: number): void {
    const items = this.items
    let i = from
    for (;;) {
      const left = 2 * i + 1
      const right = left + 1
      let best = i
      if (left < items.length && this.compare(items[left], items[best]) < 0) best = left
      if (right < items.length && this.compare(items[right], items[best]) < 0) best = right
      if (best === i) break
      ;[items[i], items[best]] = [items[best], items[i]]
      i = best
    }
  }
}
