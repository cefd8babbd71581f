/** Shared pieces of the relay tests: clients with real NaCl keys, a fake clock, and a Koa app mounted like src/api/server.ts. */
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Koa from 'koa'
import Router from '@koa/router'
import { pino, type Logger } from 'pino'
import sodium from 'sodium-native'
import { errorMiddleware } from '../../../src/api/errors.js'
import { jsonBody } from '../../../src/api/middleware.js'
import { koaPath } from '../../../src/api/route.js'
import { relayRoutes, type RelayRouteOptions } from '../../../src/api/routes/relay.js'
import { routeHandler } from '../../../src/api/serving.js'
import { generateKeyPair, sign, toBase64, toHex, type KeyPair } from '../../../src/crypto/index.js'
import { RelayService } from '../../../src/relay/index.js'
import { generateSealKey } from '../../../src/relay/seal.js'
import type { IdentityResolver, RelayServiceOptions } from '../../../src/relay/service.js'

export const silent: Logger = pino({ level: 'silent' })

/** 2026-01-02T03:04:05Z */
export const T0 = Date.UTC(2026, 0, 2, 3, 4, 5)

export interface FakeClock {
  now(): number
  set(ms: number): void
  advance(ms: number): void
}

export function fakeClock (start: number = T0): FakeClock {
  let t = start
  return { now: () => t, set: (ms) => { t = ms }, advance: (ms) => { t += ms } }
}

export async function withTempDir<T> (fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'kith-relay-'))
  try {
    return await fn(dir)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** A client device: an X25519 box key (hex `pub`) and, for owners, an Ed25519 identity. */
export interface Client {
  pub: string
  boxPublic: Buffer
  boxSecret: Buffer
  ed: KeyPair
  edPub: string
}

export function newClient (): Client {
  const boxPublic = Buffer.alloc(sodium.crypto_box_PUBLICKEYBYTES)
  const boxSecret = Buffer.alloc(sodium.crypto_box_SECRETKEYBYTES)
  sodium.crypto_box_keypair(boxPublic, boxSecret)
  const ed = generateKeyPair()
  return { pub: boxPublic.toString('hex'), boxPublic, boxSecret, ed, edPub: toHex(ed.publicKey) }
}

/** What a client uploads: nacl.box(message, nonce, recipient, sender secret), done with libsodium's identical crypto_box_easy. */
export function sealEnvelope (from: Client, toPub: string, message: string | Buffer, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const plain = typeof message === 'string' ? Buffer.from(message, 'utf8') : message
  const nonce = Buffer.alloc(sodium.crypto_box_NONCEBYTES)
  sodium.randombytes_buf(nonce)
  const ciphertext = Buffer.alloc(plain.length + sodium.crypto_box_MACBYTES)
  sodium.crypto_box_easy(ciphertext, plain, nonce, Buffer.from(toPub, 'hex'), from.boxSecret)
  return {
    id: 'client-chosen',
    sender_pub: from.pub,
    recipient_pub: toPub,
    sender_ed25519_pub: from.edPub,
    fee_ut: 0,
    fee_sig: null,
    nonce: nonce.toString('base64'),
    ciphertext: ciphertext.toString('base64'),
    sent_at: 12345,
    ...extra
  }
}

export function openEnvelope (item: { nonce: string, ciphertext: string, sender_pub: string }, recipient: Client): string | undefined {
  const ct = Buffer.from(item.ciphertext, 'base64')
  const out = Buffer.alloc(ct.length - sodium.crypto_box_MACBYTES)
  const ok = sodium.crypto_box_open_easy(out, ct, Buffer.from(item.nonce, 'base64'), Buffer.from(item.sender_pub, 'hex'), recipient.boxSecret)
  return ok ? out.toString('utf8') : undefined
}

export function signText (client: Client, text: string): string {
  return toBase64(sign(Buffer.from(text, 'utf8'), client.ed.secretKey))
}

/** An identity registry in memory: ed25519 -> linked X25519 keys. */
export class FakeRegistry implements IdentityResolver {
  private readonly links = new Map<string, Set<string>>()
  link (ed25519Pub: string, x25519Pub: string): void {
    const set = this.links.get(ed25519Pub) ?? new Set<string>()
    set.add(x25519Pub)
    this.links.set(ed25519Pub, set)
  }

  isLinked (ed25519Pub: string, x25519Pub: string): boolean {
    return this.links.get(ed25519Pub)?.has(x25519Pub) ?? false
  }
}

export function newService (dir: string, opts: Partial<RelayServiceOptions> = {}): RelayService {
  return new RelayService({
    dataDir: dir,
    clock: fakeClock(),
    identity: undefined,
    nodeSealKey: generateSealKey(),
    logger: silent,
    ...opts
  })
}

export interface TestApp {
  url: string
  server: Server
  close(): Promise<void>
}

/** The middleware and mounting of src/api/server.ts, with only the relay routes. */
export async function startApp (service: RelayService, opts: RelayRouteOptions = { rateLimitPerSender: 0 }, maxBodyBytes = 1024 * 1024): Promise<TestApp> {
  const app = new Koa({ proxy: false })
  app.use(errorMiddleware(silent))
  app.use(jsonBody(maxBodyBytes))
  const router = new Router()
  for (const r of relayRoutes(service, opts)) router[r.method](koaPath(r.path), routeHandler(r, { token: undefined, private: false }))
  app.use(router.routes())
  app.use(router.allowedMethods())
  const server = createServer(app.callback())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

export async function call (url: string, method: string, body?: unknown): Promise<{ status: number, body: Record<string, unknown>, headers: Headers }> {
  const res = await fetch(url, {
    method,
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {})
  })
  const text = await res.text()
  return { status: res.status, body: text === '' ? {} : JSON.parse(text) as Record<string, unknown>, headers: res.headers }
}
