/**
 * Runs a consensus engine's effects: timers, block building, persistence, broadcasts and
 * commits. Inputs are fed one at a time through a queue, so the engine never sees two at once
 * and an effect that awaits (a commit, a sync) finishes before the next input.
 */
import type { Logger } from 'pino'
import type { Block, Commit } from '../chain/index.js'
import type { ConsensusEffect, ConsensusEngine, ConsensusInput } from '../consensus/index.js'

export interface DriverHost {
  now (): number
  buildBlock (height: number, round: number): { block: Block, blockHash: string }
  commitBlock (block: Block, blockHash: string, commit: Commit): Promise<void>
  /** the input that starts the next height once the head moved */
  nextHeightInput (): ConsensusInput
}

export class ConsensusDriver {
  private readonly queue: ConsensusInput[] = []
  private running = false
  private stopped = true
  private idle: Promise<void> = Promise.resolve()
  private readonly timers = new Set<NodeJS.Timeout>()

  constructor (private readonly engine: ConsensusEngine, private readonly host: DriverHost, private readonly log: Logger) {}

  start (): void {
    this.stopped = false
    this.push(this.host.nextHeightInput())
  }

  /** Stops timers and waits for the effect in progress (a commit) to finish. */
  async stop (): Promise<void> {
    this.stopped = true
    for (const timer of this.timers) clearTimeout(timer)
    this.timers.clear()
    this.queue.length = 0
    await this.idle
  }

  push (input: ConsensusInput): void {
    if (this.stopped) return
    this.queue.push(input)
    if (!this.running) this.idle = this.drain()
  }

  private async drain (): Promise<void> {
    this.running = true
    try {
      while (!this.stopped && this.queue.length > 0) {
        const input = this.queue.shift() as ConsensusInput
        for (const effect of this.engine.handle(input)) {
          if (this.stopped) break
          await this.perform(effect)
        }
      }
    } catch (err) {
      // A failed commit leaves the store at the previous block; stopping is the only safe move.
      this.log.fatal({ err }, 'consensus effect failed; consensus stopped')
      this.stopped = true
    } finally {
      this.running = false
    }
  }

  private async perform (effect: ConsensusEffect): Promise<void> {
    switch (effect.type) {
      case 'schedule-timeout': {
        const timer = setTimeout(() => {
          this.timers.delete(timer)
          this.push({ type: 'timeout', height: effect.height, round: effect.round, step: effect.step, now: this.host.now() })
        }, effect.delayMs)
        this.timers.add(timer)
        return
      }
      case 'build-block': {
        const { block, blockHash } = this.host.buildBlock(effect.height, effect.round)
        this.push({ type: 'block-built', height: effect.height, round: effect.round, block, blockHash })
        return
      }
      case 'commit':
        await this.host.commitBlock(effect.block, effect.blockHash, effect.commit)
        this.push(this.host.nextHeightInput())
        return
      case 'persist':
      case 'broadcast-proposal':
      case 'broadcast-vote':
        // A single validator has nobody to talk to and commits without intermediate votes.
        return
    }
  }
}
