/**
 * Keeps configured peers connected: each one not connected is dialed, and after a failure
 * re-dialed with exponential backoff (0.5 s doubling up to 30 s), reset once connected.
 * Pure scheduling over injected I/O and clock, driven by `tick()`.
 */

export const REDIAL_MIN_MS = 500
export const REDIAL_MAX_MS = 30_000

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
  /** delay applied after the next failure */
  delayMs: number
  nextAt: number
  dialing: boolean
}

export class Redialer {
  private readonly targets: TargetState[]
  private stopped = false

  constructor (targets: RedialTarget[], private readonly port: RedialPort) {
    this.targets = targets.map((target) => ({ target, delayMs: REDIAL_MIN_MS, nextAt: 0, dialing: false }))
  }

  tick (): void {
    if (this.stopped) return
    const now = this.port.now()
    for (const s of this.targets) {
      if (s.dialing) continue
      if (this.port.isConnected(s.target.peerId)) {
        s.delayMs = REDIAL_MIN_MS
        s.nextAt = 0
        continue
      }
      // A denied peer is not dialed and does not accumulate backoff: it is dialed as soon as
      // it is allowed again.
      if (this.port.isDenied(s.target.peerId) || now < s.nextAt) continue
      s.dialing = true
      this.port.dial(s.target).then(() => {
        s.delayMs = REDIAL_MIN_MS
        s.nextAt = 0
      }, (err: unknown) => {
        s.nextAt = this.port.now() + s.delayMs
        this.port.onDialError(s.target, err, s.delayMs)
        s.delayMs = Math.min(s.delayMs * 2, REDIAL_MAX_MS)
      }).finally(() => {
        s.dialing = false
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
