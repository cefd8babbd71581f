/**
 * Seeded deterministic simulation of N Tendermint engines over a simulated network: message
 * loss, delay, reordering, duplication, partitions that heal, crash-and-restart with the
 * persisted record, and one equivocating validator. Invariants are checked at every step; a
 * failing seed replays exactly (`npm run sim -- --seed S`).
 */
import { TendermintEngine, type ConsensusEffect, type ConsensusInput, type ConsensusRecord, type Proposal, type Validator, type Vote } from '../../src/consensus/index.js'
import { proposalSignBytes, voteSignBytes } from '../../src/consensus/votes.js'
import { keyPairFromSeed, sha256Hex, sign, toBase64, toHex, type KeyPair } from '../../src/crypto/index.js'
import type { Block, Commit } from '../../src/chain/index.js'
import { verifyCommit } from '../../src/consensus/votes.js'

export interface SimOptions {
  seed: number
  validators: number
  /** virtual ms of faults before the network heals */
  faultTime: number
  /** virtual ms after healing within which every honest node must gain `progressHeights` */
  healTime: number
  progressHeights: number
  drop: number
  duplicate: number
  maxDelay: number
  partitions: boolean
  crashes: boolean
  byzantine: boolean
  /**
   * false: the engines run with empty blocks off (a height waits for a transaction, a peer or the
   * heartbeat). Transactions then arrive at random nodes and gossip; once the chain made its
   * progress after healing they stop, and a quiet spell checks that every transaction was
   * committed everywhere and that the idle chain grows by heartbeats only. Default true.
   */
  emptyBlocks?: boolean
  /** with emptyBlocks false: the heartbeat, virtual ms (0: none) */
  emptyBlockInterval?: number
  /**
   * A restart loses the node's consensus record half the time, as a store restored from a snapshot
   * does; the node then abstains as src/node/restore-guard.ts makes it: it signs nothing at a
   * height whose previous block is not later than its restart. `storeLossGuard: false` leaves
   * that out, and the double-sign check must catch it.
   */
  storeLoss?: boolean
  storeLossGuard?: boolean
}

export interface SimResult {
  seed: number
  ok: boolean
  violation?: string
  heights: number[]
  events: number
  virtualMs: number
  /** with empty blocks off: transactions that arrived */
  transactions: number
  /** with storeLoss: restarts that lost the consensus record */
  storeLosses: number
}

/** mulberry32: small, fast, and the same sequence on every machine. */
export function rng (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Options drawn from the seed: validator count 1, 4 or 7 and a mix of faults. */
export function optionsForSeed (seed: number): SimOptions {
  const r = rng(seed ^ 0x9e3779b9)
  const validators = [1, 4, 4, 7][Math.floor(r() * 4)]
  return {
    seed,
    validators,
    faultTime: 4000 + Math.floor(r() * 4000),
    healTime: 30_000,
    progressHeights: 2,
    drop: r() < 0.5 ? r() * 0.3 : 0,
    duplicate: r() * 0.2,
    maxDelay: 5 + Math.floor(r() * 150),
    partitions: validators > 1 && r() < 0.5,
    crashes: r() < 0.6,
    byzantine: validators >= 4 && r() < 0.5
  }
}

type Message =
  | { kind: 'proposal', proposal: Proposal }
  | { kind: 'vote', vote: Vote }
  | { kind: 'sync', from: number }
  | { kind: 'status', from: number, height: number, round: number }
  | { kind: 'tx', id: string }

type SimEvent =
  | { kind: 'deliver', to: number, msg: Message }
  | { kind: 'timer', node: number, epoch: number, input: ConsensusInput }
  | { kind: 'gossip', node: number, epoch: number }
  | { kind: 'crash', node: number }
  | { kind: 'restart', node: number }
  | { kind: 'partition' }
  | { kind: 'heal' }
  | { kind: 'tx-arrives' }
  /** a node's new height starts: its commit's sync has ended (see COMMIT_SYNC_MAX) */
  | { kind: 'enter-height', node: number, epoch: number }
  /** a transaction submitted to a node is on its disk: the node signals it (see PERSIST_MAX) */
  | { kind: 'tx-persisted', node: number, epoch: number }

interface Scheduled { at: number, seq: number, event: SimEvent }

interface SimNode {
  index: number
  key: KeyPair
  pub: string
  byzantine: boolean
  up: boolean
  epoch: number
  engine: TendermintEngine
  /** decided hashes; chain[h] for h >= 1 */
  chain: string[]
  blocks: Map<number, { block: Block, hash: string, commit: Commit }>
  /** the durable consensus record (what a `persist` effect wrote) */
  record: ConsensusRecord | undefined
  /** proposals for the next height, kept until this node gets there */
  nextProposals: Proposal[]
  /** transactions waiting (kept across a crash, as the node's persisted mempool is) and committed */
  mempool: Set<string>
  committedTxs: Set<string>
  /** restored with its record lost: abstains until a block later than this (virtual ms) */
  signsAfter?: number
  /** the height a `txs-available` was last fed for: once per height, as KithNode.signalTxs */
  txsSignalledFor: number
}

const CHAIN_ID = 'sim'
const BLOCK_INTERVAL = 100
const GOSSIP_INTERVAL = 250
const TIMEOUTS = { propose: 300, proposeDelta: 150, vote: 200, voteDelta: 100, max: 2000 }
const MAX_EVENTS = 400_000
/**
 * With empty blocks off, the node's two waits that decide when a transaction's signal reaches the
 * engine: a commit's sync (the chain's head has moved, the engine enters the next height only
 * after it) and a submitted transaction's synced mempool write (the signal follows it). A
 * signal that falls between a commit and the next height was lost once (a stalled node).
 */
const COMMIT_SYNC_MAX = 20
const PERSIST_MAX = 30
/** with empty blocks off: mean virtual ms between transactions, and the quiet spell that ends a run */
const TX_GAP = 400
const QUIET = 10_000

class Violation extends Error {}

export function simulate (opts: SimOptions): SimResult {
  const random = rng(opts.seed)
  const queue = new EventHeap()
  let now = 0
  let seq = 0
  let events = 0
  const schedule = (delay: number, event: SimEvent): void => {
    queue.push({ at: now + Math.max(0, delay), seq: seq++, event })
  }
  const idleChain = opts.emptyBlocks === false
  const heartbeat = opts.emptyBlockInterval ?? 0
  let txsOn = idleChain
  let txCount = 0
  let storeLosses = 0
  const keys = Array.from({ length: opts.validators }, (_, i) => keyPairFromSeed(Buffer.alloc(32, (opts.seed * 31 + i + 1) & 0xff).fill(i, 0, 1)))
  const validators: Validator[] = keys.map((k) => ({ pub_key: toHex(k.publicKey), power: 1 }))
  const byzantineIndex = opts.byzantine ? Math.floor(random() * opts.validators) : -1
  const nodes: SimNode[] = keys.map((key, index) => ({
    index, key, pub: toHex(key.publicKey), byzantine: index === byzantineIndex, up: true, epoch: 0,
    engine: makeEngine(key), chain: [''], blocks: new Map(), record: undefined, nextProposals: [], mempool: new Set(), committedTxs: new Set(), txsSignalledFor: 0
  }))
  const maxFaulty = Math.floor((opts.validators - 1) / 3) - (byzantineIndex >= 0 ? 1 : 0)
  /** agreed hash per height, and every honest signature ever made */
  const decided = new Map<number, string>()
  const honestVotes = new Map<string, string | null>()
  let partition: number[] | undefined // group id per node
  let faultsOn = true

  function makeEngine (key: KeyPair): TendermintEngine {
    return new TendermintEngine({
      chainId: CHAIN_ID,
      self: toHex(key.publicKey),
      sign: (bytes) => toBase64(sign(bytes, key.secretKey)),
      blockIntervalMs: BLOCK_INTERVAL,
      timeouts: TIMEOUTS,
      emptyBlocks: !idleChain,
      emptyBlockIntervalMs: heartbeat
    })
  }

  /** The height `n` works on next: chain[0] is the genesis. */
  function height (n: SimNode): number {
    return n.chain.length
  }

  function send (from: number, to: number, msg: Message): void {
    if (faultsOn && random() < opts.drop) return
    if (partition !== undefined && partition[from] !== partition[to]) return
    const delay = 1 + Math.floor(random() * opts.maxDelay)
    schedule(delay, { kind: 'deliver', to, msg })
    if (faultsOn && random() < opts.duplicate) schedule(delay + Math.floor(random() * opts.maxDelay), { kind: 'deliver', to, msg })
  }

  function broadcast (from: SimNode, msg: (to: number) => Message | undefined): void {
    for (const n of nodes) if (n.index !== from.index) { const m = msg(n.index); if (m !== undefined) send(from.index, n.index, m) }
  }

  function checkVote (n: SimNode, vote: Vote): void {
    if (n.byzantine) return
    const key = `${vote.validator}/${vote.height}/${vote.round}/${vote.type}`
    const before = honestVotes.get(key)
    if (before !== undefined && before !== vote.block_hash) {
      throw new Violation(`honest node ${n.index} double-signed ${key}: ${String(before)} then ${String(vote.block_hash)}`)
    }
    honestVotes.set(key, vote.block_hash)
  }

  function buildBlock (n: SimNode, h: number, round: number): { block: Block, blockHash: string } {
    const block: Block = {
      header: {
        // the simulated block carries its transactions' ids in tx_root
        chain_id: CHAIN_ID, height: h, time: now, prev_hash: n.chain[h - 1] ?? '', tx_root: [...n.mempool].sort().join(','), state_root: `${round}:${n.index}:${Math.floor(random() * 1e9)}`,
        proposer: n.pub, last_commit_hash: ''
      },
      txs: [],
      last_commit: null
    }
    return { block, blockHash: sha256Hex(Buffer.from(JSON.stringify(block.header))) }
  }

  function valid (n: SimNode, p: Proposal): boolean {
    const b = p.block
    return b.header.height === p.height && b.header.prev_hash === (n.chain[p.height - 1] ?? '') &&
      p.block_hash === sha256Hex(Buffer.from(JSON.stringify(b.header)))
  }

  /** Feeds an input and runs the effects; a crash may strike between any two effects. */
  function feed (n: SimNode, input: ConsensusInput): void {
    const pending: ConsensusInput[] = [input]
    while (pending.length > 0 && n.up) {
      const effects = n.engine.handle(pending.shift() as ConsensusInput)
      for (const effect of effects) {
        if (!n.up) return
        perform(n, effect, pending)
        if (faultsOn && opts.crashes && !n.byzantine && random() < 0.002 && canCrash()) {
          crash(n)
          return
        }
      }
    }
    // After a commit, proposals that arrived early for the new height get their turn.
    if (n.up && n.nextProposals.some((p) => p.height === height(n))) {
      for (const p of n.nextProposals.splice(0)) if (p.height === height(n)) deliver(n, { kind: 'proposal', proposal: p })
    }
  }

  function perform (n: SimNode, effect: ConsensusEffect, pending: ConsensusInput[]): void {
    switch (effect.type) {
      case 'schedule-timeout': {
        const { height: h, round, step, delayMs } = effect
        schedule(delayMs, { kind: 'timer', node: n.index, epoch: n.epoch, input: { type: 'timeout', height: h, round, step, now: 0 } })
        return
      }
      case 'build-block':
        pending.push({ type: 'block-built', height: effect.height, round: effect.round, ...buildBlock(n, effect.height, effect.round) })
        return
      case 'persist':
        n.record = structuredClone(effect.record)
        return
      case 'broadcast-vote':
        checkVote(n, effect.vote)
        if (n.byzantine) return equivocateVote(n, effect.vote)
        broadcast(n, () => ({ kind: 'vote', vote: effect.vote }))
        return
      case 'broadcast-proposal':
        if (n.byzantine) return equivocateProposal(n, effect.proposal)
        broadcast(n, () => ({ kind: 'proposal', proposal: effect.proposal }))
        return
      case 'commit':
        applyCommit(n, effect.block, effect.blockHash, effect.commit)
        if (idleChain) schedule(Math.floor(random() * COMMIT_SYNC_MAX), { kind: 'enter-height', node: n.index, epoch: n.epoch })
        else pending.push(newHeight(n))
    }
  }

  function applyCommit (n: SimNode, block: Block, hash: string, commit: Commit): void {
    const h = block.header.height
    if (h !== height(n)) throw new Violation(`node ${n.index} committed height ${h} at height ${height(n)}`)
    if (block.header.prev_hash !== (n.chain[h - 1] ?? '')) throw new Violation(`node ${n.index} committed a block at ${h} that does not extend its chain`)
    const agreed = decided.get(h)
    if (agreed !== undefined && agreed !== hash && !n.byzantine) throw new Violation(`fork at height ${h}: ${agreed} and ${hash} (node ${n.index})`)
    if (!n.byzantine) decided.set(h, hash)
    n.chain.push(hash)
    n.blocks.set(h, { block, hash, commit })
    for (const id of block.header.tx_root.split(',')) {
      if (id === '') continue
      n.committedTxs.add(id)
      n.mempool.delete(id)
    }
    n.record = undefined
  }

  function newHeight (n: SimNode, restore?: ConsensusRecord): ConsensusInput {
    const h = height(n)
    const prev = n.blocks.get(h - 1)
    const prevBlockTime = prev?.block.header.time ?? 0
    if (n.signsAfter !== undefined && prevBlockTime > n.signsAfter) n.signsAfter = undefined
    const abstain = n.signsAfter !== undefined
    return { type: 'new-height', height: h, now, prevBlockTime, validators, txsPending: n.mempool.size > 0, ...(restore !== undefined ? { restore } : {}), ...(abstain ? { abstain } : {}) }
  }

  function enterHeight (n: SimNode, restore?: ConsensusRecord): void {
    feed(n, newHeight(n, restore))
  }

  function equivocateVote (n: SimNode, vote: Vote): void {
    const other = { ...vote, block_hash: vote.block_hash === null ? sha256Hex(Buffer.from(`evil${vote.round}`)) : null }
    const otherSigned = { ...other, signature: toBase64(sign(voteSignBytes(CHAIN_ID, other), n.key.secretKey)) }
    broadcast(n, (to) => ({ kind: 'vote', vote: to % 2 === 0 ? vote : otherSigned }))
  }

  function equivocateProposal (n: SimNode, proposal: Proposal): void {
    const { block, blockHash } = buildBlock(n, proposal.height, proposal.round)
    const twin = { ...proposal, block, block_hash: blockHash }
    const twinSigned = { ...twin, signature: toBase64(sign(proposalSignBytes(CHAIN_ID, twin), n.key.secretKey)) }
    broadcast(n, (to) => ({ kind: 'proposal', proposal: to % 2 === 0 ? proposal : twinSigned }))
  }

  function deliver (n: SimNode, msg: Message): void {
    if (!n.up) return
    if (msg.kind === 'sync') return syncFrom(n, nodes[msg.from])
    if (msg.kind === 'status') return answerStatus(n, msg)
    if (msg.kind === 'tx') return receiveTx(n, msg.id)
    const h = msg.kind === 'proposal' ? msg.proposal.height : msg.vote.height
    if (h > height(n)) {
      if (msg.kind === 'proposal' && h === height(n) + 1 && n.nextProposals.length < 16) n.nextProposals.push(msg.proposal)
      // A peer is ahead: ask it for the blocks we lack (block sync checks each commit certificate).
      const sender = msg.kind === 'proposal' ? msg.proposal.proposer : msg.vote.validator
      const peer = nodes.find((x) => x.pub === sender)
      if (peer !== undefined) send(peer.index, n.index, { kind: 'sync', from: peer.index })
      if (h > height(n) + 1 || msg.kind === 'proposal') return
    }
    if (msg.kind === 'proposal') feed(n, { type: 'proposal', proposal: msg.proposal, valid: valid(n, msg.proposal) })
    else feed(n, { type: 'vote', vote: msg.vote })
  }

  /**
   * A transaction reaches a node's mempool: submitted there (`persisted`: signalled once the
   * node's synced write ends), or by gossip (held in memory, signalled at once).
   */
  function receiveTx (n: SimNode, id: string, persisted = false): void {
    if (n.mempool.has(id) || n.committedTxs.has(id)) return
    n.mempool.add(id)
    if (persisted) schedule(Math.floor(random() * PERSIST_MAX), { kind: 'tx-persisted', node: n.index, epoch: n.epoch })
    else signalTxs(n)
  }

  /** As KithNode.signalTxs: the next height after the node's head, once per height. */
  function signalTxs (n: SimNode): void {
    const next = height(n)
    if (n.txsSignalledFor === next) return
    n.txsSignalledFor = next
    feed(n, { type: 'txs-available', height: next })
  }

  /** Block sync: take every block the peer committed beyond ours, in order. */
  function syncFrom (n: SimNode, peer: SimNode): void {
    let moved = false
    while (peer.blocks.has(height(n)) && n.up) {
      const { block, hash, commit } = peer.blocks.get(height(n)) as { block: Block, hash: string, commit: Commit }
      if (commit.block_hash !== hash || !verifyCommit(CHAIN_ID, commit, validators)) throw new Violation(`node ${peer.index} served block ${height(n)} without a valid commit certificate`)
      applyCommit(n, block, hash, commit)
      moved = true
    }
    if (moved) enterHeight(n)
  }

  function canCrash (): boolean {
    // a node waiting after a store loss does not vote: it counts as down
    return nodes.filter((x) => !x.up || x.signsAfter !== undefined).length < maxFaulty || (opts.validators === 1 && nodes.every((x) => x.up))
  }

  /** The node an event was scheduled for, unless it crashed since (an event of a past life). */
  function alive (event: { node: number, epoch: number }): SimNode | undefined {
    const n = nodes[event.node]
    return n.up && n.epoch === event.epoch ? n : undefined
  }

  function ifAlive (event: { node: number, epoch: number }, act: (n: SimNode) => void): void {
    const n = alive(event)
    if (n !== undefined) act(n)
  }

  function crash (n: SimNode): void {
    n.up = false
    n.epoch += 1
    schedule(50 + Math.floor(random() * 1500), { kind: 'restart', node: n.index })
  }

  function restart (n: SimNode): void {
    if (n.up) return
    n.up = true
    n.engine = makeEngine(n.key)
    n.nextProposals = []
    n.txsSignalledFor = 0
    if (opts.storeLoss === true && random() < 0.5) {
      n.record = undefined
      storeLosses += 1
      if (opts.storeLossGuard !== false) n.signsAfter = now
    }
    const record = n.record?.height === height(n) ? n.record : undefined
    enterHeight(n, record)
    schedule(GOSSIP_INTERVAL, { kind: 'gossip', node: n.index, epoch: n.epoch })
  }

  /**
   * The shell's periodic gossip: re-broadcast the current round's proposal and votes, and
   * announce (height, round) so that peers send what this node lacks.
   */
  function gossip (n: SimNode): void {
    const status = n.engine.status()
    if (status.proposal !== undefined) broadcast(n, () => ({ kind: 'proposal', proposal: status.proposal as Proposal }))
    for (const vote of status.votes) broadcast(n, () => ({ kind: 'vote', vote }))
    broadcast(n, () => ({ kind: 'status', from: n.index, height: status.height, round: status.round }))
    schedule(GOSSIP_INTERVAL, { kind: 'gossip', node: n.index, epoch: n.epoch })
  }

  /** A peer announced where it is: send it blocks if it is behind, or the rounds it may lack. */
  function answerStatus (n: SimNode, status: { from: number, height: number, round: number }): void {
    if (status.height < height(n)) return send(n.index, status.from, { kind: 'sync', from: n.index })
    if (status.height !== height(n)) return
    const { proposals, votes } = n.engine.catchUp(status.round)
    for (const proposal of proposals) send(n.index, status.from, { kind: 'proposal', proposal })
    for (const vote of votes) send(n.index, status.from, { kind: 'vote', vote })
  }

  // ---- run ----
  for (const n of nodes) {
    enterHeight(n)
    schedule(GOSSIP_INTERVAL + n.index, { kind: 'gossip', node: n.index, epoch: n.epoch })
  }
  if (opts.partitions) {
    for (let t = 500; t < opts.faultTime; t += 1500 + Math.floor(random() * 1500)) {
      schedule(t, { kind: 'partition' })
      schedule(t + 300 + Math.floor(random() * 1200), { kind: 'heal' })
    }
  }
  if (opts.crashes) {
    for (let t = 200; t < opts.faultTime; t += 400 + Math.floor(random() * 1600)) schedule(t, { kind: 'crash', node: Math.floor(random() * opts.validators) })
  }
  if (idleChain) schedule(Math.floor(random() * TX_GAP), { kind: 'tx-arrives' })
  let healedAt = Infinity
  let quietFrom = Infinity
  const quietHeights: number[] = []
  const baseline: number[] = []
  try {
    while (queue.length > 0) {
      if (++events > MAX_EVENTS) throw new Violation('event budget exhausted')
      const { at, event } = queue.pop()
      now = at
      if (faultsOn && now >= opts.faultTime) {
        faultsOn = false
        partition = undefined
        healedAt = now
        for (const n of nodes) if (!n.up) restart(n)
        for (const n of nodes) baseline[n.index] = height(n)
      }
      if (!faultsOn) {
        const honest = nodes.filter((n) => !n.byzantine)
        const progressed = honest.every((n) => height(n) - 1 >= Math.max(...honest.map((x) => baseline[x.index] - 1)) + opts.progressHeights)
        if (progressed && !idleChain) break
        if (progressed && quietFrom === Infinity) {
          txsOn = false
          quietFrom = now
        }
        if (now >= quietFrom + QUIET / 2 && quietHeights.length === 0) for (const n of nodes) quietHeights[n.index] = height(n)
        if (now >= quietFrom + QUIET) {
          checkIdle(honest)
          break
        }
        if (quietFrom === Infinity && now > healedAt + opts.healTime) throw new Violation(`no progress within ${opts.healTime} ms after healing: heights ${nodes.map(height).join(',')}`)
      }
      switch (event.kind) {
        case 'deliver': deliver(nodes[event.to], event.msg); break
        case 'timer': {
          const n = alive(event)
          if (n !== undefined) feed(n, { ...event.input, now } as ConsensusInput)
          break
        }
        case 'gossip': ifAlive(event, gossip); break
        case 'crash': {
          const n = nodes[event.node]
          if (faultsOn && n.up && !n.byzantine && canCrash()) crash(n)
          break
        }
        case 'restart': restart(nodes[event.node]); break
        case 'partition':
          if (faultsOn) partition = nodes.map(() => Math.floor(random() * 2))
          break
        case 'heal': partition = undefined; break
        case 'enter-height': ifAlive(event, (n) => enterHeight(n)); break
        case 'tx-persisted': ifAlive(event, signalTxs); break
        case 'tx-arrives': {
          if (!txsOn) break
          const n = nodes[Math.floor(random() * nodes.length)]
          const id = `tx${++txCount}`
          if (n.up) {
            receiveTx(n, id, true)
            broadcast(n, () => ({ kind: 'tx', id }))
          }
          schedule(1 + Math.floor(random() * 2 * TX_GAP), { kind: 'tx-arrives' })
          break
        }
      }
    }
    /**
     * After the quiet spell: every transaction an honest node took in (or any node committed) is
     * committed on every honest node, and the idle chain grew by heartbeats only. A byzantine
     * node may withhold what only it received (a partition cut its gossip off).
     */
    function checkIdle (honest: SimNode[]): void {
      const taken = new Set(nodes.flatMap((n) => [...n.committedTxs, ...(n.byzantine ? [] : n.mempool)]))
      // a byzantine node still holding transactions only it has keeps starting heights, as it may
      const withheld = nodes.some((n) => n.byzantine && [...n.mempool].some((id) => !taken.has(id)))
      for (const n of honest) {
        const missing = [...taken].filter((id) => !n.committedTxs.has(id))
        if (missing.length > 0) throw new Violation(`node ${n.index} never committed ${missing.slice(0, 3).join(',')} (${missing.length} of ${taken.size})`)
        if (withheld) continue
        // the second half of the quiet spell: nothing waits anywhere, so only heartbeats may commit
        const grown = height(n) - quietHeights[n.index]
        const allowed = heartbeat > 0 ? Math.ceil(QUIET / 2 / heartbeat) + 1 : 0
        if (grown > allowed) throw new Violation(`node ${n.index} committed ${grown} blocks on an idle chain (heartbeat ${heartbeat} ms allows ${allowed})`)
      }
    }
  } catch (err) {
    if (!(err instanceof Violation)) throw err
    return { seed: opts.seed, ok: false, violation: err.message, heights: nodes.map((n) => height(n) - 1), events, virtualMs: now, transactions: txCount, storeLosses }
  }
  return { seed: opts.seed, ok: true, heights: nodes.map((n) => height(n) - 1), events, virtualMs: now, transactions: txCount, storeLosses }
}

/** Binary min-heap of scheduled events by (time, sequence): same order on every run. */
class EventHeap {
  private readonly items: Scheduled[] = []

  get length (): number {
    return this.items.length
  }

  push (item: Scheduled): void {
    const a = this.items
    a.push(item)
    let i = a.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!before(a[i], a[parent])) break
      ;[a[i], a[parent]] = [a[parent], a[i]]
      i = parent
    }
  }

  pop (): Scheduled {
    const a = this.items
    const top = a[0]
    const last = a.pop() as Scheduled
    if (a.length > 0) {
      a[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < a.length && before(a[l], a[m])) m = l
        if (r < a.length && before(a[r], a[m])) m = r
        if (m === i) break
        ;[a[i], a[m]] = [a[m], a[i]]
        i = m
      }
    }
    return top
  }
}

function before (a: Scheduled, b: Scheduled): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq)
}
