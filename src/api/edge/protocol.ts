/**
 * What the core thread and its HTTP edge threads say to each other. Work goes in batches, one
 * message per event-loop turn each way, so the cost of a structured clone is shared by every
 * request of the turn.
 */
import type { Transaction } from '../../chain/index.js'
import type { ErrorCode } from '../../errors/index.js'
import type { DecodedWire } from '../../feed/index.js'
import type { EnvSettings } from '../../node/index.js'
import type { EnvelopeUpload } from '../routes/relay.js'

/**
 * The header that carries the per-start secret on every request an edge forwards to the core's
 * private listener; a request without it is refused there (403), so nobody else on the machine
 * can pass for an edge and name its own client address.
 */
export const EDGE_SECRET_HEADER = 'x-kith-edge'
/** The client's address as the edge saw it; trusted only beside the secret, overwritten on every request. */
export const EDGE_CLIENT_IP_HEADER = 'x-kith-client-ip'

/** What an edge thread is started with (workerData). */
export interface EdgeSetup {
  index: number
  /** the public listener, shared by every edge (SO_REUSEPORT) */
  host: string | undefined
  port: number
  /** the core's private listener on loopback, where everything but the edge's own routes goes */
  corePort: number
  secret: string
  env: EnvSettings
  /** what may wait for a slow WebSocket or event-stream client before it is cut (RealtimeLimits.maxQueuedBytes) */
  maxQueuedBytes: number
  logLevel: string
  /** the calls the core takes (a node without a relay or a feed takes none of theirs): their routes are answered here */
  calls: EdgeCallKind[]
  /** the node's chain store, which the edge opens read-only to answer the committed reads; absent: the core answers them */
  chainDir?: string
}

/** The ordered part of a request the edge answers: what it parsed, decoded and verified, for the core to decide. */
export type EdgeCall =
  /** POST /api/tx; `signatureValid` stands in for the core's verify pool */
  | { kind: 'submit-tx', tx: Transaction, signatureValid: boolean }
  /** POST /relay/broadcast */
  | { kind: 'broadcast', envelope: EnvelopeUpload }
  /** POST /feed/publish, its buffers transferred, not copied */
  | { kind: 'publish', decoded: DecodedWire }

export type EdgeCallKind = EdgeCall['kind']

export interface CallItem {
  id: number
  call: EdgeCall
  /** the client's address, for the core's per-IP bucket and its per-address limits */
  ip: string
}

/** A request answered at the edge, counted in the core's HTTP metrics. */
export interface HttpObservation {
  method: string
  route: string
  status: number
  seconds: number
}

export type EdgeToCore =
  | { kind: 'listening', port: number }
  /** `reads`: the client addresses of the committed reads answered here since the last message, each a draw on the core's bucket */
  | { kind: 'work', calls: CallItem[], observed: HttpObservation[], reads: string[] }
  | { kind: 'stopped' }

export interface Refusal {
  code: ErrorCode
  message: string
  details: Record<string, unknown> | undefined
}

export type CallAnswer = { id: number, result: unknown } | { id: number, refused: Refusal } | { id: number, failed: true }

export type CoreToEdge =
  | { kind: 'answers', answers: CallAnswer[] }
  /** bucket keys (clientAddressKey) the core's per-IP bucket refuses, each until a time (epoch ms); sent to every edge */
  | { kind: 'limited', until: Array<[key: string, untilMs: number]> }
  | { kind: 'stop' }
