/**
 * Reads V8's `--trace-gc` lines from a child's output: each collection's kind, main-thread pause
 * and heap size after it, stamped with this process's clock when the line arrived (so pauses can
 * be put beside the phases that saw them).
 *
 *   [pid:0x…]   1234 ms: Mark-Compact 398.1 (410.2) -> 380.5 (405.3) MB, pooled: 0 MB, 120.33 / 0.00 ms  (…)
 */
export interface GcEvent {
  /** performance.now() of this process when the line was read */
  at: number
  kind: string
  pauseMs: number
  heapAfterMb: number
  committedAfterMb: number
}

export interface GcSummary {
  count: number
  fullCount: number
  maxPauseMs: number
  /** kind of the collection with the longest pause ('' when none) */
  longestKind: string
  totalPauseMs: number
}

const LINE = /ms: ((?:Scavenge|Mark-Compact|Minor Mark-Sweep|Mark-Sweep)[^\d]*?) ([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms/

export function parseGcLine (line: string, at: number): GcEvent | undefined {
  const m = LINE.exec(line)
  if (m === null) return undefined
  return { at, kind: m[1].trim(), pauseMs: Number(m[6]), heapAfterMb: Number(m[4]), committedAfterMb: Number(m[5]) }
}

const isFull = (e: GcEvent): boolean => e.kind.startsWith('Mark-')

export class GcTrace {
  readonly events: GcEvent[] = []
  private partial = ''

  /** Feeds output as it arrives; `onLine` sees every whole line that is not a GC trace. */
  feed (text: string, onLine?: (line: string) => void): void {
    const now = performance.now()
    const lines = (this.partial + text).split('\n')
    this.partial = lines.pop() ?? ''
    for (const line of lines) {
      const event = parseGcLine(line, now)
      if (event !== undefined) this.events.push(event)
      else onLine?.(line)
    }
  }

  between (from: number, to: number): GcSummary {
    const hit = this.events.filter((e) => e.at >= from && e.at <= to)
    const longest = hit.reduce<GcEvent | undefined>((m, e) => (m === undefined || e.pauseMs > m.pauseMs ? e : m), undefined)
    return {
      count: hit.length,
      fullCount: hit.filter(isFull).length,
      maxPauseMs: longest?.pauseMs ?? 0,
      longestKind: longest?.kind ?? '',
      totalPauseMs: hit.reduce((s, e) => s + e.pauseMs, 0)
    }
  }

  /** Heap in use after the last full (mark-compact) collection up to `before`: the live heap then. */
  lastFullHeapMb (before = Infinity): number {
    const full = this.events.filter((e) => isFull(e) && e.at <= before)
    return full.at(-1)?.heapAfterMb ?? NaN
  }

  /** The largest heap in use after any collection up to `before`. */
  peakHeapMb (before = Infinity): number {
    const heaps = this.events.filter((e) => e.at <= before).map((e) => e.heapAfterMb)
    return heaps.length === 0 ? NaN : Math.max(...heaps)
  }
}
