/**
 * Real-time benchmark: one real node (`bin/kith start` child, 1 s blocks) and WebSocket clients
 * (the `ws` package) in child processes of this script.
 *
 * - blocks: N sockets (default 10,000) split over K load-generator children; each subscribes to
 *   `blocks`. Node RSS before the first connection and once all are subscribed and quiet gives
 *   the memory per idle connection. Then for `durationMs` every child records, for every block
 *   event on every socket, receipt time − `committed_at` (the node's clock at commit; same
 *   machine, same clock), and how many sockets received each height: a delivery count below N
 *   is a missed event. The latency includes the client child's own event-loop queue (it parses
 *   N/K messages per block), so it is an upper bound of the node's share;
 * - inbox: one socket subscribed to M mailboxes; an open-loop sender in the same child POSTs
 *   `/relay/broadcast` at R envelopes/s (one every 1/R s, answered or not, keep-alive agent),
 *   spread over the M mailboxes with a fresh sender key each; latency from the moment each POST
 *   is sent to the receipt of the `inbox` event with its id (computed client-side: the canonical
 *   id). It includes the node's durable journal write (O_DSYNC) before the event is emitted.
 *
 * Run alone: node dist/bench/realtime.js [--quick]
 */
import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import WebSocket from 'ws'
import { DEFAULT_FANOUT_CHUNK } from '../src/realtime/index.js'
import { canonicalId } from '../src/relay/index.js'
import { sleep } from './lib/harness.js'
import { percentiles, type Percentiles } from './lib/load.js'
import { machineInfo, type MachineInfo } from './lib/proc.js'
import { inChild, kithInit, rssBytes, runChildMode, startKith } from './lib/processes.js'

export interface RealtimeBenchConfig {
  /** WebSocket subscribers of `blocks` */
  subscribers: number
  /** load-generator child processes they are split over */
  children: number
  /** how long block latencies are recorded, ms */
  durationMs: number
  /** quiet time before the idle RSS is read, ms */
  settleMs: number
  inbox: { ratePerSec: number, durationMs: number, mailboxes: number }
}

export const DEFAULT_REALTIME_CONFIG: RealtimeBenchConfig = {
  subscribers: 10_000,
  children: 4,
  durationMs: 30_000,
  settleMs: 3_000,
  inbox: { ratePerSec: 1000, durationMs: 10_000, mailboxes: 50 }
}

export const QUICK_REALTIME_CONFIG: Partial<RealtimeBenchConfig> = {
  subscribers: 1000,
  children: 2,
  durationMs: 5_000,
  settleMs: 1_000,
  inbox: { ratePerSec: 500, durationMs: 3_000, mailboxes: 20 }
}

export interface RealtimeBenchResult {
  config: RealtimeBenchConfig
  machine: MachineInfo
  loadavg: [number, number]
  connectMs: number
  rss: { before: number, idle: number, perConnection: number }
  blocks: {
    heights: number
    expectedDeliveries: number
    deliveries: number
    latencyMs: Percentiles
    /** per block: its first receipt on any socket (the node's commit-to-send path and one hop) */
    firstReceiptMs: Percentiles
    /** per block: last receipt − first receipt (the node writing to every socket, and the clients reading) */
    spreadMs: Percentiles
    /** the node handing one block event to every subscriber, chunk by chunk, publish to last write (its debug log) */
    fanOutMs: Percentiles
  }
  inbox: { sent: number, answered: number, received: number, errors: number, latencyMs: Percentiles, offeredPerSec: number }
  elapsedMs: number
}

interface SubscriberReport {
  /** receipt − committed_at, ms, of every block event in the window */
  latencies: number[]
  /** block height → sockets of this child that received it in the window, and its first and last receipt (ms after commit) */
  perHeight: Record<string, { count: number, first: number, last: number }>
}

/** Child mode: opens `count` sockets subscribed to blocks, says READY, waits for GO on stdin, records for `durationMs`. */
async function subscribers (url: string, count: number, durationMs: number): Promise<SubscriberReport> {
  const sockets: WebSocket[] = []
  const latencies: number[] = []
  const perHeight: SubscriberReport['perHeight'] = {}
  let windowStart = Infinity
  let windowEnd = Infinity
  const open = async (): Promise<void> => {
    const ws = new WebSocket(`${url}/api/ws`, { perMessageDeflate: false })
    sockets.push(ws)
    await new Promise<void>((resolve, reject) => {
      ws.on('message', (data) => {
        const now = Date.now()
        const text = String(data)
        if (text.startsWith('{"event":"subscribed"')) { resolve(); return }
        if (!text.startsWith('{"event":"block"')) return
        const m = JSON.parse(text) as { height: number, committed_at: number }
        if (m.committed_at < windowStart || m.committed_at > windowEnd) return
        const latency = now - m.committed_at
        latencies.push(latency)
        const seen = (perHeight[m.height] ??= { count: 0, first: latency, last: latency })
        seen.count++
        seen.first = Math.min(seen.first, latency)
        seen.last = Math.max(seen.last, latency)
      })
      ws.once('open', () => ws.send('{"op":"subscribe","topic":"blocks"}'))
      ws.once('error', reject)
    })
  }
  // a few hundred handshakes at a time: the node's accept queue and this loop both stay short
  for (let i = 0; i < count; i += 250) await Promise.all(Array.from({ length: Math.min(250, count - i) }, open))
  console.error('READY')
  // stdin stays open while it is read: destroy it after GO, or it keeps this child alive
  await new Promise<void>((resolve) => process.stdin.once('data', () => { process.stdin.destroy(); resolve() }))
  windowStart = Date.now()
  windowEnd = windowStart + durationMs
  await sleep(durationMs + 1500)
  for (const ws of sockets) ws.terminate()
  return { latencies, perHeight }
}

interface InboxReport { sent: number, answered: number, received: number, errors: number, latencies: number[] }

/** Child mode: one socket on `mailboxes` mailboxes, an open-loop broadcaster at `rate`/s for `durationMs`. */
async function inboxLatency (url: string, port: number, rate: number, durationMs: number, mailboxes: number): Promise<InboxReport> {
  const pubs = Array.from({ length: mailboxes }, () => randomBytes(32).toString('hex'))
  const ws = new WebSocket(`${url}/api/ws`, { perMessageDeflate: false })
  const sentAt = new Map<string, number>()
  const latencies: number[] = []
  let subscribed = 0
  await new Promise<void>((resolve, reject) => {
    ws.on('message', (data) => {
      const now = performance.now()
      const m = JSON.parse(String(data)) as { event: string, id?: string, error?: string }
      if (m.event === 'error') reject(new Error(`the node refused a subscription: ${m.error ?? ''}`))
      if (m.event === 'subscribed' && ++subscribed === pubs.length) resolve()
      if (m.event !== 'inbox' || m.id === undefined) return
      const t = sentAt.get(m.id)
      if (t !== undefined) latencies.push(now - t)
    })
    ws.once('open', () => { for (const pub of pubs) ws.send(JSON.stringify({ op: 'subscribe', topic: 'mailbox', pub })) })
    ws.once('error', reject)
  })
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
  let sent = 0
  let answered = 0
  let errors = 0
  const post = (i: number): void => {
    const nonce = randomBytes(24)
    const ciphertext = randomBytes(200)
    const body = Buffer.from(JSON.stringify({
      envelope: { id: 'x', sender_pub: randomBytes(32).toString('hex'), recipient_pub: pubs[i % pubs.length], sender_ed25519_pub: '', fee_ut: 0, fee_sig: null, nonce: nonce.toString('base64'), ciphertext: ciphertext.toString('base64'), sent_at: 0 }
    }))
    sentAt.set(canonicalId(nonce, ciphertext), performance.now())
    sent++
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/relay/broadcast', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      res.resume()
      res.on('end', () => { if (res.statusCode === 200) answered++; else errors++ })
    })
    req.on('error', () => { errors++ })
    req.end(body)
  }
  const t0 = performance.now()
  const total = Math.round(rate * durationMs / 1000)
  for (let i = 0; i < total; i++) {
    const due = t0 + i * 1000 / rate
    const wait = due - performance.now()
    if (wait > 1) await sleep(wait)
    post(i)
  }
  await sleep(2000)
  ws.terminate()
  agent.destroy()
  return { sent, answered, received: latencies.length, errors, latencies }
}

export async function runRealtimeBench (overrides: Partial<RealtimeBenchConfig> = {}, log: (line: string) => void = (l) => console.error(l)): Promise<RealtimeBenchResult> {
  const config: RealtimeBenchConfig = { ...DEFAULT_REALTIME_CONFIG, ...overrides }
  const t0 = performance.now()
  const load0 = os.loadavg()[0]
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kith-bench-rt-'))
  const home = path.join(dir, 'home')
  await kithInit(home)
  const fanOutMs: number[] = []
  let partial = ''
  const node = await startKith({
    home,
    // debug: the gateway logs how long each large fan-out took from publish to the last socket ('fan-out done')
    logLevel: 'debug',
    // a block every interval: this measures the fan-out of block events (empty blocks are off by default since 2026-11-26)
    args: ['--empty-blocks', 'true'],
    onOutput: (text) => {
      const lines = (partial + text).split('\n')
      partial = lines.pop() ?? ''
      for (const line of lines) {
        if (!line.includes('"fan-out done"')) continue
        const entry = JSON.parse(line) as { subscribers: number, ms: number }
        if (entry.subscribers >= config.subscribers) fanOutMs.push(entry.ms)
      }
    },
    // every client runs on 127.0.0.1: no per-IP cap; the inbox child subscribes to its 50 mailboxes at once
    env: {
      SVC_WS_MAX_CONNECTIONS: String(config.subscribers + 1000),
      SVC_WS_MAX_CONNECTIONS_PER_IP: '0',
      SVC_WS_MESSAGES_PER_SECOND: '0',
      SVC_RATE_LIMIT_RPS: '0',
      SVC_RELAY_SENDER_RPS: '0',
      SVC_RELAY_CLIENT_MAILBOX_PER_MIN: '0',
      SVC_RELAY_CLIENT_MAILBOX_MAX: '0',
      SVC_RELAY_MAILBOX_PER_MIN: '0'
    },
    log
  })
  try {
    const url = `ws://127.0.0.1:${node.port}`
    await sleep(config.settleMs)
    const before = rssBytes(node.pid)
    log(`realtime: connecting ${config.subscribers} subscribers from ${config.children} children...`)
    const per = Math.ceil(config.subscribers / config.children)
    const children: ChildProcess[] = []
    let ready = 0
    const tConnect = performance.now()
    let allReady: () => void = () => {}
    const readyPromise = new Promise<void>((resolve) => { allReady = resolve })
    const reports = Promise.all(Array.from({ length: config.children }, async (_, i) => {
      const count = Math.min(per, config.subscribers - i * per)
      return await inChild<SubscriberReport>(import.meta.url, '--subscribers', [url, String(count), String(config.durationMs)], (line) => {
        if (line === 'READY' && ++ready === config.children) allReady()
        else if (line !== 'READY') log(`  subscribers ${i}: ${line}`)
      }, (child) => children.push(child))
    }))
    await Promise.race([readyPromise, reports.then(() => { throw new Error('a subscriber child ended before it was ready') })])
    const connectMs = performance.now() - tConnect
    await sleep(config.settleMs)
    const idle = rssBytes(node.pid)
    log(`realtime: ${config.subscribers} subscribed in ${Math.round(connectMs)} ms; RSS ${(before / 2 ** 20).toFixed(0)} → ${(idle / 2 ** 20).toFixed(0)} MiB; recording ${config.durationMs} ms of blocks...`)
    for (const child of children) child.stdin?.write('GO\n')
    const done = await reports
    const perHeight = new Map<number, { count: number, first: number, last: number }>()
    for (const r of done) {
      for (const [h, seen] of Object.entries(r.perHeight)) {
        const all = perHeight.get(Number(h))
        perHeight.set(Number(h), all === undefined ? { ...seen } : { count: all.count + seen.count, first: Math.min(all.first, seen.first), last: Math.max(all.last, seen.last) })
      }
    }
    const latencies = done.flatMap((r) => r.latencies)
    const deliveries = [...perHeight.values()].reduce((a, b) => a + b.count, 0)

    log(`realtime: inbox latency at ${config.inbox.ratePerSec} envelopes/s...`)
    const inbox = await inChild<InboxReport>(import.meta.url, '--inbox', [url, String(node.port), String(config.inbox.ratePerSec), String(config.inbox.durationMs), String(config.inbox.mailboxes)], log)
    return {
      config,
      machine: machineInfo(),
      loadavg: [load0, os.loadavg()[0]],
      connectMs,
      rss: { before, idle, perConnection: (idle - before) / config.subscribers },
      blocks: {
        heights: perHeight.size,
        expectedDeliveries: perHeight.size * config.subscribers,
        deliveries,
        latencyMs: percentiles(latencies),
        firstReceiptMs: percentiles([...perHeight.values()].map((x) => x.first)),
        spreadMs: percentiles([...perHeight.values()].map((x) => x.last - x.first)),
        fanOutMs: percentiles(fanOutMs)
      },
      inbox: {
        sent: inbox.sent,
        answered: inbox.answered,
        received: inbox.received,
        errors: inbox.errors,
        latencyMs: percentiles(inbox.latencies),
        offeredPerSec: config.inbox.ratePerSec
      },
      elapsedMs: performance.now() - t0
    }
  } finally {
    await node.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

const f = (x: number, digits = 0): string => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

export function formatRealtimeBench (r: RealtimeBenchResult): string {
  const c = r.config
  const b = r.blocks
  const i = r.inbox
  return [
    `Machine: ${r.machine.nproc} cores, ${r.machine.cpuModel}, ${r.machine.memTotal} RAM, ${r.machine.kernel}, node ${r.machine.node}; ${r.machine.date}. ` +
      `1-minute load average ${r.loadavg[0].toFixed(2)} at the start, ${r.loadavg[1].toFixed(2)} at the end (other engineers' runs share the machine).`,
    '',
    '| measure | value | goal |',
    '|---|--:|---|',
    `| WebSocket subscribers of \`blocks\` (${c.children} load-generator processes) | ${f(c.subscribers)}, connected and subscribed in ${f(r.connectMs / 1000, 1)} s | 10,000 |`,
    `| block events delivered / expected (${b.heights} blocks in ${c.durationMs / 1000} s) | ${f(b.deliveries)} / ${f(b.expectedDeliveries)} | all |`,
    `| commit → receipt, p50 / p90 / p99 / max | ${f(b.latencyMs.p50)} / ${f(b.latencyMs.p90)} / **${f(b.latencyMs.p99)}** / ${f(b.latencyMs.max)} ms | p99 < 250 ms (${b.latencyMs.p99 < 250 ? 'met' : 'not met'}) |`,
    `| per block: first receipt on any socket, median / max | ${f(b.firstReceiptMs.p50)} / ${f(b.firstReceiptMs.max)} ms | |`,
    `| per block: last receipt − first receipt, median / max | ${f(b.spreadMs.p50)} / ${f(b.spreadMs.max)} ms | |`,
    `| per block: the node writing the event to all ${f(c.subscribers)} sockets (in chunks of ${DEFAULT_FANOUT_CHUNK} per event-loop turn), median / max | ${f(b.fanOutMs.p50, 1)} / ${f(b.fanOutMs.max, 1)} ms | |`,
    `| node RSS before / with all subscribed and idle | ${f(r.rss.before / 2 ** 20)} / ${f(r.rss.idle / 2 ** 20)} MiB | |`,
    `| memory per idle connection (RSS growth / connections) | **${f(r.rss.perConnection / 1024, 1)} KiB** | < 20 KiB (${r.rss.perConnection < 20 * 1024 ? 'met' : 'not met'}) |`,
    `| inbox: POST /relay/broadcast → \`inbox\` event, ${f(i.offeredPerSec)} envelopes/s open loop over ${c.inbox.mailboxes} mailboxes, p50 / p90 / p99 / max | ${f(i.latencyMs.p50, 2)} / ${f(i.latencyMs.p90, 2)} / **${f(i.latencyMs.p99, 2)}** / ${f(i.latencyMs.max, 2)} ms | p99 < 10 ms (${i.latencyMs.p99 < 10 ? 'met' : 'not met'}) |`,
    `| inbox: sent / answered 200 / events received / errors | ${f(i.sent)} / ${f(i.answered)} / ${f(i.received)} / ${f(i.errors)} | |`,
    '',
    `Realtime benchmark wall time: ${f(r.elapsedMs / 1000, 1)} s`
  ].join('\n')
}

const isChild = runChildMode(import.meta.url, {
  '--subscribers': async ([url, count, durationMs]) => await subscribers(url, Number(count), Number(durationMs)),
  '--inbox': async ([url, port, rate, durationMs, mailboxes]) => await inboxLatency(url, Number(port), Number(rate), Number(durationMs), Number(mailboxes))
})
if (!isChild && process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runRealtimeBench(process.argv.includes('--quick') ? QUICK_REALTIME_CONFIG : {}).then((r) => {
    console.log(formatRealtimeBench(r))
    if (process.argv.includes('--json')) console.error(JSON.stringify({ ...r }))
  }, (err: unknown) => {
    console.error(err)
    process.exitCode = 1
  })
}
