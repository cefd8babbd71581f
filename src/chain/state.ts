/**
 * Chain state as a key-value view. The state transition reads through a StateReader and
 * writes into an overlay, so it is a pure function of (state, block): the node decides
 * where the reader's data lives (lmdb) and what to do with the resulting write set.
 */
import { canonicalJson } from './canonical-json.js'
import { sha256 } from '../crypto/index.js'

export type StateValue = number | string | boolean | StateValue[] | { [key: string]: StateValue }

export interface StateReader {
  get (key: string): StateValue | undefined
}

/** Writes of one block or transaction; null marks a deletion. */
export type WriteSet = Map<string, StateValue | null>

/** State keys, in one place so every subsystem's layout is visible together. */
export const StateKeys = {
  balance: (pubkey: string) => `bal:${pubkey}`,
  txSeen: (id: string) => `txid:${id}`,
  stake: (pubkey: string) => `stake:${pubkey}`,
  valset: 'valset',
  identity: (pubkey: string) => `ident:${pubkey}`,
  devices: (master: string) => `devices:${master}`,
  /** the one identity holding an X25519 key, as its registered key or a linked device (docs/protocol.md § 14) */
  keyHolder: (x25519: string) => `x25519:${x25519}`,
  contacts: (recipient: string) => `contacts:${recipient}`,
  relay: (pubkey: string) => `relay:${pubkey}`,
  relays: 'relays',
  relayProof: (envelopeId: string) => `relayproof:${envelopeId}`,
  post: (postId: string) => `post:${postId}`,
  like: (postId: string, pubkey: string) => `like:${postId}:${pubkey}`,
  /** both directions of a follow relation: who `follower` follows, and who follows `target` */
  follow: (follower: string, target: string) => `follow:${follower}:${target}`,
  follower: (target: string, follower: string) => `follower:${target}:${follower}`,
  supply: 'supply',
  totalTxs: 'total_txs'
} as const

export class StateOverlay implements StateReader {
  readonly writes: WriteSet = new Map()

  constructor (private readonly base: StateReader) {}

  get (key: string): StateValue | undefined {
    const written = this.writes.get(key)
    if (written !== undefined) return written ?? undefined
    return this.base.get(key)
  }

  set (key: string, value: StateValue): void {
    this.writes.set(key, value)
  }

  delete (key: string): void {
    this.writes.set(key, null)
  }

  getNumber (key: string): number {
    const value = this.get(key)
    return typeof value === 'number' ? value : 0
  }

  child (): StateOverlay {
    return new StateOverlay(this)
  }

  /** Moves this overlay's writes into its parent (the overlay it was made from). */
  commitTo (parent: StateOverlay): void {
    for (const [key, value] of this.writes) parent.writes.set(key, value)
  }
}

/** Plain in-memory state, for genesis, tests and simulation. */
export class MemoryState implements StateReader {
  readonly data = new Map<string, StateValue>()

  get (key: string): StateValue | undefined {
    return this.data.get(key)
  }

  apply (writes: WriteSet): void {
    for (const [key, value] of writes) {
      if (value === null) this.data.delete(key)
      else this.data.set(key, value)
    }
  }
}

/**
 * The state root chains the write sets: root(n) = sha256(root(n-1) || canonical writes of n).
 * Starting from the genesis root, it commits to the whole state after each block while
 * costing only the size of the block's changes.
 */
export function nextStateRoot (previousRoot: string, writes: WriteSet): string {
  const sorted = [...writes.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return sha256(Buffer.from(previousRoot, 'hex'), Buffer.from(canonicalJson(sorted), 'utf8')).toString('hex')
}
