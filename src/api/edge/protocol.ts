/**
 * What the core thread and its HTTP edge threads say to each other. Work goes in batches, one
 * message per event-loop turn each way, so the cost of a structured clone is shared by every
 * request of the turn.
 */
import type { Transaction } from '../../chain/index.js'
import { isKithError, KithError, type ErrorCode } from '../../errors/index.js'
import type { DecodedWire } from '../../feed/index.js'
import type { MediaEnv } from '../../media/index.js'
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
  /** the edge's own image workers, which scrub the attachments it decodes; absent where the core takes no publishes */
  media?: EdgeMedia
}

/** What an edge scrubs its attachments with: the node's media settings and its share of the image workers. */
export interface EdgeMedia {
  env: MediaEnv
  workers: number
  maxQueue: number
}

/**
 * A publish as the edge hands it to the core: its content transferred, its attachment kept on the
 * edge under `hold` until the call is answered. The core asks for the scrub (`scrub`) once it has
 * admitted the publish, so an unfunded or refused publish costs no image work, and a photo's
 * megabytes never cross to the core: only the scrubbed image does.
 */
export type PublishWire = Omit<DecodedWire, 'attachment'> & { attachment: { mime: string, size: number, hold: number } | undefined }

/** The ordered part of a request the edge answers: what it parsed, decoded and verified, for the core to decide. */
export type EdgeCall =
  /** POST /api/tx; `signatureValid` stands in for the core's verify pool */
  | { kind: 'submit-tx', tx: Transaction, signatureValid: boolean }
  /** POST /relay/broadcast */
  | { kind: 'broadcast', envelope: EnvelopeUpload }
  /** POST /feed/publish */
  | { kind: 'publish', decoded: PublishWire }

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
  /** the answer to `scrub`: its id is the hold, its result a ScrubbedWire with the bytes transferred */
  | { kind: 'scrubbed', answer: CallAnswer }
  | { kind: 'stopped' }

export interface Refusal {
  code: ErrorCode
  message: string
  details: Record<string, unknown> | undefined
}

export type CallAnswer = { id: number, result: unknown } | { id: number, refused: Refusal } | { id: number, failed: true }

/** The answer to a call that failed: a refusal the client sees when it is the node's own error, a bare failure when not. */
export function refusal (id: number, err: unknown): CallAnswer {
  return isKithError(err) ? { id, refused: { code: err.code, message: err.message, details: err.details } } : { id, failed: true }
}

/** A caller waiting for an answer. */
export interface Settle {
  resolve: (result: unknown) => void
  reject: (err: Error) => void
}

/** Settles the waiting caller `answer` is for: its result, its refusal as the KithError it was, or a bare failure (`failed`). */
export function settleAnswer (waiting: Map<number, Settle>, answer: CallAnswer, failed: string): void {
  const held = waiting.get(answer.id)
  if (held === undefined) return
  waiting.delete(answer.id)
  if ('result' in answer) held.resolve(answer.result)
  else if ('refused' in answer) held.reject(new KithError(answer.refused.code, answer.refused.message, answer.refused.details))
  else held.reject(new Error(failed))
}

/** A scrubbed attachment on its way from an edge to the core. */
export interface ScrubbedWire { bytes: Uint8Array<ArrayBuffer>, mime: string }

/** What the edge that made a call still holds for it: a publish's attachment, scrubbed there on request. */
export interface HeldOnEdge {
  scrub (hold: number): Promise<ScrubbedWire>
}

export type CoreToEdge =
  | { kind: 'answers', answers: CallAnswer[] }
  /** bucket keys (clientAddressKey) the core's per-IP bucket refuses, each until a time (epoch ms); sent to every edge */
  | { kind: 'limited', until: Array<[key: string, untilMs: number]> }
  /** scrub the attachment held under `hold`: its publish was admitted */
  | { kind: 'scrub', hold: number }
  | { kind: 'stop' }
