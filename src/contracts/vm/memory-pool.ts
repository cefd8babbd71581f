import type { MemoryLimits } from './sections.js'

const PAGE_BYTES = 65_536
/** Most pages kept between calls, over all limits together (4 MiB). */
const MAX_KEPT_PAGES = 64
/**
 * Calls one memory serves before it is let go. V8 remembers every instance a memory was given
 * to until the next garbage collection, and `memory.grow` visits them all: after 5,000 calls one
 * grow took ~110 µs instead of ~1 µs. Bounding the uses bounds that walk (docs/contracts.md).
 */
const MAX_USES = 32

/**
 * Memories kept between calls, one per limits, zeroed when handed out: what a fresh memory
 * would hold, without the cost of making one (docs/contracts.md § Calls). A memory a call grew
 * is not kept: its size is no longer what the next call's module declares.
 */
export class MemoryPool {
  private readonly kept = new Map<string, WebAssembly.Memory>()
  /** calls each memory has served, kept or in use */
  private readonly uses = new WeakMap<WebAssembly.Memory, number>()
  private keptPages = 0

  take (limits: MemoryLimits): WebAssembly.Memory {
    const key = keyOf(limits)
    let memory = this.kept.get(key)
    if (memory === undefined) {
      memory = new WebAssembly.Memory(limits.maximum === undefined ? { initial: limits.initial } : { initial: limits.initial, maximum: limits.maximum })
    } else {
      this.kept.delete(key)
      this.keptPages -= limits.initial
      new Uint8Array(memory.buffer).fill(0)
    }
    this.uses.set(memory, (this.uses.get(memory) ?? 0) + 1)
    return memory
  }

  give (limits: MemoryLimits, memory: WebAssembly.Memory): void {
    const key = keyOf(limits)
    if ((this.uses.get(memory) ?? MAX_USES) >= MAX_USES || memory.buffer.byteLength !== limits.initial * PAGE_BYTES || this.kept.has(key)) return
    this.kept.set(key, memory)
    this.keptPages += limits.initial
    for (const [oldest, old] of this.kept) {
      if (this.keptPages <= MAX_KEPT_PAGES) break
      this.kept.delete(oldest)
      this.keptPages -= old.buffer.byteLength / PAGE_BYTES
    }
  }
}

const keyOf = (limits: MemoryLimits): string => `${limits.initial}/${String(limits.maximum)}`
