/**
 * Keeps configured peers connected: each one not connected is dialed, and re-dialed with
 * exponential backoff (0.5 s doubling up to 30 s). The backoff resets once a connection has
 * stayed up for STABLE_MS: a dial that "succeeds" but is cut at once (the remote refuses us
 * after the handshake, or is full) counts as a failure, so a refusing peer is not hammered.
 * Pure scheduling over injected I/O and clock, driven by `tick()`.
 */

export const REDIAL_MIN_MS = 500
export const REDIAL_MAX_MS = 30_000
export const STABLE_MS = 2_000

export interface RedialTarget {
  peerId: string
  addr: string
}

export interface RedialPort {
  isConnected (peerId: string): boolean
  isDenied (peerId: string): boolean
  /** resolves once connected, rejects on failure */
  dial (target: RedialTarget): Promise<void>
  now (): number
  onDialError (target: RedialTarget, err: unknown, retryInMs: number): void
}

interface TargetState {
  target: RedialTarget
  /** wait before the attempt after the next one */
  delayMs: number
  nextAt: number
  dialing: boolean
  /** when the current connection will count as stable */
  stableAt: number | undefined
}

export class Redialer {
  private readonly targets: TargetState[]
  private stopped = false

  constructor (targets: RedialTarget[], private readonly port: RedialPort) {
    this.targets = targets.map((target) => ({ target, delayMs: REDIAL_MIN_MS, nextAt: 0, dialing: false, stableAt: undefined }))
  }

  tick (): void {
    if (this.stopped) return
    const now = this.port.now()
    for (const s of this.targets) {
      if (s.dialing) continue
      if (this.port.isConnected(s.target.peerId)) {
        s.stableAt ??= now + STABLE_MS
        if (now >= s.stableAt) {
          s.delayMs = REDIAL_MIN_MS
          s.nextAt = 0
        }
        continue
      }
      s.stableAt = undefined
      // A denied peer is not dialed and does not accumulate backoff: it is dialed as soon as
      // it is allowed again.
      if (this.port.isDenied(s.target.peerId) || now < s.nextAt) continue
      s.dialing = true
      const settle = (): void => {
        s.nextAt = this.port.now() + s.delayMs
        s.delayMs = Math.min(s.delayMs * 2, REDIAL_MAX_MS)
        s.dialing = false
      }
      this.port.dial(s.target).then(settle, (err: unknown) => {
        const retryInMs = s.delayMs
        settle()
        this.port.onDialError(s.target, err, retryInMs)
      }).catch(() => {})
    }
  }

  /** the delay the next failure of this peer will wait, for tests and logs */
  backoffOf (peerId: string): number | undefined {
    return this.targets.find((s) => s.target.peerId === peerId)?.delayMs
  }

  stop (): void {
    this.stopped = true
  }
}
