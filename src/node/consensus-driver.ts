/**
 * Runs a consensus engine's effects: timers, block building, persistence, broadcasts and
 * commits. Inputs are fed one at a time through a queue, so the engine never sees two at once,
 * and an effect that awaits (a persist, a commit) finishes before the next effect: a vote is
 * on disk before it is broadcast.
 */
import type { Logger } from 'pino'
import type { Block, Commit } from '../chain/index.js'
import type { ConsensusEffect, ConsensusEngine, ConsensusInput, ConsensusRecord, Proposal, Vote } from '../consensus/index.js'
import { crashIfAt } from './faults.js'

export interface DriverHost {
  now (): number
  buildBlock (height: number, round: number): { block: Block, blockHash: string }
  persist (record: ConsensusRecord): Promise<void>
  broadcastProposal (proposal: Proposal): void
  broadcastVote (vote: Vote): void
  commitBlock (block: Block, blockHash: string, commit: Commit): Promise<void>
  /** the input that starts the next height once the head moved */
  nextHeightInput (restore?: ConsensusRecord): ConsensusInput
  /** resolves when the check of a proposal for (height, round) that is under way ends; undefined when none is */
  proposalCheck?: (height: number, round: number) => Promise<unknown> | undefined
}

export class ConsensusDriver {
  private readonly queue: ConsensusInput[] = []
  private running = false
  private stopped = true
  private idle: Promise<void> = Promise.resolve()
  private readonly timers = new Set<NodeJS.Timeout>()

  constructor (private readonly engine: ConsensusEngine, private readonly host: DriverHost, private readonly log: Logger) {}

  start (restore?: ConsensusRecord): void {
    this.stopped = false
    this.push(this.host.nextHeightInput(restore))
  }

  /** Stops timers and waits for the effect in progress (a persist or commit) to finish. */
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
        const effects = this.engine.handle(input)
        if (input.type === 'timeout') this.logTimeout(input, effects)
        for (const effect of effects) {
          if (this.stopped) break
          await this.perform(effect)
        }
      }
    } catch (err) {
      // A failed persist or commit leaves the node unsure of what it signed or stored; halting
      // is the safe move (CometBFT does the same on a consensus failure).
      this.log.fatal({ err }, 'consensus effect failed; consensus halted')
      this.stopped = true
    } finally {
      this.running = false
    }
  }

  /** A timeout that made this validator vote nil: the operator's sign of a slow or missing proposal. */
  private logTimeout (input: Extract<ConsensusInput, { type: 'timeout' }>, effects: ConsensusEffect[]): void {
    if (effects.some((e) => e.type === 'broadcast-vote' && e.vote.block_hash === null)) {
      this.log.info({ height: input.height, round: input.round, step: input.step }, 'round timed out; voting nil')
    }
  }

  private async perform (effect: ConsensusEffect): Promise<void> {
    switch (effect.type) {
      case 'schedule-timeout': {
        const fire = (): void => {
          this.push({ type: 'timeout', height: effect.height, round: effect.round, step: effect.step, now: this.host.now() })
        }
        const timer = setTimeout(() => {
          this.timers.delete(timer)
          // A proposal that arrived and is being checked is waited for, up to one more timeout:
          // voting nil a few milliseconds before its check ends would cost a whole round. Timeouts
          // only serve liveness, so a later one is safe.
          const checking = effect.step === 'propose' ? this.host.proposalCheck?.(effect.height, effect.round) : undefined
          if (checking === undefined) return fire()
          const cap = setTimeout(() => { this.timers.delete(cap); fire() }, effect.delayMs)
          this.timers.add(cap)
          void checking.finally(() => {
            if (!this.timers.delete(cap)) return
            clearTimeout(cap)
            fire()
          })
        }, effect.delayMs)
        this.timers.add(timer)
        return
      }
      case 'build-block': {
        const { block, blockHash } = this.host.buildBlock(effect.height, effect.round)
        this.push({ type: 'block-built', height: effect.height, round: effect.round, block, blockHash })
        return
      }
      case 'persist':
        await this.host.persist(effect.record)
        crashIfAt('after-persist')
        return
      case 'broadcast-proposal':
        this.host.broadcastProposal(effect.proposal)
        return
      case 'broadcast-vote':
        this.host.broadcastVote(effect.vote)
        return
      case 'commit':
        crashIfAt('before-commit')
        await this.host.commitBlock(effect.block, effect.blockHash, effect.commit)
        crashIfAt('after-commit')
        this.push(this.host.nextHeightInput())
    }
  }
}
