/**
 * Event-loop delay of a benchmarked node, measured inside it: this file is loaded into the node
 * with `node --import <this file> bin/kith start …` (see `eldNodeArgs`) and keeps a
 * perf_hooks.monitorEventLoopDelay histogram (a timer every millisecond; how late it fires is
 * how long the loop was held). On SIGUSR2 it writes the histogram since the last SIGUSR2 as one
 * line on stderr and starts a new one. Nothing else in the node changes.
 *
 * The benchmark side (`EldReader`) sends the signal and reads the line back.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'

export interface EventLoopDelay {
  /** samples (about one per ms of the window) */
  n: number
  p50Ms: number
  p99Ms: number
  p999Ms: number
  maxMs: number
}

const MARK = 'KITH_BENCH_ELD '

/** node arguments that load the probe into the started process */
export function eldNodeArgs (): string[] {
  return ['--import', new URL(import.meta.url).href]
}

/** Reads the probe's answers out of the node's output (feed it every chunk) and asks for them. */
export class EldReader {
  private partial = ''
  private waiting: ((eld: EventLoopDelay) => void) | undefined

  feed (text: string): void {
    const lines = (this.partial + text).split('\n')
    this.partial = lines.pop() ?? ''
    for (const line of lines) {
      const at = line.indexOf(MARK)
      if (at < 0) continue
      const waiting = this.waiting
      this.waiting = undefined
      waiting?.(JSON.parse(line.slice(at + MARK.length)) as EventLoopDelay)
    }
  }

  /** The histogram since the last call (or since start), from process `pid`. */
  async read (pid: number, timeoutMs = 5000): Promise<EventLoopDelay> {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => { this.waiting = undefined; reject(new Error(`no event-loop delay from pid ${pid} within ${timeoutMs} ms`)) }, timeoutMs)
      this.waiting = (eld) => { clearTimeout(timer); resolve(eld) }
      process.kill(pid, 'SIGUSR2')
    })
  }
}

function install (): void {
  const histogram = monitorEventLoopDelay({ resolution: 1 })
  histogram.enable()
  const ms = (ns: number): number => ns / 1e6
  process.on('SIGUSR2', () => {
    const eld: EventLoopDelay = {
      n: histogram.count,
      p50Ms: ms(histogram.percentile(50)),
      p99Ms: ms(histogram.percentile(99)),
      p999Ms: ms(histogram.percentile(99.9)),
      maxMs: ms(histogram.max)
    }
    process.stderr.write(`${MARK}${JSON.stringify(eld)}\n`)
    histogram.reset()
  })
}

// only when loaded by --import into a node, not when the benchmark imports EldReader
if (process.execArgv.some((a) => a === import.meta.url || a === fileURLToPath(import.meta.url))) install()
