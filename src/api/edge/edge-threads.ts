/**
 * The core's side of the HTTP edge: starts the edge threads on the public listener, takes their
 * batched calls (served by the core API: its per-IP bucket, then the node, relay or feed),
 * answers them in one message per turn, asks an edge to scrub the attachment it holds for a
 * publish being served, and replaces an edge that dies.
 */
import { randomBytes } from 'node:crypto'
import { createServer, type AddressInfo } from 'node:net'
import { Worker } from 'node:worker_threads'
import type { Logger } from 'pino'
import { isKithError, KithError } from '../../errors/index.js'
import { clientAddressKey } from '../../relay/index.js'
import { refusal, settleAnswer, type CallAnswer, type CallItem, type CoreToEdge, type EdgeCall, type EdgeSetup, type EdgeToCore, type HeldOnEdge, type HttpObservation, type Settle } from './protocol.js'

const WORKER_URL = new URL('./edge-worker.js', import.meta.url)
/** How long an edge gets to finish its requests on stop before it is terminated (its own grace is 3 s). */
const STOP_WAIT_MS = 5000
/** The pause before an edge that died is started again: a fault at start-up does not spin. */
const RESTART_DELAY_MS = 1000

export interface EdgeThreadsOptions {
  count: number
  /** what every edge is started with, but its index (`port` 0 picks one for all) */
  setup: Omit<EdgeSetup, 'index'>
  logger: Logger
  /** serves one call from an edge (ApiServer.edgeCalls.serve); `edge` scrubs what that edge holds */
  serve: (call: EdgeCall, ip: string, edge: HeldOnEdge) => Promise<unknown>
  /** draws a read an edge answered on the per-IP bucket: the seconds it is refused for when the bucket is empty (ApiServer.edgeCalls.debitRead) */
  debitRead: (ip: string) => number | undefined
  observe: (observation: HttpObservation) => void
}

/** A fresh secret per start, shared by the core API and its edges only. */
export function newEdgeSecret (): string {
  return randomBytes(32).toString('hex')
}

interface Edge {
  worker: Worker
  answers: CallAnswer[]
  flushing: boolean
  /** scrubs asked of this edge and not yet answered, by hold */
  scrubs: Map<number, Settle>
  held: HeldOnEdge
}

export class EdgeThreads {
  private readonly edges = new Set<Edge>()
  private stopping = false
  private bound: AddressInfo = { address: '', family: '', port: 0 }

  private constructor (private readonly opts: EdgeThreadsOptions) {}

  /**
   * Starts `count` edges on host:port and resolves once all listen. The port is first bound
   * alone, so one taken by another program (or another node) fails here with EADDRINUSE, as the
   * core's own listen would, rather than being shared through SO_REUSEPORT.
   */
  static async start (opts: EdgeThreadsOptions): Promise<EdgeThreads> {
    const threads = new EdgeThreads(opts)
    const claim = await claimPort(opts.setup.host, opts.setup.port)
    threads.bound = claim.address
    try {
      await threads.spawn(0)
      claim.release()
      for (let index = 1; index < opts.count; index++) await threads.spawn(index)
    } catch (err) {
      claim.release()
      await threads.stop()
      throw err
    }
    return threads
  }

  /** the public address every edge listens on */
  get address (): AddressInfo {
    return this.bound
  }

  async stop (): Promise<void> {
    this.stopping = true
    await Promise.all([...this.edges].map(async (edge) => {
      const stopped = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, STOP_WAIT_MS)
        edge.worker.on('message', (message: EdgeToCore) => { if (message.kind === 'stopped') { clearTimeout(timer); resolve() } })
        edge.worker.once('exit', () => { clearTimeout(timer); resolve() })
      })
      edge.worker.postMessage({ kind: 'stop' } satisfies CoreToEdge)
      await stopped
      await edge.worker.terminate()
      this.edges.delete(edge)
    }))
  }

  private async spawn (index: number): Promise<void> {
    const { opts } = this
    const setup: EdgeSetup = { ...opts.setup, index, port: this.bound.port }
    const worker = new Worker(WORKER_URL, { workerData: setup })
    const scrubs = new Map<number, Settle>()
    const held: HeldOnEdge = {
      scrub: async (hold) => await new Promise((resolve, reject) => {
        if (!this.edges.has(edge)) { reject(new KithError('UNAVAILABLE', 'the HTTP edge thread that took this publish has stopped')); return }
        scrubs.set(hold, { resolve: resolve as (result: unknown) => void, reject })
        worker.postMessage({ kind: 'scrub', hold } satisfies CoreToEdge)
      })
    }
    const edge: Edge = { worker, answers: [], flushing: false, scrubs, held }
    this.edges.add(edge)
    await new Promise<void>((resolve, reject) => {
      let listening = false
      worker.on('message', (message: EdgeToCore) => {
        if (message.kind === 'listening') { listening = true; resolve() } else if (message.kind === 'work') this.work(edge, message)
        else if (message.kind === 'scrubbed') settleAnswer(scrubs, message.answer, 'an HTTP edge thread failed this scrub; its log has the cause')
      })
      worker.on('error', (err) => {
        if (!listening) reject(err)
        else opts.logger.error({ err, edge: index }, 'an HTTP edge thread failed')
      })
      worker.on('exit', (code) => {
        this.edges.delete(edge)
        for (const waiting of scrubs.values()) waiting.reject(new KithError('UNAVAILABLE', 'the HTTP edge thread that took this publish has stopped'))
        scrubs.clear()
        if (!listening) { reject(new Error(`HTTP edge thread ${index} exited (${code}) before it listened`)); return }
        if (this.stopping) return
        // its connections are gone with it; the other edges go on serving the port meanwhile
        opts.logger.error({ edge: index, code }, 'an HTTP edge thread stopped; starting it again')
        setTimeout(() => { if (!this.stopping) this.spawn(index).catch((err: unknown) => opts.logger.error({ err, edge: index }, 'restarting an HTTP edge thread failed')) }, RESTART_DELAY_MS).unref()
      })
    })
  }

  private work (edge: Edge, { calls, observed, reads }: { calls: CallItem[], observed: HttpObservation[], reads: string[] }): void {
    for (const observation of observed) this.opts.observe(observation)
    this.debitReads(reads)
    for (const { id, call, ip } of calls) {
      this.opts.serve(call, ip, edge.held).then(
        (result) => this.answer(edge, { id, result }),
        (err: unknown) => {
          if (!isKithError(err)) this.opts.logger.error({ err, call: call.kind }, 'a call from an HTTP edge failed')
          this.answer(edge, refusal(id, err))
        }
      )
    }
  }

  /**
   * The reads the edges answered are drawn on the core's bucket after the fact, so a read never
   * waits for the core; an address whose bucket is empty is refused by every edge until it
   * refills. A client may overshoot by what it sends in one message's round trip.
   */
  private debitReads (reads: string[]): void {
    const until: Array<[string, number]> = []
    for (const ip of reads) {
      const retryAfterSeconds = this.opts.debitRead(ip)
      if (retryAfterSeconds !== undefined) until.push([clientAddressKey(ip), Date.now() + retryAfterSeconds * 1000])
    }
    if (until.length === 0) return
    for (const other of this.edges) other.worker.postMessage({ kind: 'limited', until } satisfies CoreToEdge)
  }

  private answer (edge: Edge, answer: CallAnswer): void {
    edge.answers.push(answer)
    if (edge.flushing) return
    edge.flushing = true
    setImmediate(() => {
      edge.flushing = false
      const answers = edge.answers
      edge.answers = []
      if (this.edges.has(edge)) edge.worker.postMessage({ kind: 'answers', answers } satisfies CoreToEdge)
    })
  }
}

/**
 * Claims host:port for the edges. A port the operator named is bound alone for a moment (no
 * SO_REUSEPORT): taken by anyone else, that fails with EADDRINUSE. Port 0 is bound with
 * SO_REUSEPORT and held until the first edge has joined it: released between the two, the
 * port could be taken by any socket of the machine (an outgoing connection's included).
 */
async function claimPort (host: string | undefined, port: number): Promise<{ address: AddressInfo, release: () => void }> {
  const probe = createServer()
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject)
    probe.listen(port === 0 ? { host, port, reusePort: true } : { host, port, exclusive: true }, () => resolve())
  })
  const address = probe.address() as AddressInfo
  if (port !== 0) await new Promise<void>((resolve) => probe.close(() => resolve()))
  return { address, release: () => { if (probe.listening) probe.close() } }
}
