/**
 * SingleValidatorEngine as a pure state machine (inputs -> effects), and commit certificates
 * checked with verifyCommit.
 */
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import type { Block, Commit } from '../../../src/chain/index.js'
import { SingleValidatorEngine, verifyCommit, voteSignBytes, type ConsensusEffect, type Validator } from '../../../src/consensus/index.js'
import { keyPairFromSeed, sign, toBase64, toHex, type KeyPair } from '../../../src/crypto/index.js'

function seeded (first: number): KeyPair {
  return keyPairFromSeed(Uint8Array.from({ length: 32 }, (_, i) => (first + i) & 0xff))
}

const CHAIN_ID = 'kith-test'
const INTERVAL = 1000
const validatorKey = seeded(0x41)
const otherKey = seeded(0x01)
const VALIDATOR = toHex(validatorKey.publicKey)
const OTHER = toHex(otherKey.publicKey)
const VALIDATORS: Validator[] = [{ pub_key: VALIDATOR, power: 1 }]
const HASH = 'ab'.repeat(32)

function signer (key: KeyPair): (bytes: Uint8Array) => string {
  return (bytes) => toBase64(sign(bytes, key.secretKey))
}

function engine (): SingleValidatorEngine {
  return new SingleValidatorEngine({ chainId: CHAIN_ID, validator: VALIDATOR, blockIntervalMs: INTERVAL, sign: signer(validatorKey) })
}

function block (height: number): Block {
  return {
    header: {
      chain_id: CHAIN_ID,
      height,
      time: 10_000 + height,
      prev_hash: 'cd'.repeat(32),
      tx_root: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      state_root: 'ef'.repeat(32),
      proposer: VALIDATOR,
      last_commit_hash: ''
    },
    txs: [],
    last_commit: null
  }
}

function commitOf (effects: ConsensusEffect[]): Commit {
  assert.equal(effects.length, 1)
  const effect = effects[0]
  assert.ok(effect !== undefined && effect.type === 'commit', `expected a commit effect, got ${JSON.stringify(effects)}`)
  return effect.commit
}

function precommit (key: KeyPair, height: number, round: number, blockHash: string, chainId = CHAIN_ID): string {
  return toBase64(sign(voteSignBytes(chainId, { type: 'precommit', height, round, block_hash: blockHash }), key.secretKey))
}

describe('SingleValidatorEngine', () => {
  const delays: Array<[string, number, number, number]> = [
    ['half an interval left', 5000, 5500, 500],
    ['the whole interval left', 5000, 5000, 1000],
    ['exactly due', 5000, 6000, 0],
    ['overdue: never negative', 5000, 9000, 0],
    ['clock behind the previous block', 5000, 4000, 2000]
  ]
  for (const [name, prevBlockTime, now, expected] of delays) {
    test(`new-height schedules the propose timeout: ${name} -> ${expected} ms`, () => {
      const effects = engine().handle({ type: 'new-height', height: 3, now, prevBlockTime, validators: VALIDATORS })
      assert.deepEqual(effects, [{ type: 'schedule-timeout', height: 3, round: 0, step: 'propose', delayMs: expected }])
    })
  }

  test('the propose timeout of the current height asks for a block', () => {
    const e = engine()
    e.handle({ type: 'new-height', height: 3, now: 0, prevBlockTime: 0, validators: VALIDATORS })
    assert.deepEqual(e.handle({ type: 'timeout', height: 3, round: 0, step: 'propose', now: 1000 }), [{ type: 'build-block', height: 3, round: 0 }])
  })

  test('a stale timeout (another height) is ignored', () => {
    const e = engine()
    e.handle({ type: 'new-height', height: 3, now: 0, prevBlockTime: 0, validators: VALIDATORS })
    assert.deepEqual(e.handle({ type: 'timeout', height: 2, round: 0, step: 'propose', now: 1000 }), [])
    assert.deepEqual(e.handle({ type: 'timeout', height: 4, round: 0, step: 'propose', now: 1000 }), [])
  })

  test('a timeout of another step is ignored', () => {
    const e = engine()
    e.handle({ type: 'new-height', height: 3, now: 0, prevBlockTime: 0, validators: VALIDATORS })
    assert.deepEqual(e.handle({ type: 'timeout', height: 3, round: 0, step: 'prevote', now: 1000 }), [])
    assert.deepEqual(e.handle({ type: 'timeout', height: 3, round: 0, step: 'precommit', now: 1000 }), [])
  })

  test('before any new-height, nothing happens', () => {
    const e = engine()
    assert.deepEqual(e.handle({ type: 'timeout', height: 1, round: 0, step: 'propose', now: 1000 }), [])
    assert.deepEqual(e.handle({ type: 'block-built', height: 1, round: 0, block: block(1), blockHash: HASH }), [])
  })

  test('block-built -> commit with a precommit that verifies for the 1-validator set', () => {
    const e = engine()
    e.handle({ type: 'new-height', height: 3, now: 0, prevBlockTime: 0, validators: VALIDATORS })
    const b = block(3)
    const effects = e.handle({ type: 'block-built', height: 3, round: 0, block: b, blockHash: HASH })
    const commit = commitOf(effects)
    const effect = effects[0]
    assert.ok(effect?.type === 'commit')
    assert.equal(effect.block, b)
    assert.equal(effect.blockHash, HASH)
    assert.deepEqual(commit, {
      height: 3, round: 0, block_hash: HASH, signatures: [{ validator: VALIDATOR, signature: precommit(validatorKey, 3, 0, HASH) }]
    })
    assert.equal(verifyCommit(CHAIN_ID, commit, VALIDATORS), true)
    assert.equal(verifyCommit('other-chain', commit, VALIDATORS), false, 'the chain id is signed')
  })

  test('block-built for a stale height is ignored', () => {
    const e = engine()
    e.handle({ type: 'new-height', height: 3, now: 0, prevBlockTime: 0, validators: VALIDATORS })
    assert.deepEqual(e.handle({ type: 'block-built', height: 2, round: 0, block: block(2), blockHash: HASH }), [])
  })

  test('heights advance: after new-height 4, height 3 inputs are stale', () => {
    const e = engine()
    e.handle({ type: 'new-height', height: 3, now: 0, prevBlockTime: 0, validators: VALIDATORS })
    e.handle({ type: 'new-height', height: 4, now: 0, prevBlockTime: 0, validators: VALIDATORS })
    assert.deepEqual(e.handle({ type: 'timeout', height: 3, round: 0, step: 'propose', now: 1000 }), [])
    assert.deepEqual(e.handle({ type: 'timeout', height: 4, round: 0, step: 'propose', now: 1000 }), [{ type: 'build-block', height: 4, round: 0 }])
  })
})

describe('voteSignBytes', () => {
  test('is the JSON array [chain_id, type, height, round, block_hash]', () => {
    assert.equal(
      voteSignBytes(CHAIN_ID, { type: 'precommit', height: 3, round: 0, block_hash: HASH }).toString('utf8'),
      `["kith-test","precommit",3,0,"${HASH}"]`
    )
    assert.equal(voteSignBytes(CHAIN_ID, { type: 'prevote', height: 1, round: 2, block_hash: null }).toString('utf8'), '["kith-test","prevote",1,2,null]')
  })

  test('fixed signature vector (Ed25519 is deterministic)', () => {
    // validator seed 0x41 0x42 ... 0x60
    assert.equal(VALIDATOR, 'adc14011f82d1c56d956aa4f9d73d8858361a606048525e0d08c638dc75dd8c7')
    assert.equal(precommit(validatorKey, 3, 0, HASH), 'gvSdWSwnvcEXR5TCL9sP3BcnB7NDFltPClUinNC/ZVmQ3ldbQlhyEI+qym2Vi9RMpgIhcyb7kfjTvWtbQQKMBg==')
    assert.notEqual(precommit(validatorKey, 3, 0, HASH), precommit(validatorKey, 3, 1, HASH))
  })
})

describe('verifyCommit', () => {
  function good (): Commit {
    return { height: 3, round: 0, block_hash: HASH, signatures: [{ validator: VALIDATOR, signature: precommit(validatorKey, 3, 0, HASH) }] }
  }

  test('accepts the validator\'s own precommit', () => {
    assert.equal(verifyCommit(CHAIN_ID, good(), VALIDATORS), true)
  })

  test('rejects a commit signed by a non-validator', () => {
    const commit: Commit = { ...good(), signatures: [{ validator: OTHER, signature: precommit(otherKey, 3, 0, HASH) }] }
    assert.equal(verifyCommit(CHAIN_ID, commit, VALIDATORS), false)
  })

  test('rejects a non-validator signature even next to a valid one', () => {
    const commit = good()
    commit.signatures.push({ validator: OTHER, signature: precommit(otherKey, 3, 0, HASH) })
    assert.equal(verifyCommit(CHAIN_ID, commit, VALIDATORS), false)
  })

  test('rejects a tampered block hash, height or round', () => {
    assert.equal(verifyCommit(CHAIN_ID, { ...good(), block_hash: 'ac'.repeat(32) }, VALIDATORS), false)
    assert.equal(verifyCommit(CHAIN_ID, { ...good(), height: 4 }, VALIDATORS), false)
    assert.equal(verifyCommit(CHAIN_ID, { ...good(), round: 1 }, VALIDATORS), false)
  })

  test('rejects a validator key with another key\'s signature', () => {
    const commit: Commit = { ...good(), signatures: [{ validator: VALIDATOR, signature: precommit(otherKey, 3, 0, HASH) }] }
    assert.equal(verifyCommit(CHAIN_ID, commit, VALIDATORS), false)
  })

  test('rejects a signature over a prevote instead of a precommit', () => {
    const prevote = toBase64(sign(voteSignBytes(CHAIN_ID, { type: 'prevote', height: 3, round: 0, block_hash: HASH }), validatorKey.secretKey))
    assert.equal(verifyCommit(CHAIN_ID, { ...good(), signatures: [{ validator: VALIDATOR, signature: prevote }] }, VALIDATORS), false)
  })

  test('rejects malformed signatures and an empty certificate', () => {
    assert.equal(verifyCommit(CHAIN_ID, { ...good(), signatures: [{ validator: VALIDATOR, signature: 'not base64!' }] }, VALIDATORS), false)
    assert.equal(verifyCommit(CHAIN_ID, { ...good(), signatures: [{ validator: VALIDATOR, signature: 'AAAA' }] }, VALIDATORS), false)
    assert.equal(verifyCommit(CHAIN_ID, { ...good(), signatures: [] }, VALIDATORS), false)
  })

  test('needs more than two thirds of the voting power; a signer counts once', () => {
    const keys = [seeded(0x41), seeded(0x51), seeded(0x61), seeded(0x71)]
    const set: Validator[] = keys.map((k) => ({ pub_key: toHex(k.publicKey), power: 1 }))
    const sigs = keys.map((k) => ({ validator: toHex(k.publicKey), signature: precommit(k, 3, 0, HASH) }))
    const commit = (n: number): Commit => ({ height: 3, round: 0, block_hash: HASH, signatures: sigs.slice(0, n) })
    assert.equal(verifyCommit(CHAIN_ID, commit(4), set), true)
    assert.equal(verifyCommit(CHAIN_ID, commit(3), set), true, '3 of 4 > 2/3')
    assert.equal(verifyCommit(CHAIN_ID, commit(2), set), false, '2 of 4 is not')
    assert.equal(verifyCommit(CHAIN_ID, commit(3), set.slice(0, 3)), true)
    assert.equal(verifyCommit(CHAIN_ID, commit(2), set.slice(0, 3)), false, 'exactly 2/3 is not enough')
    const twice: Commit = { ...commit(2), signatures: [...sigs.slice(0, 2), sigs[0] as { validator: string, signature: string }] }
    assert.equal(verifyCommit(CHAIN_ID, twice, set), false)
    const weighted: Validator[] = set.map((v, i) => ({ ...v, power: i === 0 ? 10 : 1 }))
    assert.equal(verifyCommit(CHAIN_ID, commit(1), weighted), true, 'power 10 of 13')
  })
})
