/**
 * The node's inbound side of the network: checks every gossip message before consensus or the
 * mempool sees it (accept / ignore / reject, rejecting only what is provably bad: a bad
 * signature, malformed data), answers block-sync and catch-up requests, announces this node's
 * status, and pulls what this node lacks when a peer's status shows it is ahead. Gossip alone
 * does not deliver every message to every node (and drops re-publication of identical bytes), so
 * liveness rests on these pulls. It reaches the rest of the node only through InboundHost.
 */
import type { Logger } from 'pino'
import { z } from 'zod'
import type { Block, Commit, Transaction } from '../chain/index.js'
import {
  proposalSignBytes, voteSignBytes, type ConsensusInput, type Proposal, type TendermintEngine, type Validator, type Vote
} from '../consensus/index.js'
import { fromBase64, verify } from '../crypto/index.js'
import { KithError } from '../errors/index.js'
import type { GossipTopic, Validation } from '../p2p/index.js'
import { isSnapshotRequest } from '../snapshot/index.js'
import { answerSyncRequest, pullFromPeer, type PeerOutcome, type RelayService } from '../relay/index.js'
import type { StoredBlock } from '../storage/index.js'
import { ENVELOPE_BATCH_MAX, type Outbound } from './outbound.js'
import {
  CatchUpResponseSchema, decodeBlocksResponse, RequestSchema, decodeProposal, decodeTxBatch, StatusSchema, VoteSchema, decode, encode, voteKey,
  type Request, type SyncedBlock
} from './wire.js'

export type { GossipTopic, Validation }

/** What the inbound side may do to the node: read its head and consensus, and hand over what arrived. */
export interface InboundHost {
  readonly chainId: string
  now (): number
  headHeight (): number
  /** the engine's round and the messages it holds; the inbound side never drives it */
  readonly consensus: Pick<TendermintEngine, 'equivocators' | 'status' | 'catchUp'>
  validators (height: number): Validator[]
  proposerOf (height: number, round: number): string
  storedBlock (height: number): StoredBlock | undefined
  /** a mempool transaction a proposal refers to by id */
  pendingTx (id: string): Transaction | undefined
  /** false when the node already has it; throws a KithError when it does not apply */
  admitGossiped (tx: Transaction): Promise<boolean>
  preverify (txs: readonly Transaction[]): Promise<void>
  /** throws a KithError when the block is invalid; that is all the inbound side looks at */
  checkBlock (block: Block, hash: string, opts: { localTime?: boolean }): unknown
  commitSynced (block: Block, hash: string, commit: Commit): Promise<unknown>
  pushConsensus (input: ConsensusInput): void
  /** answers a peer's snapshot request (state sync); absent when the node takes no snapshots */
  answerSnapshot?: (request: unknown, from: string) => Promise<Uint8Array>
}

const STATUS_INTERVAL_MS = 1000
/**
 * A node pulls what a peer at its height holds (catch-up) once it has spent this long in its
 * round, or at once when the peer is in a later round. Pulling at every status fetched a large
 * proposal a second time while gossip was still delivering it, on nodes already short of CPU.
 */
const CATCH_UP_AFTER_MS = 1000
/** How often the mailbox compares digests with one random peer (anti-entropy). */
const RELAY_SYNC_INTERVAL_MS = 30_000
const SYNC_BATCH = 20
const MAX_SYNC_RESPONSE_TXS = 20_000
const MAX_BUFFERED_PROPOSALS = 16
/** a proposal that took longer than this from its header time to checked is logged (info) */
const SLOW_PROPOSAL_MS = 400
const MAX_VERIFIED_CACHE = 100_000

const AnyJson = z.unknown()

function gossipResult (outcome: PeerOutcome): Validation {
  if (outcome.result === 'accepted') return 'accept'
  return outcome.result === 'rejected' ? 'reject' : 'ignore'
}

export class NetworkInbound {
  private statusTimer: NodeJS.Timeout | undefined
  private syncing = false
  private readonly catchUpInFlight = new Set<string>()
  /** the (height, round) this node was in at a peer's status, and since when (for catch-up) */
  private currentRound = { height: 0, round: 0, since: 0 }
  /** proposals for the height after the current one, checked once this node gets there */
  private nextProposals: Proposal[] = []
  /**
   * Proposals being checked, by height, round and block hash: a copy that arrives meanwhile (a
   * catch-up answer, another relay) waits for the first check instead of verifying it again.
   */
  private readonly proposalChecks = new Map<string, { height: number, round: number, check: Promise<Validation> }>()
  private readonly verifiedVotes = new Set<string>()
  private stopped = false
  private readonly reportedEquivocators = new Set<string>()
  private relay: RelayService | undefined
  private readonly mailboxSyncedWith = new Set<string>()
  private relaySyncTimer: NodeJS.Timeout | undefined

  constructor (private readonly node: InboundHost, private readonly out: Outbound, private readonly log: Logger) {}

  /** Starts announcing this node's status once the network is attached to `out`. */
  start (): void {
    this.out.setLocalHeight(this.node.headHeight())
    this.statusTimer = setInterval(() => this.announceStatus(), STATUS_INTERVAL_MS)
    this.statusTimer.unref()
  }

  /** Connects the mailbox: its envelopes and deletions go to gossip; peers' come back to it. */
  attachRelay (relay: RelayService): void {
    this.relay = relay
    relay.on('envelope', (envelope) => this.out.gossipEnvelope(envelope))
    relay.on('delete', (proof) => this.out.broadcast('envelope_delete', proof))
    this.relaySyncTimer = setInterval(() => { void this.syncMailbox() }, RELAY_SYNC_INTERVAL_MS)
    this.relaySyncTimer.unref()
  }

  /**
   * One anti-entropy round with a peer (a random connected one by default). It also runs the
   * first time each peer is heard from, so a node that was down or cut off catches up at once.
   */
  async syncMailbox (peerId?: string): Promise<void> {
    const relay = this.relay
    if (relay === undefined || !this.out.open || this.stopped) return
    const connected = this.out.peers().filter((p) => p.connected)
    const peer = peerId !== undefined ? { peerId } : connected[Math.floor(Math.random() * connected.length)]
    if (peer === undefined) return
    try {
      const result = await pullFromPeer(relay, async (req) => {
        const answer = await this.out.request(peer.peerId, req, 10_000)
        return JSON.parse(Buffer.from(answer).toString('utf8')) as unknown
      })
      this.log.debug({ peerId: peer.peerId, result }, 'mailbox anti-entropy round')
    } catch (err) {
      this.log.debug({ err, peerId: peer.peerId }, 'mailbox anti-entropy failed')
    }
  }

  stop (): void {
    this.stopped = true
    if (this.relaySyncTimer !== undefined) clearInterval(this.relaySyncTimer)
    if (this.statusTimer !== undefined) clearInterval(this.statusTimer)
  }

  /** Called when consensus enters `height`: re-check proposals that arrived early. */
  onNewHeight (height: number): void {
    this.out.setLocalHeight(height - 1)
    this.verifiedVotes.clear()
    const early = this.nextProposals.filter((p) => p.height === height)
    this.nextProposals = []
    // After the engine has entered the height (this runs while its input is being built).
    if (early.length > 0) setImmediate(() => { for (const p of early) void this.acceptProposal(p) })
  }

  // ---- gossip ----

  /**
   * `via` is the peer that relayed the message (gossip messages are unsigned, so there is no
   * authenticated origin); it is only logged. Every decision rests on the payload: signatures
   * inside it (transactions, proposals, votes, envelopes, deletions), or nothing that needs one
   * (status, below).
   */
  async onGossip (topic: GossipTopic, data: Uint8Array, via: string): Promise<Validation> {
    try {
      switch (topic) {
        case 'tx': return await this.onTx(data)
        case 'proposal': {
          const proposal = decodeProposal(data, (id) => this.node.pendingTx(id))
          return proposal === undefined ? 'reject' : this.acceptProposal(proposal)
        }
        case 'vote': {
          const vote = decode(VoteSchema, data)
          return vote === undefined ? 'reject' : this.acceptVote(vote)
        }
        case 'status': {
          // `peer_id` is the sender's unauthenticated claim. It only picks whom to pull from,
          // and whatever comes back is verified in full (certificates, block checks, proposal
          // and vote signatures), so a false one costs a request and nothing else.
          const status = decode(StatusSchema, data)
          if (status === undefined) return 'reject'
          this.onStatus(status.peer_id, status.height, status.round)
          return 'accept'
        }
        case 'envelope': return await this.onEnvelopes(data)
        case 'envelope_delete':
          return this.relay === undefined ? 'ignore' : gossipResult(await this.relay.acceptDeletion(decode(AnyJson, data)))
        default:
          return 'ignore'
      }
    } catch (err) {
      this.log.warn({ err, topic, via }, 'gossip handler failed')
      return 'ignore'
    }
  }

  /** A batch of envelopes another node accepted (or one envelope, as a lone object). */
  private async onEnvelopes (data: Uint8Array): Promise<Validation> {
    const relay = this.relay
    if (relay === undefined) return 'ignore'
    const value = decode(AnyJson, data)
    const envelopes = Array.isArray(value) ? value : [value]
    if (envelopes.length === 0 || envelopes.length > ENVELOPE_BATCH_MAX) return 'reject'
    const outcomes = await Promise.all(envelopes.map(async (e) => gossipResult(await relay.accept(e))))
    if (outcomes.includes('reject')) return 'reject'
    return outcomes.includes('accept') ? 'accept' : 'ignore'
  }

  /** A batch of transactions another node accepted: each is checked as POST /api/tx checks it. */
  private async onTx (data: Uint8Array): Promise<Validation> {
    const batch = decodeTxBatch(data)
    if (batch === undefined) return 'reject'
    const outcomes = await Promise.all(batch.map(async (tx): Promise<Validation> => {
      try {
        return await this.node.admitGossiped(tx) ? 'accept' : 'ignore'
      } catch (err) {
        if (err instanceof KithError && (err.code === 'TX_BAD_SIGNATURE' || err.code === 'TX_MALFORMED')) return 'reject'
        return 'ignore'
      }
    }))
    if (outcomes.includes('reject')) return 'reject'
    return outcomes.includes('accept') ? 'accept' : 'ignore'
  }

  private async acceptProposal (p: Proposal): Promise<Validation> {
    const key = `${p.height}|${p.round}|${p.block_hash}`
    const inFlight = this.proposalChecks.get(key)
    if (inFlight !== undefined) return await inFlight.check === 'reject' ? 'reject' : 'ignore'
    const check = this.checkProposal(p)
    this.proposalChecks.set(key, { height: p.height, round: p.round, check })
    try {
      return await check
    } finally {
      this.proposalChecks.delete(key)
    }
  }

  /** Whether the node is fetching blocks it missed (a peer announced a later height). */
  isSyncing (): boolean {
    return this.syncing
  }

  /** The check under way of a proposal for (height, round), if one is. */
  proposalCheck (height: number, round: number): Promise<Validation> | undefined {
    for (const inFlight of this.proposalChecks.values()) if (inFlight.height === height && inFlight.round === round) return inFlight.check
    return undefined
  }

  /** Rounds of `height` whose proposals are being checked (a catch-up need not fetch them again). */
  private roundsInFlight (height: number): number[] {
    return [...this.proposalChecks.values()].filter((inFlight) => inFlight.height === height).map((inFlight) => inFlight.round)
  }

  private async checkProposal (p: Proposal): Promise<Validation> {
    const height = this.node.headHeight() + 1
    if (p.height < height) return 'ignore'
    const signature = fromBase64(p.signature)
    if (signature === undefined || !verify(proposalSignBytes(this.node.chainId, p), signature, Buffer.from(p.proposer, 'hex'))) return 'reject'
    if (p.height > height) {
      if (p.height === height + 1 && this.nextProposals.length < MAX_BUFFERED_PROPOSALS) this.nextProposals.push(p)
      return 'ignore'
    }
    if (p.proposer !== this.node.proposerOf(p.height, p.round)) return 'reject'
    const arrivedAfterMs = Date.now() - p.block.header.time
    const started = performance.now()
    await this.node.preverify(p.block.txs)
    // the node may have committed this height (block sync) while the pool verified
    if (p.height !== this.node.headHeight() + 1) return 'ignore'
    const verified = performance.now()
    let valid = true
    try {
      this.node.checkBlock(p.block, p.block_hash, { localTime: true })
      const checked = performance.now()
      if (arrivedAfterMs + checked - started > SLOW_PROPOSAL_MS) {
        this.log.info({ height: p.height, round: p.round, txs: p.block.txs.length, arrivedAfterMs, preverifyMs: Math.round(verified - started), checkMs: Math.round(checked - verified) }, 'slow proposal check')
      }
    } catch (err) {
      if (!(err instanceof KithError)) throw err
      valid = false
      this.log.warn({ height: p.height, round: p.round, reason: err.message }, 'proposal carries an invalid block')
    }
    this.node.pushConsensus({ type: 'proposal', proposal: p, valid })
    return valid ? 'accept' : 'ignore'
  }

  private acceptVote (vote: Vote): Validation {
    const height = this.node.headHeight() + 1
    if (vote.height < height || vote.height > height + 1) return 'ignore'
    const key = `${vote.validator}|${vote.height}|${vote.round}|${vote.type}|${vote.block_hash ?? ''}|${vote.signature}`
    if (!this.verifiedVotes.has(key)) {
      if (!this.node.validators(vote.height).some((v) => v.pub_key === vote.validator)) return vote.height === height ? 'reject' : 'ignore'
      const signature = fromBase64(vote.signature)
      if (signature === undefined || !verify(voteSignBytes(this.node.chainId, vote), signature, Buffer.from(vote.validator, 'hex'))) return 'reject'
      if (this.verifiedVotes.size > MAX_VERIFIED_CACHE) this.verifiedVotes.clear()
      this.verifiedVotes.add(key)
    }
    this.node.pushConsensus({ type: 'vote', vote })
    return 'accept'
  }

  // ---- status, catch-up and block sync ----

  private announceStatus (): void {
    const peerId = this.out.peerId
    if (peerId === undefined || !this.out.open || this.stopped) return
    for (const validator of this.node.consensus.equivocators) {
      if (this.reportedEquivocators.has(validator)) continue
      this.reportedEquivocators.add(validator)
      this.log.warn({ validator }, 'validator equivocated: signed two different votes for one step')
    }
    const status = this.node.consensus.status()
    this.out.broadcast('status', { peer_id: peerId, height: this.node.headHeight() + 1, round: status.round, at: this.node.now() })
  }

  /**
   * A peer is at (height, round): pull blocks if it is ahead; at the same height, ask for what
   * it holds that we lack (the request lists what we have, so an answer in step is tiny).
   */
  onStatus (peerId: string, height: number, round: number): void {
    if (!this.out.open || peerId === this.out.peerId || this.stopped) return
    // Gossip also brings the statuses of peers this node has no connection to, and no address
    // for: asking them would fail to dial. The peer that relayed such a status announces its own.
    if (!this.out.isConnected(peerId)) return
    if (this.relay !== undefined && !this.mailboxSyncedWith.has(peerId)) {
      this.mailboxSyncedWith.add(peerId)
      void this.syncMailbox(peerId)
    }
    const ours = this.node.headHeight() + 1
    if (height > ours) void this.syncFrom(peerId)
    else if (height === ours && this.mayLackMessages(ours, round)) void this.catchUpFrom(peerId)
  }

  private mayLackMessages (height: number, peerRound: number): boolean {
    const { round } = this.node.consensus.status()
    if (peerRound > round) return true
    const now = Date.now()
    if (this.currentRound.height !== height || this.currentRound.round !== round) this.currentRound = { height, round, since: now }
    return now - this.currentRound.since >= CATCH_UP_AFTER_MS
  }

  private async catchUpFrom (peerId: string): Promise<void> {
    if (this.catchUpInFlight.has(peerId) || !this.out.open) return
    this.catchUpInFlight.add(peerId)
    try {
      const height = this.node.headHeight() + 1
      const round = this.node.consensus.status().round
      const held = this.node.consensus.catchUp(round)
      const request: Request = {
        type: 'catchup',
        height,
        round,
        have_votes: held.votes.map(voteKey),
        have_proposals: [...held.proposals.map((p) => p.round), ...this.roundsInFlight(height)]
      }
      const response = decode(CatchUpResponseSchema, await this.out.request(peerId, request, 5000))
      if (response === undefined) return
      for (const p of response.proposals) await this.acceptProposal(p)
      for (const v of response.votes) this.acceptVote(v)
    } catch (err) {
      this.log.debug({ err, peerId }, 'catch-up request failed')
    } finally {
      this.catchUpInFlight.delete(peerId)
    }
  }

  /** Block sync: fetch committed blocks with their certificates from a peer that is ahead. */
  private async syncFrom (peerId: string): Promise<void> {
    if (this.syncing || !this.out.open) return
    this.syncing = true
    try {
      for (;;) {
        if (this.stopped) return
        const from = this.node.headHeight() + 1
        const request: Request = { type: 'blocks', from, count: SYNC_BATCH }
        const response = decodeBlocksResponse(await this.out.request(peerId, request, 15_000))
        if (response === undefined || response.blocks.length === 0) return
        for (const synced of response.blocks) {
          if (synced.block.header.height < this.node.headHeight() + 1) continue
          await this.node.commitSynced(synced.block, synced.hash, synced.commit)
        }
        this.log.info({ peerId, height: this.node.headHeight() }, 'synced blocks')
        if (response.blocks.length < SYNC_BATCH) return
      }
    } catch (err) {
      this.log.warn({ err, peerId }, 'block sync from peer failed')
    } finally {
      this.syncing = false
    }
  }

  async onRequest (data: Uint8Array, from: string): Promise<Uint8Array> {
    const any = decode(AnyJson, data)
    if (this.relay !== undefined && typeof any === 'object' && any !== null && String((any as { type?: unknown }).type).startsWith('relay_')) {
      return encode(answerSyncRequest(this.relay, any))
    }
    if (isSnapshotRequest(any)) {
      if (this.node.answerSnapshot === undefined) throw new Error('this node offers no snapshots (--snapshot-interval 0)')
      return await this.node.answerSnapshot(any, from)
    }
    const request = decode(RequestSchema, data)
    if (request === undefined) throw new Error('malformed request')
    if (request.type === 'catchup') {
      if (request.height !== this.node.headHeight() + 1) return encode({ proposals: [], votes: [] })
      const { proposals, votes } = this.node.consensus.catchUp(request.round)
      const haveVotes = new Set(request.have_votes)
      const haveProposals = new Set(request.have_proposals)
      return encode({
        proposals: proposals.filter((p) => !haveProposals.has(p.round)),
        votes: votes.filter((v) => !haveVotes.has(voteKey(v)))
      })
    }
    const blocks: SyncedBlock[] = []
    let txs = 0
    const head = this.node.headHeight()
    for (let h = request.from; h < request.from + request.count && h <= head && txs < MAX_SYNC_RESPONSE_TXS; h++) {
      const stored = this.node.storedBlock(h)
      if (stored === undefined || stored.commit === null) break
      blocks.push({ block: stored.block, hash: stored.hash, commit: stored.commit })
      txs += stored.block.txs.length
    }
    return encode({ blocks })
  }
}
