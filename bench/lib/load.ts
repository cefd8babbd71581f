/**
 * The load loops the HTTP benchmarks share, over raw-socket keep-alive connections
 * (raw-http.ts): closed loop (each client sends its next request when the last is answered)
 * and open loop (requests on a fixed schedule, latency from the scheduled time).
 */
import os from 'node:os'
import { processCpuSeconds, selfCpuSeconds } from './proc.js'
import { RawHttpConnection } from './raw-http.js'
import { sleep } from './harness.js'

export interface Percentiles {
  n: number
  p50: number
  p90: number
  p99: number
  max: number
}

export function percentiles (values: number[]): Percentiles {
  if (values.length === 0) return { n: 0, p50: NaN, p90: NaN, p99: NaN, max: NaN }
  const sorted = Float64Array.from(values).sort()
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
  return { n: sorted.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted[sorted.length - 1] }
}

export interface PhaseResult {
  concurrency: number
  durationMs: number
  requests: number
  ok: number
  /** ok answers / wall seconds */
  okPerSec: number
  latencyMs: Percentiles
  /** mean answer body bytes */
  meanBytes: number
  errors: Record<string, number>
  firstErrors: string[]
  /** CPU seconds / wall seconds of the server process (all threads) and of this client process */
  serverCores: number
  clientCores: number
  loadavg: [number, number]
}

export interface LoadRequest { method: string, path: string, body?: Buffer }

/**
 * `concurrency` clients, each on its own keep-alive connection, send `next(client)` back to
 * back for `durationMs` (or until `next` answers undefined); `onOk` sees each 200 answer's body.
 */
export async function closedLoop (opts: {
  port: number
  pid: number
  concurrency: number
  durationMs: number
  next: (client: number) => LoadRequest | undefined
  onOk?: (body: string, client: number) => void
}): Promise<PhaseResult> {
  const connections = Array.from({ length: opts.concurrency }, () => new RawHttpConnection(opts.port))
  const latencies: number[] = []
  const errors: Record<string, number> = {}
  const firstErrors: string[] = []
  let requests = 0
  let ok = 0
  let bytes = 0
  const load0 = os.loadavg()[0]
  const server0 = processCpuSeconds(opts.pid) ?? NaN
  const self0 = selfCpuSeconds()
  const t0 = performance.now()
  const deadline = t0 + opts.durationMs
  const worker = async (connection: RawHttpConnection, client: number): Promise<void> => {
    while (performance.now() < deadline) {
      const req = opts.next(client)
      if (req === undefined) return
      requests++
      const sent = performance.now()
      try {
        const res = await connection.request(req.method, req.path, req.body)
        latencies.push(performance.now() - sent)
        if (res.status === 200) {
          ok++
          bytes += res.body.length
          opts.onOk?.(res.body.toString('utf8'), client)
        } else {
          const key = String(res.status)
          errors[key] = (errors[key] ?? 0) + 1
          if (firstErrors.length < 5) firstErrors.push(`${res.status} ${res.body.toString('utf8', 0, 200)}`)
        }
      } catch (err) {
        errors.network = (errors.network ?? 0) + 1
        if (firstErrors.length < 5) firstErrors.push(String(err))
      }
    }
  }
  await Promise.all(connections.map(worker))
  const wall = (performance.now() - t0) / 1000
  const server1 = processCpuSeconds(opts.pid) ?? NaN
  const self1 = selfCpuSeconds()
  for (const c of connections) c.close()
  return {
    concurrency: opts.concurrency,
    durationMs: opts.durationMs,
    requests,
    ok,
    okPerSec: ok / wall,
    latencyMs: percentiles(latencies),
    meanBytes: ok > 0 ? bytes / ok : NaN,
    errors,
    firstErrors,
    serverCores: (server1 - server0) / wall,
    clientCores: (self1 - self0) / wall,
    loadavg: [load0, os.loadavg()[0]]
  }
}

/** An open-loop sender drops (and counts) a send when this many requests are unanswered. */
export const OPEN_LOOP_MAX_OUTSTANDING = 256

export interface OpenLoopResult {
  offeredPerSec: number
  durationMs: number
  sent: number
  ok: number
  okPerSec: number
  /** from each request's scheduled send time, so a stall delays every request queued behind it */
  latencyMs: Percentiles & { p999: number }
  errors: Record<string, number>
  /** not sent because OPEN_LOOP_MAX_OUTSTANDING requests were unanswered */
  dropped: number
  serverCores: number
  /** how late this client sent each request after its scheduled time (its own timer and CPU): part of `latencyMs` that is not the server's */
  sendLateMs: Percentiles
  /** latency from the actual send */
  fromSendMs: Percentiles
}

/**
 * Requests on a fixed schedule, one every 1/rate s whether or not earlier ones were answered;
 * each latency runs from the scheduled time (no coordinated omission).
 */
export async function openLoop (opts: { port: number, pid: number, rate: number, durationMs: number, path: () => string }): Promise<OpenLoopResult> {
  // a connection per request in flight, back here once its answer is in (so all of them, at the end)
  const idle: RawHttpConnection[] = []
  const latencies: number[] = []
  const late: number[] = []
  const fromSend: number[] = []
  const errors: Record<string, number> = {}
  const pending = new Set<Promise<void>>()
  let sent = 0
  let ok = 0
  let dropped = 0
  const server0 = processCpuSeconds(opts.pid) ?? NaN
  const t0 = performance.now()
  const total = Math.floor(opts.rate * opts.durationMs / 1000)
  for (let i = 0; i < total; i++) {
    const due = t0 + i * 1000 / opts.rate
    const wait = due - performance.now()
    if (wait > 1) await sleep(wait)
    if (pending.size >= OPEN_LOOP_MAX_OUTSTANDING) { dropped++; continue }
    sent++
    // from the schedule, or from the send when the timer fired early (never from later: that would hide stalls)
    const sentAt = performance.now()
    const from = Math.min(due, sentAt)
    late.push(sentAt - from)
    const connection = idle.pop() ?? new RawHttpConnection(opts.port)
    const p = connection.request('GET', opts.path()).then((res) => {
      latencies.push(performance.now() - from)
      fromSend.push(performance.now() - sentAt)
      if (res.status === 200) ok++
      else errors[String(res.status)] = (errors[String(res.status)] ?? 0) + 1
    }, () => { errors.network = (errors.network ?? 0) + 1 }).finally(() => { pending.delete(p); idle.push(connection) })
    pending.add(p)
  }
  await Promise.all(pending)
  const wall = (performance.now() - t0) / 1000
  for (const c of idle) c.close()
  const sorted = Float64Array.from(latencies).sort()
  return {
    offeredPerSec: opts.rate,
    durationMs: opts.durationMs,
    sent,
    ok,
    okPerSec: ok / wall,
    latencyMs: { ...percentiles(latencies), p999: sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(0.999 * sorted.length))] },
    errors,
    dropped,
    serverCores: ((processCpuSeconds(opts.pid) ?? NaN) - server0) / wall,
    sendLateMs: percentiles(late),
    fromSendMs: percentiles(fromSend)
  }
}
