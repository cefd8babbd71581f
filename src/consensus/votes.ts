import { verify, fromBase64 } from '../crypto/index.js'
import type { Commit } from '../chain/index.js'
import type { Proposal, Validator, Vote } from './types.js'

/** Bytes a validator signs for a vote: chain id, type, height, round, block hash (or null). */
export function voteSignBytes (chainId: string, vote: Pick<Vote, 'type' | 'height' | 'round' | 'block_hash'>): Buffer {
  return Buffer.from(JSON.stringify([chainId, vote.type, vote.height, vote.round, vote.block_hash]), 'utf8')
}

export function totalPower (validators: readonly Validator[]): number {
  return validators.reduce((sum, v) => sum + v.power, 0)
}

/**
 * The power of `validators` whose precommit signatures in `commit` verify. `strict`: any other
 * signature (a stranger's, a repeat, a bad one) makes the whole certificate worthless (undefined).
 */
function tally (chainId: string, commit: Commit, validators: readonly Validator[], strict: boolean): number | undefined {
  const byKey = new Map(validators.map((v) => [v.pub_key, v.power]))
  const bytes = voteSignBytes(chainId, { type: 'precommit', height: commit.height, round: commit.round, block_hash: commit.block_hash })
  const counted = new Set<string>()
  let power = 0
  for (const { validator, signature } of commit.signatures) {
    const weight = byKey.get(validator)
    const sig = fromBase64(signature)
    if (weight === undefined || counted.has(validator) || sig === undefined || !verify(bytes, sig, Buffer.from(validator, 'hex'))) {
      if (strict) return undefined
      continue
    }
    counted.add(validator)
    power += weight
  }
  return power
}

/** True when signatures of more than two thirds of the voting power commit `commit.block_hash`. */
export function verifyCommit (chainId: string, commit: Commit, validators: readonly Validator[]): boolean {
  const power = tally(chainId, commit, validators, true)
  return power !== undefined && power * 3 > totalPower(validators) * 2
}

/**
 * The power of `validators` that validly signed `commit`; signatures by others are ignored. A
 * snapshot's header is trusted when more than a third of a set the node already trusts (the
 * genesis validators) signed it, as a light client trusts a header across validator changes.
 */
export function signedPower (chainId: string, commit: Commit, validators: readonly Validator[]): number {
  return tally(chainId, commit, validators, false) ?? 0
}

/** Bytes a proposer signs: chain id, height, round, proof-of-lock round, block hash. */
export function proposalSignBytes (chainId: string, p: Pick<Proposal, 'height' | 'round' | 'pol_round' | 'block_hash'>): Buffer {
  return Buffer.from(JSON.stringify([chainId, 'proposal', p.height, p.round, p.pol_round, p.block_hash]), 'utf8')
}

/**
 * The proposer of (height, round): validators sorted by key, each owning a slice of
 * [0, total power) as wide as its power; the slot (height + round) mod total picks one.
 * Rotation is weighted by power and every node computes the same answer.
 */
export function proposerFor (validators: readonly Validator[], height: number, round: number): string {
  const sorted = [...validators].sort((a, b) => (a.pub_key < b.pub_key ? -1 : 1))
  const total = totalPower(sorted)
  let slot = (height + round) % total
  for (const v of sorted) {
    if (slot < v.power) return v.pub_key
    slot -= v.power
  }
  throw new Error('empty validator set')
}
