/**
 * The state hash: a homomorphic hash of the set of state entries (LtHash, Bellare and Micciancio
 * 1997, with the parameters of Lewi et al. 2019 that Solana's accounts hash uses: 1024 lanes of
 * 16 bits). Each entry `[key, value]` is expanded by SHAKE256 into 1024 lanes; the state's hash is
 * their lane-wise sum mod 2^16. So:
 * - a block updates it in O(its writes): take each written key's old entry out, put the new in;
 * - it does not depend on the order entries were added, and the sums of disjoint parts (the
 *   chunks of a snapshot) add up to the whole, so each chunk can be checked as it arrives;
 * - it is a commitment to the state itself, not to the history of write sets as the state root
 *   is (docs/protocol.md § 5.3 and § 5.4).
 * `digest()` (sha256 of the 2,048 bytes) is what a node publishes and compares.
 */
import { createHash, hash as oneShotHash } from 'node:crypto'
import { endianness } from 'node:os'
import { canonicalJson } from './canonical-json.js'
import { StateKeys, type StateReader, type StateValue, type WriteSet } from './state.js'

export const STATE_HASH_LANES = 1024
export const STATE_HASH_BYTES = STATE_HASH_LANES * 2
/** Separates state entries from anything else this hash could be asked to expand. */
const DOMAIN = 'kith-state-entry-v1\0'

// Lanes are little-endian 16-bit words, read in place: refuse a platform where that is not true.
if (endianness() !== 'LE') throw new Error('the state hash needs a little-endian platform')

/** Node ≥ 24's one-shot hash takes an output length and costs half of a Hash object; older Nodes use the object. */
const expand: (input: string) => Buffer = (() => {
  try {
    const probe = oneShotHash('shake256', Buffer.alloc(1), { outputEncoding: 'buffer', outputLength: STATE_HASH_BYTES } as never) as unknown as Buffer
    if (probe.length === STATE_HASH_BYTES) return (input) => oneShotHash('shake256', input, { outputEncoding: 'buffer', outputLength: STATE_HASH_BYTES } as never) as unknown as Buffer
  } catch { /* an older Node */ }
  return (input) => createHash('shake256', { outputLength: STATE_HASH_BYTES }).update(input, 'utf8').digest()
})()

/**
 * Lanes of entries added lately, so that taking an entry out again (a balance rewritten block
 * after block) costs no expansion. Bounded (oldest out first); only speed depends on it.
 */
export class LanesCache {
  private readonly entries = new Map<string, Uint16Array>()

  /** `skip`: keys whose entries are never taken out again (caching them would only crowd the others) */
  constructor (private readonly max = 8192, readonly skip: (key: string) => boolean = () => false) {}

  get (input: string): Uint16Array | undefined {
    return this.entries.get(input)
  }

  set (input: string, lanes: Uint16Array): void {
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string)
    this.entries.set(input, lanes)
  }
}

/** The cache a node keeps: a transaction's id is written once and never taken out, so it gets no place. */
export function stateLanesCache (): LanesCache {
  const txIdPrefix = StateKeys.txSeen('')
  return new LanesCache(8192, (key) => key.startsWith(txIdPrefix))
}

function entryLanes (key: string, value: StateValue, cache: LanesCache | undefined): Uint16Array {
  const text = canonicalJson([key, value])
  const hit = cache?.get(text)
  if (hit !== undefined) return hit
  const bytes = expand(DOMAIN + text)
  // a digest of this size has a buffer of its own; copy only if it came unaligned
  const lanes = bytes.byteOffset % 2 === 0
    ? new Uint16Array(bytes.buffer, bytes.byteOffset, STATE_HASH_LANES)
    : new Uint16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + STATE_HASH_BYTES))
  if (cache !== undefined && !cache.skip(key)) cache.set(text, lanes)
  return lanes
}

export class StateHash {
  private constructor (private readonly lanes: Uint16Array) {}

  /** The hash of the empty state. */
  static empty (): StateHash {
    return new StateHash(new Uint16Array(STATE_HASH_LANES))
  }

  static ofEntries (entries: Iterable<[string, StateValue]>): StateHash {
    const hash = StateHash.empty()
    for (const [key, value] of entries) hash.add(key, value)
    return hash
  }

  /** From `bytes()`, as stored. */
  static fromBytes (bytes: Uint8Array): StateHash {
    if (bytes.length !== STATE_HASH_BYTES) throw new Error(`a state hash is ${STATE_HASH_BYTES} bytes, not ${bytes.length}`)
    return new StateHash(new Uint16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + STATE_HASH_BYTES)))
  }

  clone (): StateHash {
    return new StateHash(this.lanes.slice())
  }

  add (key: string, value: StateValue, cache?: LanesCache): void {
    const e = entryLanes(key, value, cache)
    const lanes = this.lanes
    // Uint16Array stores modulo 2^16: the wrap is the group operation
    for (let i = 0; i < STATE_HASH_LANES; i++) lanes[i] += e[i]
  }

  remove (key: string, value: StateValue, cache?: LanesCache): void {
    const e = entryLanes(key, value, cache)
    const lanes = this.lanes
    for (let i = 0; i < STATE_HASH_LANES; i++) lanes[i] -= e[i]
  }

  /** The sum of two disjoint parts of a state (snapshot chunks). */
  combine (other: StateHash): StateHash {
    const out = this.clone()
    for (let i = 0; i < STATE_HASH_LANES; i++) out.lanes[i] += other.lanes[i]
    return out
  }

  /**
   * The hash after a block: `before` is the state the writes apply to (each written key's old
   * value is taken out), `writes` the block's write set (null deletes). This hash is unchanged.
   */
  afterWrites (before: StateReader, writes: WriteSet, cache?: LanesCache): StateHash {
    const out = this.clone()
    for (const [key, value] of writes) {
      const old = before.get(key)
      if (old !== undefined) out.remove(key, old, cache)
      if (value !== null) out.add(key, value, cache)
    }
    return out
  }

  equals (other: StateHash): boolean {
    return Buffer.from(this.bytes()).equals(Buffer.from(other.bytes()))
  }

  bytes (): Uint8Array {
    return new Uint8Array(this.lanes.buffer, this.lanes.byteOffset, STATE_HASH_BYTES)
  }

  /** sha256 of the lanes, hex: the value nodes publish and compare. */
  digest (): string {
    return createHash('sha256').update(this.bytes()).digest('hex')
  }
}
