import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Block } from '../../../src/chain/index.js'
import {
  TendermintEngine, proposerFor, proposalSignBytes, voteSignBytes,
  type ConsensusEffect, type Proposal, type Validator, type Vote
} from '../../../src/consensus/index.js'
import { sign, toBase64, toHex, type KeyPair } from '../../../src/crypto/index.js'
import { seeded } from '../../helpers/fixtures.js'

const CHAIN = 'unit'
const keys = [seeded(0x10), seeded(0x30), seeded(0x50), seeded(0x70)]
const validators: Validator[] = keys.map((k) => ({ pub_key: toHex(k.publicKey), power: 1 }))
const pubs = validators.map((v) => v.pub_key)
const keyOf = (pub: string): KeyPair => keys[pubs.indexOf(pub)]

function engineFor (pub: string): TendermintEngine {
  const key = keyOf(pub)
  return new TendermintEngine({ chainId: CHAIN, self: pub, sign: (b) => toBase64(sign(b, key.secretKey)), blockIntervalMs: 100 })
}

function block (height: number, tag: string): { block: Block, hash: string } {
  const b: Block = { header: { chain_id: CHAIN, height, time: 0, prev_hash: '', tx_root: '', state_root: tag, proposer: '', last_commit_hash: '' }, txs: [], last_commit: null }
  return { block: b, hash: `hash-${tag}` }
}

function proposal (height: number, round: number, tag: string, polRound = -1): Proposal {
  const proposer = proposerFor(validators, height, round)
  const { block: b, hash } = block(height, tag)
  const unsigned = { height, round, pol_round: polRound, block: b, block_hash: hash, proposer, signature: '' }
  return { ...unsigned, signature: toBase64(sign(proposalSignBytes(CHAIN, unsigned), keyOf(proposer).secretKey)) }
}

function vote (pub: string, type: 'prevote' | 'precommit', height: number, round: number, hash: string | null): Vote {
  const unsigned = { type, height, round, block_hash: hash }
  return { ...unsigned, validator: pub, signature: toBase64(sign(voteSignBytes(CHAIN, unsigned), keyOf(pub).secretKey)) }
}

function votesOf (effects: ConsensusEffect[]): Vote[] {
  return effects.flatMap((e) => (e.type === 'broadcast-vote' ? [e.vote] : []))
}

/** An engine for a validator that is not the proposer of (1, 0), started at height 1 round 0. */
function started (): { engine: TendermintEngine, self: string, others: string[] } {
  const self = pubs.find((p) => p !== proposerFor(validators, 1, 0) && p !== proposerFor(validators, 1, 1)) as string
  const engine = engineFor(self)
  engine.handle({ type: 'new-height', height: 1, now: 1000, prevBlockTime: 0, validators })
  engine.handle({ type: 'timeout', height: 1, round: 0, step: 'commit', now: 1000 })
  return { engine, self, others: pubs.filter((p) => p !== self) }
}

describe('TendermintEngine', () => {
  test('proposer rotation is weighted by power and the same for every caller', () => {
    const weighted: Validator[] = [{ pub_key: 'a'.repeat(64), power: 3 }, { pub_key: 'b'.repeat(64), power: 1 }]
    const picks = Array.from({ length: 8 }, (_, h) => proposerFor(weighted, h, 0))
    assert.equal(picks.filter((p) => p === 'a'.repeat(64)).length, 6)
    assert.deepEqual(picks, Array.from({ length: 8 }, (_, h) => proposerFor([...weighted].reverse(), h, 0)))
  })

  test('line 22: prevotes a valid fresh proposal, and nil for an invalid one', () => {
    const a = started()
    const out = a.engine.handle({ type: 'proposal', proposal: proposal(1, 0, 'x'), valid: true })
    assert.deepEqual(votesOf(out).map((v) => [v.type, v.block_hash]), [['prevote', 'hash-x']])
    const persistIndex = out.findIndex((e) => e.type === 'persist')
    const sendIndex = out.findIndex((e) => e.type === 'broadcast-vote')
    assert.ok(persistIndex >= 0 && persistIndex < sendIndex, 'the vote is persisted before it is sent')
    const b = started()
    const bad = b.engine.handle({ type: 'proposal', proposal: proposal(1, 0, 'x'), valid: false })
    assert.deepEqual(votesOf(bad).map((v) => v.block_hash), [null])
  })

  test('line 36: 2f+1 prevotes lock the value and precommit it; a locked node prevotes nil for another fresh value', () => {
    const { engine, others } = started()
    engine.handle({ type: 'proposal', proposal: proposal(1, 0, 'x'), valid: true })
    const out = others.slice(0, 2).flatMap((p) => engine.handle({ type: 'vote', vote: vote(p, 'prevote', 1, 0, 'hash-x') }))
    assert.deepEqual(votesOf(out).map((v) => [v.type, v.block_hash]), [['precommit', 'hash-x']])
    assert.equal(engine.record().lockedHash, 'hash-x')
    // round 1 after the precommit timeout; a fresh, different proposal gets a nil prevote
    for (const p of others) engine.handle({ type: 'vote', vote: vote(p, 'precommit', 1, 0, null) })
    engine.handle({ type: 'timeout', height: 1, round: 0, step: 'precommit', now: 2000 })
    const r1 = engine.handle({ type: 'proposal', proposal: proposal(1, 1, 'y'), valid: true })
    assert.deepEqual(votesOf(r1).map((v) => [v.type, v.round, v.block_hash]), [['prevote', 1, null]])
  })

  test('line 28: a re-proposal with a proof-of-lock from an earlier round is prevoted', () => {
    const { engine, others } = started()
    // round 0: we saw 2f+1 prevotes for x, but not the proposal in time
    engine.handle({ type: 'timeout', height: 1, round: 0, step: 'propose', now: 2000 })
    for (const p of others) engine.handle({ type: 'vote', vote: vote(p, 'prevote', 1, 0, 'hash-x') })
    for (const p of others) engine.handle({ type: 'vote', vote: vote(p, 'precommit', 1, 0, null) })
    engine.handle({ type: 'timeout', height: 1, round: 0, step: 'precommit', now: 3000 })
    const out = engine.handle({ type: 'proposal', proposal: proposal(1, 1, 'x', 0), valid: true })
    assert.deepEqual(votesOf(out).map((v) => [v.round, v.block_hash]), [[1, 'hash-x']])
  })

  test('line 49: a proposal and 2f+1 precommits decide, with a commit certificate', () => {
    const { engine, others } = started()
    engine.handle({ type: 'proposal', proposal: proposal(1, 0, 'x'), valid: true })
    const out = others.slice(0, 3).flatMap((p) => engine.handle({ type: 'vote', vote: vote(p, 'precommit', 1, 0, 'hash-x') }))
    const commit = out.find((e) => e.type === 'commit')
    assert.ok(commit !== undefined && commit.type === 'commit')
    assert.equal(commit.blockHash, 'hash-x')
    assert.ok(commit.commit.signatures.length >= 3)
  })

  test('line 55: f+1 validators in a later round pull the node there', () => {
    const { engine, others } = started()
    const out = others.slice(0, 2).flatMap((p) => engine.handle({ type: 'vote', vote: vote(p, 'prevote', 1, 3, null) }))
    assert.ok(out.some((e) => e.type === 'schedule-timeout' && e.round === 3 && e.step === 'propose'))
    assert.equal(engine.status().round, 3)
  })

  test('an equivocator counts for each value it signed, once per value, and is recorded', () => {
    const { engine, others } = started()
    engine.handle({ type: 'vote', vote: vote(others[0], 'prevote', 1, 0, 'hash-x') })
    engine.handle({ type: 'vote', vote: vote(others[0], 'prevote', 1, 0, null) })
    assert.ok(engine.equivocators.has(others[0]))
  })

  test('after a restart the node re-sends the vote it signed instead of signing another', () => {
    const { engine, self } = started()
    engine.handle({ type: 'proposal', proposal: proposal(1, 0, 'x'), valid: true })
    const record = engine.record()
    const restarted = engineFor(self)
    const out = restarted.handle({ type: 'new-height', height: 1, now: 5000, prevBlockTime: 0, validators, restore: record })
    const again = restarted.handle({ type: 'timeout', height: 1, round: 0, step: 'propose', now: 9000 })
    const sent = votesOf([...out, ...again]).filter((v) => v.type === 'prevote' && v.round === 0)
    assert.ok(sent.length > 0)
    for (const v of sent) assert.equal(v.block_hash, 'hash-x', 'never a nil prevote after prevoting x')
  })

  test('an abstaining validator signs nothing at that height, even as proposer, and still decides with the others', () => {
    const proposer = proposerFor(validators, 1, 0)
    const engine = engineFor(proposer)
    const entered = engine.handle({ type: 'new-height', height: 1, now: 1000, prevBlockTime: 900, validators, abstain: true })
    const started = engine.handle({ type: 'timeout', height: 1, round: 0, step: 'commit', now: 1000 })
    assert.ok(![...entered, ...started].some((e) => e.type === 'build-block' || e.type === 'broadcast-proposal'), 'proposes nothing')
    const others = pubs.filter((p) => p !== proposer)
    const p1 = proposal(1, 1, 'y')
    const out = [
      ...engine.handle({ type: 'timeout', height: 1, round: 0, step: 'propose', now: 2000 }),
      ...others.flatMap((p) => engine.handle({ type: 'vote', vote: vote(p, 'prevote', 1, 0, null) })),
      ...engine.handle({ type: 'timeout', height: 1, round: 0, step: 'prevote', now: 3000 }),
      ...others.flatMap((p) => engine.handle({ type: 'vote', vote: vote(p, 'precommit', 1, 0, null) })),
      ...engine.handle({ type: 'timeout', height: 1, round: 0, step: 'precommit', now: 4000 }),
      ...engine.handle({ type: 'proposal', proposal: p1, valid: true }),
      ...others.flatMap((p) => engine.handle({ type: 'vote', vote: vote(p, 'precommit', 1, 1, 'hash-y') }))
    ]
    assert.deepEqual(votesOf(out), [], 'no vote signed')
    assert.ok(!out.some((e) => e.type === 'persist'), 'nothing signed, so nothing to persist')
    const commit = out.find((e) => e.type === 'commit')
    assert.ok(commit !== undefined && commit.type === 'commit' && commit.blockHash === 'hash-y', 'follows the others to a decision')
    // the next height, not abstaining, is signed as usual
    const next = engine.handle({ type: 'new-height', height: 2, now: 5000, prevBlockTime: 4500, validators })
    const round0 = [...next, ...engine.handle({ type: 'timeout', height: 2, round: 0, step: 'commit', now: 5000 })]
    const signs = proposerFor(validators, 2, 0) === proposer
      ? round0.some((e) => e.type === 'build-block')
      : votesOf(engine.handle({ type: 'timeout', height: 2, round: 0, step: 'propose', now: 6000 })).length === 1
    assert.ok(signs, 'signs again at a height it does not abstain from')
  })

  test('a record naming a lock without its proposal is refused', () => {
    const { self } = started()
    const engine = engineFor(self)
    assert.throws(() => engine.handle({
      type: 'new-height', height: 1, now: 0, prevBlockTime: 0, validators,
      restore: { height: 1, round: 0, step: 'precommit', lockedRound: 0, lockedHash: 'hash-x', validRound: 0, validHash: 'hash-x', proposals: [], ownVotes: [] }
    }), /refusing to start/)
  })

  describe('empty blocks off', () => {
    const proposer = proposerFor(validators, 1, 0)
    const idleEngine = (pub: string, heartbeat: number): TendermintEngine => {
      const key = keyOf(pub)
      return new TendermintEngine({ chainId: CHAIN, self: pub, sign: (b) => toBase64(sign(b, key.secretKey)), blockIntervalMs: 100, emptyBlocks: false, emptyBlockIntervalMs: heartbeat })
    }
    const kinds = (effects: ConsensusEffect[]): string[] => effects.map((e) => e.type)

    test('after the interval, a height with nothing to commit waits: no block built, no timer but the heartbeat', () => {
      const engine = idleEngine(proposer, 30_000)
      engine.handle({ type: 'new-height', height: 1, now: 1000, prevBlockTime: 900, validators })
      const effects = engine.handle({ type: 'timeout', height: 1, round: 0, step: 'commit', now: 1000 })
      assert.deepEqual(effects, [{ type: 'schedule-timeout', height: 1, round: 0, step: 'commit', delayMs: 29_900 }])
      assert.equal(engine.status().step, 'commit')
    })

    test('a transaction starts the waiting height at once; the heartbeat starts it when none comes', () => {
      const woken = idleEngine(proposer, 30_000)
      woken.handle({ type: 'new-height', height: 1, now: 1000, prevBlockTime: 900, validators })
      woken.handle({ type: 'timeout', height: 1, round: 0, step: 'commit', now: 1000 })
      assert.deepEqual(kinds(woken.handle({ type: 'txs-available', height: 1 })), ['build-block', 'schedule-timeout'])
      assert.equal(woken.status().step, 'propose')

      const beat = idleEngine(proposer, 30_000)
      beat.handle({ type: 'new-height', height: 1, now: 1000, prevBlockTime: 900, validators })
      beat.handle({ type: 'timeout', height: 1, round: 0, step: 'commit', now: 1000 })
      assert.deepEqual(kinds(beat.handle({ type: 'timeout', height: 1, round: 0, step: 'commit', now: 30_900 })), ['build-block', 'schedule-timeout'])
    })

    test('transactions already waiting, or a peer that started the height, start round 0 after the interval as before', () => {
      const pending = idleEngine(proposer, 0)
      pending.handle({ type: 'new-height', height: 1, now: 1000, prevBlockTime: 900, validators, txsPending: true })
      assert.deepEqual(kinds(pending.handle({ type: 'timeout', height: 1, round: 0, step: 'commit', now: 1000 })), ['build-block', 'schedule-timeout'])

      // a validator that is not the proposer wakes on a peer's vote, and then follows the round
      const self = pubs.find((p) => p !== proposer) as string
      const follower = idleEngine(self, 0)
      follower.handle({ type: 'new-height', height: 1, now: 1000, prevBlockTime: 900, validators })
      assert.deepEqual(follower.handle({ type: 'timeout', height: 1, round: 0, step: 'commit', now: 1000 }), [], 'no heartbeat: nothing scheduled')
      const effects = follower.handle({ type: 'proposal', proposal: proposal(1, 0, 'woken'), valid: true })
      assert.deepEqual(votesOf(effects).map((v) => [v.type, v.block_hash]), [['prevote', 'hash-woken']])
    })

    test('a transaction signalled for the next height before the engine enters it is not forgotten there', () => {
      // The node signals once per height, and it can signal height 2 while its commit of height 1
      // is still syncing: the engine, still at height 1, must keep it for height 2 (it did not,
      // and a single validator under a stream of submissions stopped building blocks).
      const engine = idleEngine(proposer, 0)
      engine.handle({ type: 'new-height', height: 1, now: 1000, prevBlockTime: 900, validators, txsPending: true })
      assert.deepEqual(engine.handle({ type: 'txs-available', height: 2 }), [], 'nothing happens at height 1')
      engine.handle({ type: 'new-height', height: 2, now: 2000, prevBlockTime: 1900, validators, txsPending: false })
      engine.handle({ type: 'timeout', height: 2, round: 0, step: 'commit', now: 2000 })
      assert.equal(engine.status().step, 'propose', 'round 0 of height 2 started after the interval')
      // a stale signal (for a height already entered or passed) wakes nothing
      const stale = idleEngine(proposer, 0)
      stale.handle({ type: 'new-height', height: 3, now: 1000, prevBlockTime: 900, validators })
      stale.handle({ type: 'txs-available', height: 2 })
      assert.deepEqual(stale.handle({ type: 'timeout', height: 3, round: 0, step: 'commit', now: 1000 }), [])
      assert.equal(stale.status().step, 'commit', 'still waiting')
    })

    test('a vote from a key outside the validator set, or a proposal from the wrong proposer, does not wake an idle height', () => {
      const engine = idleEngine(proposer, 0)
      engine.handle({ type: 'new-height', height: 1, now: 1000, prevBlockTime: 900, validators })
      engine.handle({ type: 'timeout', height: 1, round: 0, step: 'commit', now: 1000 })
      const stranger = seeded(0x90)
      const unsigned = { type: 'prevote' as const, height: 1, round: 0, block_hash: null }
      const strangerVote = { ...unsigned, validator: toHex(stranger.publicKey), signature: toBase64(sign(voteSignBytes(CHAIN, unsigned), stranger.secretKey)) }
      assert.deepEqual(engine.handle({ type: 'vote', vote: strangerVote }), [])
      // round 1's proposer is not round 0's: its proposal for round 0 is not one
      const wrong = { ...proposal(1, 1, 'w'), round: 0 }
      assert.deepEqual(engine.handle({ type: 'proposal', proposal: wrong, valid: true }), [])
      assert.equal(engine.status().step, 'commit', 'still waiting')
    })

    test('empty blocks on (the engine default) starts round 0 after the interval whatever waits', () => {
      const engine = engineFor(proposer)
      engine.handle({ type: 'new-height', height: 1, now: 1000, prevBlockTime: 900, validators })
      assert.deepEqual(kinds(engine.handle({ type: 'timeout', height: 1, round: 0, step: 'commit', now: 1000 })), ['build-block', 'schedule-timeout'])
    })
  })
})
