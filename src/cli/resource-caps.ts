/**
 * `--max-cpu` and `--max-ram-mb` (spec "Limits"): what each bounds, and the relaunch that applies
 * the two settings a running Node cannot change (its heap limit and its libuv pool size).
 *
 * - `--max-cpu N` (cores, may be fractional): signature-verification worker threads and as many
 *   publish-decoding ones
 *   (⌈N⌉ − 1, at least 1, never more than the machine's cores − 1), image-scrubbing worker
 *   processes (at most ⌊N⌋, at least 1) and libuv's thread pool (⌈N⌉, at least 2: lmdb's async
 *   writes and fs need one each). The main thread is the one core left; an operator who needs a
 *   hard ceiling also sets a cgroup (docker `--cpus`), which these counts then fit.
 * - `--max-ram-mb M`: V8's old-space limit at 60% of M (the rest: buffers, lmdb's own memory,
 *   the worker threads' heaps, and the image workers, which sharp bounds per image), and the
 *   feed's view limiter sized to at most 5% of M (its default, 1,000,000 pairs, is ~160 MB).
 */
import { spawn } from 'node:child_process'
import { availableParallelism } from 'node:os'

export interface ResourceCaps {
  verifyWorkers: number
  /** HTTP edge threads in front of the core thread; 0: the core thread serves HTTP itself */
  httpWorkers: number
  imageWorkers: number | undefined
  /** UV_THREADPOOL_SIZE to start with; undefined: Node's default (4) */
  uvThreads: number | undefined
  /** --max-old-space-size in MiB; undefined: V8's default */
  heapMb: number | undefined
  /** (client, post) pairs the feed's view limiter remembers; undefined: its default */
  viewPairs: number | undefined
}

/** A remembered view pair: a map entry keyed by address and post id, with its expiry (measured ~160 B). */
const VIEW_PAIR_BYTES = 160
/** Share of --max-ram-mb the view limiter may hold when full. */
const VIEW_SHARE = 0.05
const MAX_VIEW_PAIRS = 1_000_000

/**
 * Edge threads unless --http-workers says otherwise: none yet. They answer the write routes and
 * the committed chain reads themselves, but forward the inbox, the feed and WebSockets, which
 * then cost a hop; on two cores that trade is not worth a default (docs/benchmarks.md, "HTTP edge
 * threads" and "Committed reads answered on the edge").
 */
const DEFAULT_HTTP_WORKERS = 0

/** Share of --max-ram-mb given to the V8 heap. */
export const HEAP_SHARE = 0.6
const MIN_HEAP_MB = 64
/** set in the relaunched process, so it does not relaunch again */
const APPLIED_ENV = 'KITH_CAPS_APPLIED'

export function resourceCaps (maxCpu: number | undefined, maxRamMb: number | undefined, cores = availableParallelism(), httpWorkers?: number): ResourceCaps {
  const machineVerifiers = Math.max(1, cores - 1)
  return {
    httpWorkers: httpWorkers ?? DEFAULT_HTTP_WORKERS,
    verifyWorkers: maxCpu === undefined ? machineVerifiers : Math.min(machineVerifiers, Math.max(1, Math.ceil(maxCpu) - 1)),
    imageWorkers: maxCpu === undefined ? undefined : Math.max(1, Math.floor(maxCpu)),
    uvThreads: maxCpu === undefined ? undefined : Math.max(2, Math.ceil(maxCpu)),
    heapMb: maxRamMb === undefined ? undefined : Math.max(MIN_HEAP_MB, Math.floor(maxRamMb * HEAP_SHARE)),
    viewPairs: maxRamMb === undefined ? undefined : Math.min(MAX_VIEW_PAIRS, Math.max(10_000, Math.floor(maxRamMb * 2 ** 20 * VIEW_SHARE / VIEW_PAIR_BYTES)))
  }
}

/** Whether this process still has to be started again for `caps` to apply. */
export function needsRelaunch (caps: ResourceCaps, env: NodeJS.ProcessEnv = process.env): boolean {
  return env[APPLIED_ENV] !== '1' && (caps.heapMb !== undefined || caps.uvThreads !== undefined)
}

/**
 * Runs this same command again in a child Node with the heap flag and the pool size, passes
 * signals on and resolves with its exit code. The parent holds nothing else meanwhile.
 */
export async function relaunch (caps: ResourceCaps): Promise<number> {
  const execArgv = [...process.execArgv.filter((a) => !a.startsWith('--max-old-space-size')), ...(caps.heapMb !== undefined ? [`--max-old-space-size=${caps.heapMb}`] : [])]
  const env = { ...process.env, [APPLIED_ENV]: '1', ...(caps.uvThreads !== undefined ? { UV_THREADPOOL_SIZE: String(caps.uvThreads) } : {}) }
  // the IPC channel is only a lifeline: the child stops when it closes (followParent)
  const child = spawn(process.execPath, [...execArgv, ...process.argv.slice(1)], { stdio: ['inherit', 'inherit', 'inherit', 'ipc'], env })
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal))
  return await new Promise((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? (signal !== null ? 128 + 15 : 1)))
  })
}

/**
 * In a relaunched node: stop (as on SIGTERM) when the parent is gone, even killed with -9, so no
 * node is left holding the store and the ports without the process its operator started.
 */
export function followParent (): void {
  if (process.env[APPLIED_ENV] === '1' && process.connected) process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'))
}
