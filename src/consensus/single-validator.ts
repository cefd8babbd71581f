/**
 * Consensus with one validator: at each height, wait out the block interval, ask the shell to
 * build a block, sign its precommit and commit it. Same inputs and effects as the BFT engine.
 */
import type { ConsensusEffect, ConsensusEngine, ConsensusInput, Signer } from './types.js'
import { voteSignBytes } from './votes.js'

export interface SingleValidatorOptions {
  chainId: string
  validator: string
  blockIntervalMs: number
  sign: Signer
}

export class SingleValidatorEngine implements ConsensusEngine {
  private height = 0

  constructor (private readonly opts: SingleValidatorOptions) {}

  handle (input: ConsensusInput): ConsensusEffect[] {
    switch (input.type) {
      case 'new-height': {
        this.height = input.height
        const delayMs = Math.max(0, input.prevBlockTime + this.opts.blockIntervalMs - input.now)
        return [{ type: 'schedule-timeout', height: input.height, round: 0, step: 'propose', delayMs }]
      }
      case 'timeout':
        if (input.height !== this.height || input.step !== 'propose') return []
        return [{ type: 'build-block', height: input.height, round: 0 }]
      case 'block-built': {
        if (input.height !== this.height) return []
        const vote = { type: 'precommit' as const, height: input.height, round: input.round, block_hash: input.blockHash }
        const signature = this.opts.sign(voteSignBytes(this.opts.chainId, vote))
        return [{
          type: 'commit',
          block: input.block,
          blockHash: input.blockHash,
          commit: { height: input.height, round: input.round, block_hash: input.blockHash, signatures: [{ validator: this.opts.validator, signature }] }
        }]
      }
      default:
        return []
    }
  }
}
