import { createHash } from 'node:crypto'
import { generateKeyPairFromSeed } from '@libp2p/crypto/keys'
import { gossipsub, TopicValidatorResult, type GossipSub, type GossipsubMessage } from '@libp2p/gossipsub'
import { createPeerScoreParams, createTopicScoreParams, validatePeerScoreParams, type TopicScoreParams } from '@libp2p/gossipsub/score'
import { identify, type Identify } from '@libp2p/identify'
import type { Connection, Libp2p, PeerId, PrivateKey, Stream } from '@libp2p/interface'
import { noise } from '@libp2p/noise'
import { peerIdFromPrivateKey, peerIdFromString } from '@libp2p/peer-id'
import { ping, type Ping } from '@libp2p/ping'
import { tcp } from '@libp2p/tcp'
import { webSockets } from '@libp2p/websockets'
import { yamux } from '@libp2p/yamux'
import { multiaddr } from '@multiformats/multiaddr'
import { createLibp2p } from 'libp2p'
import { prometheusMetrics } from '@libp2p/prometheus-metrics'
import type { Logger } from 'pino'
import { keyPairFromSeed } from '../crypto/index.js'
import { Assembler, decodeGossip, encodeGossip, type PendingPart } from './chunking.js'
import { P2PError, isP2PError } from './errors.js'
import { encodeFrame, readFrame, sendAll } from './framing.js'
import { Redialer, type RedialTarget } from './redialer.js'
import { GOSSIP_TOPICS, type GossipStats, type GossipTopic, type P2PHandlers, type P2POptions, type PeerInfo, type Validation } from './types.js'
import { decodeVersion, encodeVersion, signVersion, verifyVersion } from './version.js'

/** cap on a request and on a response body (block sync batches, catch-up) */
export const MAX_REQUEST_BYTES = 16 * 1024 * 1024
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024
/** cap on one gossip payload: block proposals up to ~8 MiB plus their envelope (sent in parts above 3 MiB) */
export const MAX_GOSSIP_BYTES = 10 * 1024 * 1024
/** claimed payload bytes held in incomplete multi-part assemblies, over all peers */
const MAX_ASSEMBLY_BYTES = 64 * 1024 * 1024
const MAX_ASSEMBLIES_PER_PEER = 4
/**
 * Gossipsub keeps a message for forwarding for `mcacheLength` heartbeats (1 s each); a result
 * reported later is not forwarded. Assembly and validation must fit in this.
 */
const MCACHE_HEARTBEATS = 10
const ASSEMBLY_TIMEOUT_MS = 8_000
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000
export const DEFAULT_MAX_CONNECTIONS = 64
export const DEFAULT_MAX_IN_FLIGHT_VALIDATIONS = 10_000
export const DEFAULT_VERSION_INTERVAL_MS = 10_000
/** at most one announcement a second for new heights (a block interval may be far shorter) */
const HEIGHT_ANNOUNCE_MIN_GAP_MS = 1000
/** how often configured peers are re-dialed (when due) and denied peers cut off */
const MAINTENANCE_INTERVAL_MS = 250
/** an inbound request stream must be read, answered and written within this */
const SERVE_TIMEOUT_MS = 60_000
/**
 * gossipsub RPC frame cap on receipt; senders cannot exceed 4 MiB anyway (see chunking.ts), so
 * this only matters once gossipsub lifts that and sends whole payloads again
 */
const MAX_RPC_FRAME_BYTES = MAX_GOSSIP_BYTES + 2 * 1024 * 1024
const MAX_ERROR_MESSAGE_BYTES = 1024
const MAX_KNOWN_VERSIONS = 1024
const STATUS_OK = 0
const STATUS_ERROR = 1

// a type alias, not an interface: libp2p's ServiceMap needs the implicit index signature
type Services = {
  identify: Identify
  ping: Ping
  pubsub: GossipSub
}

/** What @libp2p/gossipsub's class has beyond its published `GossipSub` interface. */
interface GossipSubInternals extends GossipSub {
  reportMessageValidationResult (msgId: string, propagationSource: string, acceptance: TopicValidatorResult): void
  getScore (peerId: string): number
  getMeshPeers (topic: string): string[]
}

function withInternals (g: GossipSub): GossipSubInternals {
  const candidate = g as Partial<GossipSubInternals>
  if (typeof candidate.reportMessageValidationResult !== 'function' || typeof candidate.getScore !== 'function' || typeof candidate.getMeshPeers !== 'function') {
    throw new Error('@libp2p/gossipsub lacks reportMessageValidationResult/getScore/getMeshPeers; check its version')
  }
  return g as GossipSubInternals
}

interface KnownVersion {
  version: string
  protocolVersion: number
  height: number
  at: number
}

const VALIDATION_RESULT: Record<Validation, TopicValidatorResult> = {
  accept: TopicValidatorResult.Accept,
  ignore: TopicValidatorResult.Ignore,
  reject: TopicValidatorResult.Reject
}

/**
 * Peer scoring per topic. Only P4 (invalid messages) punishes: each rejected message adds 1 to
 * a counter whose square, times -20, joins the relaying peer's score (one reject: -20, below the
 * gossip threshold of -10; two: -80, graylisted), decaying with a half-life of about 70 s.
 * Delivery quotas (P3, P3b) are off: consensus topics are quiet between blocks, and an honest
 * peer must not be pruned for having nothing to say. Small positive P1/P2 reward staying.
 */
const TOPIC_SCORE: Partial<TopicScoreParams> = {
  topicWeight: 1,
  timeInMeshWeight: 0.01,
  timeInMeshQuantum: 1000,
  timeInMeshCap: 300,
  firstMessageDeliveriesWeight: 0.5,
  firstMessageDeliveriesDecay: 0.9,
  firstMessageDeliveriesCap: 10,
  meshMessageDeliveriesWeight: 0,
  meshFailurePenaltyWeight: 0,
  invalidMessageDeliveriesWeight: -20,
  invalidMessageDeliveriesDecay: 0.99
}

export function topicName (chainId: string, topic: GossipTopic): string {
  return `/kith/${chainId}/${topic}/1`
}

function topicNames (chainId: string): Record<GossipTopic, string> {
  const n = (t: GossipTopic): string => topicName(chainId, t)
  return Object.fromEntries(GOSSIP_TOPICS.map((t) => [t, n(t)])) as Record<GossipTopic, string>
}

export function requestProtocol (chainId: string): string {
  return `/kith/${chainId}/req/1`
}

function checkSeed (seed: Uint8Array): void {
  if (!(seed instanceof Uint8Array) || seed.byteLength !== 32) throw new P2PError('P2P_BAD_KEY', 'the node key seed must be 32 bytes')
}

/** peer id string that a node key seed produces (used by `kith init`/`testnet` to write peer multiaddrs) */
export async function peerIdFromSeed (seed: Uint8Array): Promise<string> {
  checkSeed(seed)
  return peerIdFromPrivateKey(await generateKeyPairFromSeed('Ed25519', seed)).toString()
}

function parsePeerAddr (addr: string): RedialTarget {
  let peerId: string | undefined
  try {
    peerId = multiaddr(addr).getComponents().findLast((c) => c.name === 'p2p')?.value
  } catch (err) {
    throw new P2PError('P2P_BAD_PEER', `invalid peer multiaddr ${addr}`, { cause: err })
  }
  if (peerId === undefined) throw new P2PError('P2P_BAD_PEER', `peer multiaddr ${addr} lacks /p2p/<peerId>`)
  return { peerId, addr }
}

function parsePeerId (peerId: string): PeerId {
  try {
    return peerIdFromString(peerId)
  } catch (err) {
    throw new P2PError('P2P_BAD_PEER', `invalid peer id ${peerId}`, { cause: err })
  }
}

function emptyCounts (): Record<GossipTopic, number> {
  return Object.fromEntries(GOSSIP_TOPICS.map((t) => [t, 0])) as Record<GossipTopic, number>
}

/**
 * A libp2p host for one kith node: TCP and WebSockets, Noise, Yamux, identify, ping, gossipsub
 * on `/kith/<chainId>/<topic>/1`, and one request-response protocol `/kith/<chainId>/req/1`.
 */
export class P2PHost {
  readonly peerId: string
  private libp2p!: Libp2p<Services>
  private gossip!: GossipSubInternals
  private readonly log: Logger
  private readonly topicNames: Record<GossipTopic, string>
  private readonly topicByName = new Map<string, GossipTopic>()
  private readonly protocol: string
  private readonly configured: RedialTarget[]
  private readonly redialer: Redialer
  private readonly versions = new Map<string, KnownVersion>()
  private readonly inFlight = emptyCounts()
  private readonly dropped = emptyCounts()
  private readonly maxInFlight: number
  private readonly assembler = new Assembler({ maxBytes: MAX_ASSEMBLY_BYTES, maxPerPeer: MAX_ASSEMBLIES_PER_PEER, timeoutMs: ASSEMBLY_TIMEOUT_MS })
  /** libsodium secret key of the node key: signs version announcements (the peer id embeds its public key) */
  private readonly nodeSecretKey: Uint8Array
  private localHeight = 0
  private lastVersionAt = 0
  private maintenanceTimer: NodeJS.Timeout | undefined
  private versionTimer: NodeJS.Timeout | undefined
  private announceSoon: NodeJS.Timeout | undefined
  private stopped = false

  private constructor (private readonly opts: P2POptions, private readonly handlers: P2PHandlers, peerId: string) {
    this.peerId = peerId
    this.nodeSecretKey = keyPairFromSeed(opts.nodeKeySeed).secretKey
    this.log = opts.logger
    this.protocol = requestProtocol(opts.chainId)
    this.topicNames = topicNames(opts.chainId)
    for (const t of GOSSIP_TOPICS) this.topicByName.set(this.topicNames[t], t)
    this.maxInFlight = opts.maxInFlightValidations ?? DEFAULT_MAX_IN_FLIGHT_VALIDATIONS
    this.configured = opts.peers.map(parsePeerAddr).filter((t) => t.peerId !== peerId)
    this.redialer = new Redialer(this.configured, {
      isConnected: (id) => this.isConnected(id),
      isDenied: (id) => this.isDenied(id),
      dial: async (target) => {
        this.log.debug({ peerId: target.peerId, addr: target.addr }, 'dialing peer')
        await this.libp2p.dial(multiaddr(target.addr), { signal: AbortSignal.timeout(DEFAULT_REQUEST_TIMEOUT_MS) })
      },
      now: () => Date.now(),
      onDialError: (target, err, retryInMs) => this.log.debug({ peerId: target.peerId, addr: target.addr, retryInMs, err: errorText(err) }, 'dial failed')
    })
  }

  /** Starts listening on `opts.listen`, dials `opts.peers` and subscribes to every topic. */
  static async create (opts: P2POptions, handlers: P2PHandlers): Promise<P2PHost> {
    checkSeed(opts.nodeKeySeed)
    const privateKey = await generateKeyPairFromSeed('Ed25519', opts.nodeKeySeed)
    const host = new P2PHost(opts, handlers, peerIdFromPrivateKey(privateKey).toString())
    await host.start(privateKey)
    return host
  }

  private async start (privateKey: PrivateKey): Promise<void> {
    const topics: Record<string, TopicScoreParams> = {}
    for (const name of this.topicByName.keys()) topics[name] = createTopicScoreParams(TOPIC_SCORE)
    const scoreParams = createPeerScoreParams({
      topics,
      // Peers are configured (permissioned network) and often share an IP (one host, NAT).
      IPColocationFactorWeight: 0
    })
    validatePeerScoreParams(scoreParams)
    const maxConnections = this.opts.maxConnections ?? DEFAULT_MAX_CONNECTIONS

    this.libp2p = await createLibp2p({
      privateKey,
      nodeInfo: { name: 'kith', version: this.opts.nodeVersion },
      addresses: { listen: this.opts.listen },
      transports: [tcp(), webSockets()],
      connectionEncrypters: [noise()],
      ...(this.opts.metricsRegistry !== undefined ? { metrics: prometheusMetrics({ registry: this.opts.metricsRegistry, collectDefaultMetrics: false }) } : {}),
      streamMuxers: [yamux()],
      connectionManager: {
        maxConnections,
        // all nodes of a local testnet dial from 127.0.0.1 within the same second
        inboundConnectionThreshold: Math.max(32, maxConnections)
      },
      connectionGater: {
        denyDialPeer: (peer) => this.isDenied(peer.toString()),
        denyInboundEncryptedConnection: (peer) => this.isDenied(peer.toString()),
        denyOutboundEncryptedConnection: (peer) => this.isDenied(peer.toString())
      },
      services: {
        identify: identify(),
        ping: ping(),
        pubsub: gossipsub({
          emitSelf: false,
          // Every payload carries its own Ed25519 signature (transactions, proposals, votes,
          // envelopes, deletions, version announcements) or proves nothing (status), so a
          // second signature per message by the publishing node cost CPU for nothing (7-14 % of
          // a node's main thread). Messages go without from, seqno, signature and key; one with
          // a signature, seqno or key is refused and its relayer scored. Dedupe rests on the
          // content id below.
          globalSignaturePolicy: 'StrictNoSign',
          asyncValidation: true,
          allowPublishToZeroTopicPeers: true,
          ignoreDuplicatePublishError: true,
          allowedTopics: [...this.topicByName.keys()],
          // content-addressed: gossipsub's seen cache (dedupe), mcache and IHAVE/IWANT all key on it
          msgIdFn: (msg) => messageId(msg.topic, msg.data),
          maxInboundDataLength: MAX_RPC_FRAME_BYTES,
          mcacheLength: MCACHE_HEARTBEATS,
          scoreParams
        })
      }
    })
    this.gossip = withInternals(this.libp2p.services.pubsub)

    this.gossip.addEventListener('gossipsub:message', (evt) => this.onGossipMessage(evt.detail))
    this.gossip.addEventListener('subscription-change', (evt) => {
      if (evt.detail.subscriptions.some((s) => s.subscribe && s.topic === this.topicNames.version)) this.scheduleAnnouncement()
    })
    this.libp2p.addEventListener('peer:disconnect', () => this.maintain())
    await this.libp2p.handle(this.protocol, async (stream, connection) => { await this.serve(stream, connection) }, {
      maxInboundStreams: 64,
      maxOutboundStreams: 64
    })
    for (const name of this.topicByName.keys()) this.gossip.subscribe(name)

    this.maintenanceTimer = setInterval(() => this.maintain(), MAINTENANCE_INTERVAL_MS)
    this.maintenanceTimer.unref()
    this.versionTimer = setInterval(() => this.announceVersion(), this.opts.versionIntervalMs ?? DEFAULT_VERSION_INTERVAL_MS)
    this.versionTimer.unref()
    this.maintain()
    this.log.info({ peerId: this.peerId, addrs: this.multiaddrs(), peers: this.configured.length }, 'p2p host started')
  }

  /** full listen addresses with /p2p/<id> */
  multiaddrs (): string[] {
    return this.libp2p.getMultiaddrs().map((ma) => {
      const s = ma.toString()
      return s.includes('/p2p/') ? s : `${s}/p2p/${this.peerId}`
    })
  }

  /** Never throws: "no peers subscribed" and "duplicate" are not errors; others are logged. */
  async publish (topic: GossipTopic, data: Uint8Array): Promise<void> {
    if (this.stopped) return
    if (data.byteLength > MAX_GOSSIP_BYTES) {
      this.log.warn({ topic, bytes: data.byteLength, max: MAX_GOSSIP_BYTES }, 'gossip message too large, not published')
      return
    }
    for (const message of encodeGossip(data)) {
      try {
        await this.gossip.publish(this.topicNames[topic], message)
      } catch (err) {
        this.log.debug({ topic, err: errorText(err) }, 'publish failed')
        return
      }
    }
  }

  /** One request-response exchange with a peer; throws a P2PError (P2P_REMOTE_ERROR carries the remote's message). */
  async request (peerId: string, data: Uint8Array, opts?: { timeoutMs?: number }): Promise<Uint8Array> {
    if (this.stopped) throw new P2PError('P2P_STOPPED', 'the p2p host is stopped')
    if (data.byteLength > MAX_REQUEST_BYTES) throw new P2PError('P2P_TOO_LARGE', `request of ${data.byteLength} bytes exceeds the cap of ${MAX_REQUEST_BYTES}`)
    const target = parsePeerId(peerId)
    const timeoutMs = opts?.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
    const controller = new AbortController()
    let stream: Stream | undefined
    const timer = setTimeout(() => {
      const err = new P2PError('P2P_TIMEOUT', `request to ${peerId} timed out after ${timeoutMs} ms`)
      controller.abort(err)
      stream?.abort(err)
    }, timeoutMs)
    try {
      stream = await this.libp2p.dialProtocol(target, this.protocol, { signal: controller.signal })
      if (controller.signal.aborted) stream.abort(new P2PError('P2P_TIMEOUT', 'timed out'))
      stream.maxReadBufferLength = MAX_RESPONSE_BYTES + 64
      await sendAll(stream, encodeFrame(data), controller.signal)
      await stream.close({ signal: controller.signal })
      const frame = await readFrame(stream, MAX_RESPONSE_BYTES + 1)
      if (frame.byteLength === 0) throw new P2PError('P2P_REQUEST_FAILED', 'empty response frame')
      const body = frame.subarray(1)
      if (frame[0] === STATUS_OK) return body
      throw new P2PError('P2P_REMOTE_ERROR', Buffer.from(body).toString('utf8'))
    } catch (err) {
      if (controller.signal.aborted) throw new P2PError('P2P_TIMEOUT', `request to ${peerId} timed out after ${timeoutMs} ms`, { cause: err })
      if (isP2PError(err) && err.code === 'P2P_REMOTE_ERROR') throw err
      stream?.abort(err instanceof Error ? err : new Error(String(err)))
      if (isP2PError(err)) throw err
      throw new P2PError('P2P_REQUEST_FAILED', `request to ${peerId} failed: ${errorText(err)}`, { cause: err })
    } finally {
      clearTimeout(timer)
    }
  }

  /** connected peers, and configured peers while disconnected, with the version each announced */
  peers (): PeerInfo[] {
    const out = new Map<string, PeerInfo>()
    for (const conn of this.libp2p.getConnections()) {
      if (conn.status !== 'open') continue
      const id = conn.remotePeer.toString()
      const info = out.get(id) ?? this.peerInfo(id, true)
      info.addrs.push(conn.remoteAddr.toString())
      out.set(id, info)
    }
    for (const t of this.configured) {
      if (!out.has(t.peerId)) out.set(t.peerId, { ...this.peerInfo(t.peerId, false), addrs: [t.addr] })
    }
    return [...out.values()]
  }

  private peerInfo (peerId: string, connected: boolean): PeerInfo {
    const v = this.versions.get(peerId)
    const info: PeerInfo = { peerId, addrs: [], connected }
    if (v !== undefined) {
      info.version = v.version
      info.protocolVersion = v.protocolVersion
      info.height = v.height
    }
    return info
  }

  /**
   * Included in version announcements. A new height is announced within a second rather than at
   * the next periodic announcement, so peers' `/api/peers` does not show a height long past.
   */
  setLocalHeight (height: number): void {
    if (height === this.localHeight) return
    this.localHeight = height
    // before start() there is no gossip to announce on; start() announces to each subscriber
    if (this.versionTimer !== undefined) this.scheduleAnnouncement(this.lastVersionAt + HEIGHT_ANNOUNCE_MIN_GAP_MS - Date.now())
  }

  /** closes every connection to the peer (configured peers are re-dialed) */
  async disconnect (peerId: string): Promise<void> {
    if (this.stopped) return
    await this.libp2p.hangUp(parsePeerId(peerId))
  }

  /** the gossipsub score this host gives a peer (negative after rejected messages) */
  gossipScore (peerId: string): number {
    return this.gossip.getScore(peerId)
  }

  /** peers in this host's gossip mesh for a topic (they get forwarded messages at once) */
  meshPeers (topic: GossipTopic): string[] {
    return this.gossip.getMeshPeers(this.topicNames[topic])
  }

  gossipStats (): GossipStats {
    return { inFlight: { ...this.inFlight }, dropped: { ...this.dropped } }
  }

  async stop (): Promise<void> {
    if (this.stopped) return
    this.stopped = true
    this.redialer.stop()
    clearInterval(this.maintenanceTimer)
    clearInterval(this.versionTimer)
    clearTimeout(this.announceSoon)
    try {
      await this.libp2p.stop()
    } catch (err) {
      this.log.warn({ err: errorText(err) }, 'p2p host did not stop cleanly')
    }
    this.log.info('p2p host stopped')
  }

  // ---- internals ----

  private isConnected (peerId: string): boolean {
    return this.libp2p.getConnections().some((c) => c.status === 'open' && c.remotePeer.toString() === peerId)
  }

  private isDenied (peerId: string): boolean {
    if (this.opts.denyPeers === undefined) return false
    try {
      return this.opts.denyPeers().has(peerId)
    } catch {
      return false
    }
  }

  /** re-dial configured peers when due; cut connections to denied peers */
  private maintain (): void {
    if (this.stopped) return
    if (this.opts.denyPeers !== undefined) {
      for (const conn of this.libp2p.getConnections()) {
        if (conn.status === 'open' && this.isDenied(conn.remotePeer.toString())) {
          conn.close().catch((err: unknown) => {
            conn.abort(err instanceof Error ? err : new Error(String(err)))
          })
        }
      }
    }
    this.redialer.tick()
    for (const p of this.assembler.expire(Date.now())) this.report(p.msgId, p.via, 'ignore')
  }

  private report (msgId: string, via: string, result: Validation): void {
    if (this.stopped) return
    try {
      this.gossip.reportMessageValidationResult(msgId, via, VALIDATION_RESULT[result])
    } catch (err) {
      this.log.debug({ err: errorText(err) }, 'reporting a validation result failed')
    }
  }

  /**
   * Messages are unsigned: `propagationSource` (`via`, the peer the connection's Noise handshake
   * authenticated) is the only identity a message has, and the one gossipsub scores on reject.
   * The origin is whoever signed the payload inside, which the node checks.
   */
  private onGossipMessage ({ propagationSource, msgId, msg }: GossipsubMessage): void {
    const via = propagationSource.toString()
    const topic = this.topicByName.get(msg.topic)
    if (topic === undefined) {
      this.report(msgId, via, 'ignore')
      return
    }
    // gossipsub's StrictNoSign check refuses a message with a signature before it gets here; this guards a config change
    if (msg.type !== 'unsigned') {
      this.report(msgId, via, 'reject')
      return
    }
    const decoded = decodeGossip(msg.data, MAX_GOSSIP_BYTES)
    if (decoded.kind === 'malformed') {
      this.log.debug({ topic, via, reason: decoded.reason }, 'malformed gossip message')
      this.report(msgId, via, 'reject')
      return
    }
    if (decoded.kind === 'whole') {
      this.validate(topic, decoded.payload, via, [{ msgId, via }])
      return
    }
    const added = this.assembler.add(msg.topic, decoded.header, decoded.bytes, { msgId, via }, Date.now())
    switch (added.status) {
      case 'held':
        return
      case 'ignore':
        this.log.debug({ topic, via, reason: added.reason }, 'gossip part ignored')
        this.report(msgId, via, 'ignore')
        return
      case 'invalid':
        this.log.debug({ topic, via, reason: added.reason }, 'gossip parts rejected')
        for (const p of added.parts) this.report(p.msgId, p.via, 'reject')
        return
      case 'complete':
        this.validate(topic, added.payload, via, added.parts)
    }
  }

  /** runs one payload through its validator and reports the outcome for every message that carried it (all came via `via`) */
  private validate (topic: GossipTopic, payload: Uint8Array, via: string, carriers: PendingPart[]): void {
    if (topic === 'version') {
      const v = this.onVersion(payload)
      for (const c of carriers) this.report(c.msgId, c.via, v)
      return
    }
    if (this.inFlight[topic] >= this.maxInFlight) {
      this.dropped[topic]++
      if (this.dropped[topic] === 1 || this.dropped[topic] % 1000 === 0) this.log.warn({ topic, dropped: this.dropped[topic] }, 'gossip validation queue full, ignoring messages')
      for (const c of carriers) this.report(c.msgId, c.via, 'ignore')
      return
    }
    this.inFlight[topic]++
    let pending: Promise<Validation>
    try {
      pending = Promise.resolve(this.handlers.onGossip(topic, payload, via))
    } catch (err) {
      pending = Promise.reject(err)
    }
    pending.then((v): Validation => (v === 'accept' || v === 'reject' ? v : 'ignore'), (err: unknown): Validation => {
      this.log.warn({ topic, via, err: errorText(err) }, 'gossip handler failed')
      return 'ignore'
    }).then((v) => {
      this.inFlight[topic]--
      for (const c of carriers) this.report(c.msgId, c.via, v)
    }).catch(() => {})
  }

  /**
   * A version announcement proves its author by its own signature (the gossip message does not).
   * Forged (signature not by the key in `peer_id`), malformed or for another chain: provably
   * bad, rejected, and the relayer is scored, as an honest relayer checks before forwarding.
   */
  private onVersion (data: Uint8Array): Validation {
    const v = decodeVersion(data)
    if (v === undefined || v.chain_id !== this.opts.chainId || !verifyVersion(v)) return 'reject'
    const known = this.versions.get(v.peer_id)
    // a genuine but older announcement (a replay, or one overtaken in flight) must not roll the record back
    if (known !== undefined && v.at <= known.at) return 'ignore'
    // most recent last, bounded: any key can sign announcements, not only our peers'
    this.versions.delete(v.peer_id)
    this.versions.set(v.peer_id, { version: v.node_version, protocolVersion: v.protocol_version, height: v.height, at: v.at })
    if (this.versions.size > MAX_KNOWN_VERSIONS) {
      const oldest = this.versions.keys().next().value
      if (oldest !== undefined) this.versions.delete(oldest)
    }
    return 'accept'
  }

  /** coalesces announcements when several peers subscribe at once, or heights follow each other */
  private scheduleAnnouncement (delayMs = 20): void {
    if (this.stopped || this.announceSoon !== undefined) return
    this.announceSoon = setTimeout(() => {
      this.announceSoon = undefined
      this.announceVersion()
    }, Math.max(20, delayMs))
    this.announceSoon.unref()
  }

  private announceVersion (): void {
    if (this.stopped) return
    this.lastVersionAt = Math.max(Date.now(), this.lastVersionAt + 1)
    const data = encodeVersion(signVersion({
      peer_id: this.peerId,
      node_version: this.opts.nodeVersion,
      protocol_version: this.opts.protocolVersion,
      height: this.localHeight,
      chain_id: this.opts.chainId,
      at: this.lastVersionAt
    }, this.nodeSecretKey))
    this.publish('version', data).catch(() => {})
  }

  /** serves one inbound request stream: read a frame, answer with status byte + body */
  private async serve (stream: Stream, connection: Connection): Promise<void> {
    const from = connection.remotePeer.toString()
    stream.maxReadBufferLength = MAX_REQUEST_BYTES + 64
    const timer = setTimeout(() => stream.abort(new P2PError('P2P_TIMEOUT', 'request not served in time')), SERVE_TIMEOUT_MS)
    timer.unref()
    // the handler is abandoned (not awaited) once the stream is gone: timeout, reset, stop()
    const gone = new Promise<never>((_resolve, reject) => {
      stream.addEventListener('close', () => reject(new P2PError('P2P_STREAM_ENDED', 'stream closed before the answer')), { once: true })
    })
    gone.catch(() => {})
    try {
      const request = await readFrame(stream, MAX_REQUEST_BYTES)
      let frame: Uint8Array
      try {
        const response = await Promise.race([this.handlers.onRequest(request, from), gone])
        if (response.byteLength > MAX_RESPONSE_BYTES) throw new P2PError('P2P_TOO_LARGE', `response of ${response.byteLength} bytes exceeds the cap of ${MAX_RESPONSE_BYTES}`)
        frame = encodeFrame(Uint8Array.of(STATUS_OK), response)
      } catch (err) {
        const message = Buffer.from(errorText(err), 'utf8').subarray(0, MAX_ERROR_MESSAGE_BYTES)
        frame = encodeFrame(Uint8Array.of(STATUS_ERROR), message)
      }
      await sendAll(stream, frame)
      await stream.close()
    } catch (err) {
      this.log.debug({ from, err: errorText(err) }, 'serving a request failed')
      stream.abort(err instanceof Error ? err : new Error(String(err)))
    } finally {
      clearTimeout(timer)
    }
  }
}

/** sha256 over topic and data: identical payloads on a topic are one message */
function messageId (topic: string, data: Uint8Array): Uint8Array {
  return createHash('sha256').update(topic).update(Uint8Array.of(0)).update(data).digest()
}

function errorText (err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
