/**
 * A bounded map that drops what was used longest ago, by "second chance": a read only marks its
 * entry, and when the map is over its bound the oldest entry goes unless it was read since it was
 * last passed, in which case it moves to the back once. A read therefore costs one lookup: moving
 * every entry read to the back of a Map (delete, then set) cost a for-you request 15 % of its
 * thread in rehashing and the collections it caused (docs/benchmarks.md).
 *
 * The bound is on the entries' total weight (one each unless `weigh` says otherwise), and on
 * their number when `maxEntries` is given.
 */
interface Entry<V> {
  value: V
  weight: number
  used: boolean
}

export class RecentlyUsed<K, V> {
  private readonly entries = new Map<K, Entry<V>>()
  private total = 0

  constructor (private readonly capacity: number, private readonly weigh: (value: V) => number = () => 1, private readonly maxEntries = Infinity) {}

  /** entries held */
  get size (): number {
    return this.entries.size
  }

  /** their total weight */
  get weight (): number {
    return this.total
  }

  get (key: K): V | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    entry.used = true
    return entry.value
  }

  /** Keeps `value` (not when it alone weighs more than the bound), making room first, so a new entry is never the one dropped. */
  set (key: K, value: V): void {
    this.delete(key)
    const weight = this.weigh(value)
    if (weight > this.capacity || this.maxEntries < 1) return
    this.evict(this.capacity - weight, this.maxEntries - 1)
    this.entries.set(key, { value, weight, used: false })
    this.total += weight
  }

  /** After `key`'s value changed in place: its weight is taken again, and the bound kept. */
  reweigh (key: K): void {
    const entry = this.entries.get(key)
    if (entry === undefined) return
    const weight = this.weigh(entry.value)
    this.total += weight - entry.weight
    entry.weight = weight
    this.evict(this.capacity, this.maxEntries)
  }

  delete (key: K): void {
    const entry = this.entries.get(key)
    if (entry === undefined) return
    this.entries.delete(key)
    this.total -= entry.weight
  }

  clear (): void {
    this.entries.clear()
    this.total = 0
  }

  /** Drops entries until their total weight is at most `maxWeight` and they are at most `maxCount`. */
  private evict (maxWeight: number, maxCount: number): void {
    while (this.total > maxWeight || this.entries.size > maxCount) {
      const first = this.entries.entries().next()
      if (first.done === true) return
      const [key, entry] = first.value
      this.entries.delete(key)
      if (entry.used) {
        entry.used = false
        this.entries.set(key, entry)
      } else {
        this.total -= entry.weight
      }
    }
  }
}
