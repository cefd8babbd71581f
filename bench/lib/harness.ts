/** Pieces every benchmark shares: ports, the node binary, a keep-alive HTTP request, signed workloads. */
import type { ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { accountFrom, generateKeyPair, transfer, type Account } from '../../src/client/index.js'

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
const REQUEST_TIMEOUT_MS = 30_000
/** µT per benchmark transfer: the fee, not the amount, is what the sender spends */
const TRANSFER_UT = 1

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
}

/** The pinned Node 24 when installed, else this process's own. */
export function nodeBinary (): string {
  const pinned = path.join(REPO_ROOT, 'node_modules', 'node', 'bin', 'node')
  return existsSync(pinned) ? pinned : process.execPath
}

export interface HttpAnswer {
  status: number
  body: string
  /** seconds, from a 503's Retry-After */
  retryAfter?: number
}

/** where a node's HTTP listens: a loopback port, or host and port (a node in a network namespace, bench/wan.ts) */
export type HttpTarget = number | { host: string, port: number }

export function request (agent: http.Agent, to: HttpTarget, method: string, urlPath: string, body?: Buffer): Promise<HttpAnswer> {
  const { host, port } = typeof to === 'number' ? { host: '127.0.0.1', port: to } : to
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = body === undefined ? {} : { 'content-type': 'application/json', 'content-length': body.length }
    const req = http.request({ agent, host, port, method, path: urlPath, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      const retryAfter = Number(res.headers['retry-after'])
      res.on('end', () => resolve({
        status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ...(Number.isFinite(retryAfter) ? { retryAfter } : {})
      }))
      res.on('error', reject)
    })
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`${method} ${urlPath}: no answer within ${REQUEST_TIMEOUT_MS} ms`)))
    req.on('error', reject)
    req.end(body)
  })
}

export interface Workload {
  senders: Account[]
  /** serialised POST bodies; ids are `<prefix>-<i>` */
  bodies: Buffer[]
  ids: string[]
}

/**
 * Signs `size` TRANSFERs round-robin over fresh senders, each to the next sender. Timestamps are
 * two minutes ahead of now: the node accepts ±5 minutes, so the pool stays valid for seven
 * minutes, longer than any benchmark.
 */
export function prepareWorkload (senderCount: number, size: number, idPrefix: string): Workload {
  const senders = Array.from({ length: senderCount }, () => accountFrom(generateKeyPair()))
  const time = Date.now() + 2 * 60_000
  const bodies: Buffer[] = new Array(size)
  const ids: string[] = new Array(size)
  for (let i = 0; i < size; i++) {
    const from = senders[i % senderCount]
    const to = senders[(i + 1) % senderCount]
    const id = `${idPrefix}-${i}`
    ids[i] = id
    bodies[i] = Buffer.from(JSON.stringify(transfer(from, to.pub, TRANSFER_UT, { id, time })), 'utf8')
  }
  return { senders, bodies, ids }
}

/** SIGINT, then SIGKILL after 20 s; resolves once the child has exited (at once if it already has). */
export async function stopChild (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGINT')
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
  await exited
  clearTimeout(timer)
}
