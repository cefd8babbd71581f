import type { Block, Commit } from '../chain/index.js'

/** 'commit' is the wait between deciding a height and starting round 0 of the next. */
export type Step = 'propose' | 'prevote' | 'precommit' | 'commit'

export interface Vote {
  type: 'prevote' | 'precommit'
  height: number
  round: number
  /** null votes for nil */
  block_hash: string | null
  validator: string
  /** base64 Ed25519 over voteSignBytes */
  signature: string
}

export interface Proposal {
  height: number
  round: number
  /** round of the proof-of-lock this proposal re-proposes, -1 for a fresh block */
  pol_round: number
  block: Block
  block_hash: string
  proposer: string
  signature: string
}

export interface Validator {
  pub_key: string
  power: number
  name?: string
}

/**
 * Inputs to an engine. Time arrives only as `now` in inputs; the engine owns no clock,
 * timer, randomness or I/O, so a seeded simulator can drive it.
 */
export type ConsensusInput =
  /**
   * `txsPending`: the mempool holds transactions as the height starts (read only when empty blocks are off).
   * `abstain`: this validator signs nothing at this height (it follows as a non-validator would): a
   * validator whose store was restored cannot know what it signed before (see the node's restore guard).
   */
  | { type: 'new-height', height: number, now: number, prevBlockTime: number, validators: Validator[], restore?: ConsensusRecord, txsPending?: boolean, abstain?: boolean }
  /** the mempool received a transaction while the chain's next height was `height`: with empty blocks off, what starts a waiting height */
  | { type: 'txs-available', height: number }
  | { type: 'timeout', height: number, round: number, step: Step, now: number }
  | { type: 'block-built', height: number, round: number, block: Block, blockHash: string }
  | { type: 'proposal', proposal: Proposal, valid: boolean }
  | { type: 'vote', vote: Vote }

/**
 * Effects the shell performs in order. A `persist` precedes every broadcast of a vote or
 * proposal and the shell awaits it first, so nothing signed leaves a node before it is on disk.
 */
export type ConsensusEffect =
  | { type: 'schedule-timeout', height: number, round: number, step: Step, delayMs: number }
  | { type: 'build-block', height: number, round: number }
  | { type: 'persist', record: ConsensusRecord }
  | { type: 'broadcast-proposal', proposal: Proposal }
  | { type: 'broadcast-vote', vote: Vote }
  | { type: 'commit', block: Block, blockHash: string, commit: Commit }

/** What must survive a crash for the current height. Blocks travel inside the proposals. */
export interface ConsensusRecord {
  height: number
  round: number
  step: Step
  lockedRound: number
  lockedHash: string | null
  validRound: number
  validHash: string | null
  /** proposals this node holds for its lock and valid value, and any it signed */
  proposals: Proposal[]
  /** every vote this node signed at this height */
  ownVotes: Vote[]
}

export interface ConsensusEngine {
  handle (input: ConsensusInput): ConsensusEffect[]
}

/** Signs bytes with the validator key; deterministic (Ed25519), so engines stay replayable. */
export type Signer = (bytes: Uint8Array) => string
