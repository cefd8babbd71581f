/**
 * The Tendermint BFT engine (Buchman, Kwon, Milosevic, "The latest gossip on BFT consensus",
 * 2018, Algorithm 1) as a pure state machine: inputs (heights, timeouts, proposals, votes,
 * built blocks) in, effects (timers, block requests, persistence, broadcasts, commits) out.
 * Comments cite the paper's line numbers. "2f+1" and "f+1" are voting power: more than two
 * thirds and more than one third of the total.
 *
 * Crash safety: every own proposal or vote is preceded by a `persist` effect carrying the
 * engine's whole durable record (lock, valid value, own signatures), and the shell awaits it
 * before the broadcast. A restored engine never signs a second, different message for a
 * (height, round, step): it re-sends the one it signed.
 */
import type { Block, Commit } from '../chain/index.js'
import type { ConsensusEffect, ConsensusEngine, ConsensusInput, ConsensusRecord, Proposal, Signer, Step, Validator, Vote } from './types.js'
import { proposalSignBytes, proposerFor, totalPower, voteSignBytes } from './votes.js'

export interface TimeoutConfig {
  /** timeoutPropose(r) = propose + r * proposeDelta, at most max */
  propose: number
  proposeDelta: number
  /** timeoutPrevote(r) and timeoutPrecommit(r) = vote + r * voteDelta, at most max */
  vote: number
  voteDelta: number
  max: number
}

/** Distinct values one validator may be counted for in one (round, vote type). */
const MAX_VOTES_PER_VALIDATOR = 4

function voteKey (validator: string, hash: string | null): string {
  return `${validator}|${hash ?? 'nil'}`
}

export const DEFAULT_TIMEOUTS: TimeoutConfig = { propose: 2000, proposeDelta: 500, vote: 500, voteDelta: 500, max: 10_000 }

export interface TendermintOptions {
  chainId: string
  /** this node's validator key; undefined for a node that follows without voting */
  self: string | undefined
  sign: Signer
  blockIntervalMs: number
  timeouts?: TimeoutConfig
  /**
   * false: once the block interval has passed, a height waits for a transaction (or for a peer
   * that started it) before its round 0, as CometBFT's `create_empty_blocks = false`, so an idle
   * chain stops growing. Default true: a block every interval.
   */
  emptyBlocks?: boolean
  /** with emptyBlocks false: round 0 starts anyway this long after the previous block (a heartbeat); 0: never */
  emptyBlockIntervalMs?: number
}

interface RoundState {
  proposal: Proposal | undefined
  proposalValid: boolean
  /** votes by `validator|hash`: each validator counts at most once per value */
  prevotes: Map<string, Vote>
  precommits: Map<string, Vote>
  /** rules that fire "for the first time" only */
  prevoteTimeoutArmed: boolean
  precommitTimeoutArmed: boolean
  lockOrValidDone: boolean
}

export class TendermintEngine implements ConsensusEngine {
  private height = 0
  private round = 0
  private step: Step = 'commit'
  private validators: Validator[] = []
  private power = new Map<string, number>()
  private total = 0
  private lockedRound = -1
  private lockedProposal: Proposal | undefined
  private validRound = -1
  private validProposal: Proposal | undefined
  private decided = false
  private rounds = new Map<number, RoundState>()
  /** own signatures at this height, by `${round}/${type}` */
  private signed = new Map<string, Vote>()
  private signedProposals = new Map<number, Proposal>()
  /** votes for the next height, replayed when it starts (bounded by the validator count) */
  private future: ConsensusInput[] = []
  /** with empty blocks off: the previous block's time, whether transactions wait, whether a peer started this height */
  private prevBlockTime = 0
  private txsAvailable = false
  /**
   * The highest height a `txs-available` named before this engine entered it. The node signals
   * once per height, and it may signal the next height while its commit of this one is still
   * syncing: entering that height must not forget the signal, or it waits for one that never
   * comes (a node that stopped building blocks under a stream of submissions).
   */
  private txsAvailableAhead = 0
  private peersStarted = false
  /** the block interval has passed and this height waits for a transaction, a peer or the heartbeat */
  private waitingForTxs = false
  /** this height is followed without signing (new-height's `abstain`) */
  private abstaining = false
  /** evidence of equivocation: validators seen signing two votes for one (height, round, type) */
  readonly equivocators = new Set<string>()
  private readonly timeouts: TimeoutConfig

  constructor (private readonly opts: TendermintOptions) {
    this.timeouts = opts.timeouts ?? DEFAULT_TIMEOUTS
  }

  /** The durable record; the shell also writes it whenever a `persist` effect asks. */
  record (): ConsensusRecord {
    const proposals = new Map<string, Proposal>()
    for (const p of [this.lockedProposal, this.validProposal, ...this.signedProposals.values()]) {
      if (p !== undefined) proposals.set(`${p.round}/${p.block_hash}`, p)
    }
    return {
      height: this.height,
      round: this.round,
      step: this.step,
      lockedRound: this.lockedRound,
      lockedHash: this.lockedProposal?.block_hash ?? null,
      validRound: this.validRound,
      validHash: this.validProposal?.block_hash ?? null,
      proposals: [...proposals.values()],
      ownVotes: [...this.signed.values()]
    }
  }

  /**
   * Current height, round and step, with what peers need to follow: the round's proposal and
   * votes, and for a re-proposal the prevotes of its proof-of-lock round (line 28 needs them,
   * and they were cast rounds ago, when some peers may have missed them).
   */
  status (): { height: number, round: number, step: Step, votes: Vote[], proposal: Proposal | undefined } {
    const rs = this.rounds.get(this.round)
    const votes = rs === undefined ? [] : [...rs.prevotes.values(), ...rs.precommits.values()]
    const p = rs?.proposal
    if (p !== undefined && p.pol_round >= 0) {
      for (const v of this.rounds.get(p.pol_round)?.prevotes.values() ?? []) if (v.block_hash === p.block_hash) votes.push(v)
    }
    return { height: this.height, round: this.round, step: this.step, votes, proposal: p }
  }

  /**
   * What a peer at this height in round `fromRound` may lack: the proposals and votes this node
   * holds for rounds from there on. Answering peers' status announcements with it is what
   * keeps consensus live where gossip loses messages.
   */
  catchUp (fromRound: number): { proposals: Proposal[], votes: Vote[] } {
    const proposals: Proposal[] = []
    const votes: Vote[] = []
    for (const [round, rs] of this.rounds) {
      if (round < fromRound) continue
      if (rs.proposal !== undefined) proposals.push(rs.proposal)
      votes.push(...rs.prevotes.values(), ...rs.precommits.values())
    }
    return { proposals, votes }
  }

  handle (input: ConsensusInput): ConsensusEffect[] {
    const out: ConsensusEffect[] = []
    switch (input.type) {
      case 'new-height':
        // A height is entered once: entering it again would forget what this node signed there.
        if (input.height <= this.height) return out
        this.enterHeight(input.height, input.validators)
        this.abstaining = input.abstain === true
        this.prevBlockTime = input.prevBlockTime
        this.txsAvailable = input.txsPending === true || this.txsAvailableAhead >= input.height
        if (input.restore !== undefined) this.restore(input.restore, out)
        else out.push(this.timeout('commit', 0, Math.max(0, input.prevBlockTime + this.opts.blockIntervalMs - input.now)))
        for (const queued of this.future.splice(0)) this.accept(queued, out)
        break
      case 'timeout':
        this.onTimeout(input.height, input.round, input.step, input.now, out)
        break
      case 'txs-available':
        if (input.height === this.height) this.txsAvailable = true
        else if (input.height > this.height) this.txsAvailableAhead = Math.max(this.txsAvailableAhead, input.height)
        break
      case 'block-built':
        this.onBlockBuilt(input.height, input.round, input.block, input.blockHash, out)
        break
      default:
        this.accept(input, out)
    }
    if (this.waitingForTxs && (this.txsAvailable || this.peersStarted)) this.startRound(0, out)
    this.evaluate(out)
    return out
  }

  // ---- inputs ----

  private accept (input: ConsensusInput, out: ConsensusEffect[]): void {
    if (input.type === 'proposal') {
      // Proposals for the next height are the shell's to keep: their validity needs the next state.
      const p = input.proposal
      if (p.height !== this.height || p.proposer !== proposerFor(this.validators, p.height, p.round)) return
      const rs = this.roundState(p.round)
      if (rs.proposal !== undefined) return
      rs.proposal = p
      rs.proposalValid = input.valid
      this.peersStarted = true
    } else if (input.type === 'vote') {
      const v = input.vote
      if (v.height === this.height + 1) this.queueFuture(input)
      if (v.height !== this.height || !this.power.has(v.validator)) return
      const rs = this.roundState(v.round)
      const book = v.type === 'prevote' ? rs.prevotes : rs.precommits
      const key = voteKey(v.validator, v.block_hash)
      if (book.has(key)) return
      // An equivocator's votes count for every value it signed, as in the paper, where
      // "2f+1 PREVOTE for id(v)" counts messages; a cap bounds what one validator can store.
      let sameValidator = 0
      for (const other of book.values()) if (other.validator === v.validator) sameValidator += 1
      if (sameValidator > 0) this.equivocators.add(v.validator)
      if (sameValidator >= MAX_VOTES_PER_VALIDATOR) return
      book.set(key, v)
      if (v.validator !== this.opts.self) this.peersStarted = true
    }
    void out
  }

  private queueFuture (input: ConsensusInput): void {
    // Two messages per validator per step is plenty to restart the next height's round 0.
    if (this.future.length < Math.max(64, this.validators.length * 8)) this.future.push(input)
  }

  private onTimeout (height: number, round: number, step: Step, now: number, out: ConsensusEffect[]): void {
    if (height !== this.height || this.decided) return
    if (step === 'commit' && this.step === 'commit') return this.afterInterval(now, out)
    if (round !== this.round) return
    if (step === 'propose' && this.step === 'propose') { // OnTimeoutPropose
      this.castVote('prevote', null, out)
      this.step = 'prevote'
    } else if (step === 'prevote' && this.step === 'prevote') { // OnTimeoutPrevote
      this.castVote('precommit', null, out)
      this.step = 'precommit'
    } else if (step === 'precommit') { // OnTimeoutPrecommit
      this.startRound(this.round + 1, out)
    }
  }

  private onBlockBuilt (height: number, round: number, block: Block, blockHash: string, out: ConsensusEffect[]): void {
    if (height !== this.height || round !== this.round || this.step !== 'propose' || this.decided) return
    this.propose({ height, round, pol_round: -1, block, block_hash: blockHash, proposer: this.opts.self ?? '', signature: '' }, out)
  }

  /**
   * The block interval (or the heartbeat) has passed. With empty blocks off, round 0 waits
   * until there is something to commit: a transaction here, or a peer that already started
   * (its proposal or vote means it has one). A node that waits proposes nothing and votes on
   * nothing, so an idle network is silent.
   */
  private afterInterval (now: number, out: ConsensusEffect[]): void {
    const heartbeat = this.opts.emptyBlockIntervalMs ?? 0
    const due = heartbeat > 0 && now >= this.prevBlockTime + heartbeat
    if (this.opts.emptyBlocks !== false || this.txsAvailable || this.peersStarted || due) return this.startRound(0, out)
    this.waitingForTxs = true
    if (heartbeat > 0) out.push(this.timeout('commit', 0, this.prevBlockTime + heartbeat - now))
  }

  // ---- rounds ----

  private enterHeight (height: number, validators: Validator[]): void {
    this.height = height
    this.round = 0
    this.step = 'commit'
    this.validators = validators
    this.power = new Map(validators.map((v) => [v.pub_key, v.power]))
    this.total = totalPower(validators)
    this.lockedRound = -1
    this.lockedProposal = undefined
    this.validRound = -1
    this.validProposal = undefined
    this.decided = false
    this.txsAvailable = false
    this.peersStarted = false
    this.waitingForTxs = false
    this.rounds = new Map()
    this.signed = new Map()
    this.signedProposals = new Map()
  }

  private restore (record: ConsensusRecord, out: ConsensusEffect[]): void {
    const byHash = (round: number, hash: string | null): Proposal | undefined =>
      hash === null ? undefined : record.proposals.find((p) => p.round === round && p.block_hash === hash)
    this.lockedRound = record.lockedRound
    this.lockedProposal = byHash(record.lockedRound, record.lockedHash)
    this.validRound = record.validRound
    this.validProposal = byHash(record.validRound, record.validHash)
    if ((record.lockedHash !== null) !== (this.lockedProposal !== undefined) || (record.validHash !== null) !== (this.validProposal !== undefined)) {
      throw new Error(`consensus record for height ${record.height} names a lock or valid value without its proposal; refusing to start`)
    }
    for (const vote of record.ownVotes) {
      this.signed.set(`${vote.round}/${vote.type}`, vote)
      this.accept({ type: 'vote', vote }, out)
    }
    for (const p of record.proposals) {
      if (p.proposer === this.opts.self) this.signedProposals.set(p.round, p)
      this.accept({ type: 'proposal', proposal: p, valid: true }, out)
    }
    this.startRound(record.round, out)
  }

  /** StartRound(round), lines 11-21. */
  private startRound (round: number, out: ConsensusEffect[]): void {
    this.waitingForTxs = false
    this.round = round
    this.step = 'propose'
    this.roundState(round)
    const self = this.signer()
    if (self !== undefined && proposerFor(this.validators, this.height, round) === self) {
      const mine = this.signedProposals.get(round)
      if (mine !== undefined) this.broadcastProposal(mine, out)
      else if (this.validProposal !== undefined) {
        // line 15: re-propose the valid value, with its proof-of-lock round
        this.propose({ ...this.validProposal, round, pol_round: this.validRound, proposer: self, signature: '' }, out)
      } else out.push({ type: 'build-block', height: this.height, round }) // line 18: getValue()
    }
    out.push(this.timeout('propose', round, this.timeoutFor('propose', round)))
  }

  private propose (unsigned: Proposal, out: ConsensusEffect[]): void {
    const proposal = { ...unsigned, signature: this.opts.sign(proposalSignBytes(this.opts.chainId, unsigned)) }
    this.signedProposals.set(proposal.round, proposal)
    const rs = this.roundState(proposal.round)
    rs.proposal ??= proposal
    rs.proposalValid = true
    out.push({ type: 'persist', record: this.record() })
    this.broadcastProposal(proposal, out)
  }

  private broadcastProposal (proposal: Proposal, out: ConsensusEffect[]): void {
    out.push({ type: 'broadcast-proposal', proposal })
  }

  /** This node's key when it signs at this height: it holds a key, the key is in the set, and it does not abstain. */
  private signer (): string | undefined {
    const self = this.opts.self
    return self !== undefined && this.power.has(self) && !this.abstaining ? self : undefined
  }

  /** Signs (or re-sends the one already signed) and counts the vote as received. */
  private castVote (type: 'prevote' | 'precommit', blockHash: string | null, out: ConsensusEffect[]): void {
    const self = this.signer()
    if (self === undefined) return
    const key = `${this.round}/${type}`
    let vote = this.signed.get(key)
    if (vote === undefined) {
      const unsigned = { type, height: this.height, round: this.round, block_hash: blockHash }
      vote = { ...unsigned, validator: self, signature: this.opts.sign(voteSignBytes(this.opts.chainId, unsigned)) }
      this.signed.set(key, vote)
      this.accept({ type: 'vote', vote }, out)
      out.push({ type: 'persist', record: this.record() })
    }
    out.push({ type: 'broadcast-vote', vote })
  }

  // ---- the upon-rules, evaluated until none fires ----

  private evaluate (out: ConsensusEffect[]): void {
    for (let guard = 0; guard < 64; guard++) {
      if (!this.evaluateOnce(out)) return
    }
  }

  private evaluateOnce (out: ConsensusEffect[]): boolean {
    if (this.step === 'commit' || this.decided) return false
    // line 49: a proposal and 2f+1 precommits for it, in any round
    for (const [round, rs] of this.rounds) {
      const p = rs.proposal
      if (p !== undefined && rs.proposalValid && this.hasQuorum(rs.precommits, p.block_hash)) {
        this.decide(round, p, rs, out)
        return false
      }
    }
    // line 55: f+1 of the power already in a later round: skip to it
    for (const [round, rs] of this.rounds) {
      if (round > this.round && this.isOneThird(this.participants(rs))) {
        this.startRound(round, out)
        return true
      }
    }
    const rs = this.roundState(this.round)
    const p = rs.proposal
    if (this.step === 'propose' && p !== undefined) {
      if (p.pol_round === -1) { // line 22
        const ok = rs.proposalValid && (this.lockedRound === -1 || this.lockedProposal?.block_hash === p.block_hash)
        this.castVote('prevote', ok ? p.block_hash : null, out)
        this.step = 'prevote'
        return true
      }
      const pol = this.rounds.get(p.pol_round)
      if (p.pol_round >= 0 && p.pol_round < this.round && pol !== undefined && this.hasQuorum(pol.prevotes, p.block_hash)) { // line 28
        const ok = rs.proposalValid && (this.lockedRound <= p.pol_round || this.lockedProposal?.block_hash === p.block_hash)
        this.castVote('prevote', ok ? p.block_hash : null, out)
        this.step = 'prevote'
        return true
      }
    }
    if (this.step === 'prevote' && !rs.prevoteTimeoutArmed && this.isTwoThirds(this.sumPower(rs.prevotes.values()))) { // line 34
      rs.prevoteTimeoutArmed = true
      out.push(this.timeout('prevote', this.round, this.timeoutFor('prevote', this.round)))
    }
    if (p !== undefined && rs.proposalValid && !rs.lockOrValidDone && this.step !== 'propose' && this.hasQuorum(rs.prevotes, p.block_hash)) { // line 36
      rs.lockOrValidDone = true
      this.validRound = this.round
      this.validProposal = p
      if (this.step === 'prevote') {
        this.lockedRound = this.round
        this.lockedProposal = p
        this.castVote('precommit', p.block_hash, out)
        this.step = 'precommit'
      } else {
        out.push({ type: 'persist', record: this.record() })
      }
      return true
    }
    if (this.step === 'prevote' && this.hasQuorum(rs.prevotes, null)) { // line 44
      this.castVote('precommit', null, out)
      this.step = 'precommit'
      return true
    }
    if (!rs.precommitTimeoutArmed && this.isTwoThirds(this.sumPower(rs.precommits.values()))) { // line 47
      rs.precommitTimeoutArmed = true
      out.push(this.timeout('precommit', this.round, this.timeoutFor('precommit', this.round)))
    }
    return false
  }

  private decide (round: number, proposal: Proposal, rs: RoundState, out: ConsensusEffect[]): void {
    this.decided = true
    this.step = 'commit'
    const signatures = [...rs.precommits.values()]
      .filter((v) => v.block_hash === proposal.block_hash)
      .sort((a, b) => (a.validator < b.validator ? -1 : 1))
      .map((v) => ({ validator: v.validator, signature: v.signature }))
    const commit: Commit = { height: this.height, round, block_hash: proposal.block_hash, signatures }
    out.push({ type: 'commit', block: proposal.block, blockHash: proposal.block_hash, commit })
  }

  // ---- helpers ----

  private roundState (round: number): RoundState {
    let rs = this.rounds.get(round)
    if (rs === undefined) {
      rs = { proposal: undefined, proposalValid: false, prevotes: new Map(), precommits: new Map(), prevoteTimeoutArmed: false, precommitTimeoutArmed: false, lockOrValidDone: false }
      this.rounds.set(round, rs)
    }
    return rs
  }

  private timeout (step: Step, round: number, delayMs: number): ConsensusEffect {
    return { type: 'schedule-timeout', height: this.height, round, step, delayMs }
  }

  private timeoutFor (step: Step, round: number): number {
    const t = this.timeouts
    const ms = step === 'propose' ? t.propose + round * t.proposeDelta : t.vote + round * t.voteDelta
    return Math.min(ms, t.max)
  }

  /** Power of the distinct validators among `votes` (an equivocator counts once). */
  private sumPower (votes: Iterable<Vote>): number {
    const seen = new Set<string>()
    let sum = 0
    for (const v of votes) {
      if (seen.has(v.validator)) continue
      seen.add(v.validator)
      sum += this.power.get(v.validator) ?? 0
    }
    return sum
  }

  private hasQuorum (book: Map<string, Vote>, hash: string | null): boolean {
    let sum = 0
    for (const v of book.values()) if (v.block_hash === hash) sum += this.power.get(v.validator) ?? 0
    return this.isTwoThirds(sum)
  }

  private participants (rs: RoundState): number {
    const who = new Set<string>([...rs.prevotes.values(), ...rs.precommits.values()].map((v) => v.validator))
    if (rs.proposal !== undefined) who.add(rs.proposal.proposer)
    let sum = 0
    for (const v of who) sum += this.power.get(v) ?? 0
    return sum
  }

  private isTwoThirds (power: number): boolean {
    return power * 3 > this.total * 2
  }

  private isOneThird (power: number): boolean {
    return power * 3 > this.total
  }
}
