/**
 * Commit certificates: the signatures of more than two thirds of a height's voting power for one
 * block. A block carries its parent's, and block sync brings one with every block; the same
 * certificate arrives many times (every proposal of a height, every sync answer), so one that
 * verified is remembered rather than verified again.
 */
import { commitHash, type Commit } from '../chain/index.js'
import { verifyCommit, type Validator } from '../consensus/index.js'

const MAX_REMEMBERED = 1000

export class CommitCertificates {
  private readonly verified = new Set<string>()

  constructor (private readonly chainId: string) {}

  /** Whether `commit` is signed by more than two thirds of `validators`' power. */
  isValid (commit: Commit, validators: Validator[]): boolean {
    const key = commitHash(commit)
    if (this.verified.has(key)) return true
    if (!verifyCommit(this.chainId, commit, validators)) return false
    if (this.verified.size > MAX_REMEMBERED) this.verified.clear()
    this.verified.add(key)
    return true
  }
}
