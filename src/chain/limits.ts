/** Protocol constants from the spec's "Limits" table. */
export const MIN_FEE = 1000
/** Submission window around the node clock (spec: ±5 minutes). */
export const TIMESTAMP_TOLERANCE_MS = 5 * 60 * 1000
/**
 * In a block, a transaction may be at most TIMESTAMP_TOLERANCE_MS ahead of block time and at
 * most this much behind it, so a transaction accepted just before a crash is still valid
 * when the node comes back (ids, not timestamps, prevent replay).
 */
export const MAX_TX_AGE_IN_BLOCK_MS = 24 * 60 * 60 * 1000
/**
 * Bounds of one block (docs/protocol.md § 3.1), checked by the proposer when it builds a block and
 * by every validator when it checks a proposal: a larger one is invalid. Chosen by measurement
 * (docs/benchmarks.md) so that a full block is built, gossiped, checked and committed well inside
 * round 0's propose timeout on the reference machine. A genesis `params.max_block_txs` below
 * MAX_BLOCK_TXS lowers the count bound.
 */
export const MAX_BLOCK_TXS = 2500
export const MAX_BLOCK_BYTES = 1024 * 1024
/** µT of stake per unit of voting power. */
export const POWER_UNIT_UT = 1_000_000_000
/** Heights between the block that changes stakes and the first height the new set decides. */
export const VALSET_DELAY = 2
/** CONTACT_REQUEST: least anti-spam fee paid to the recipient, and longest intro (code points). */
export const MIN_CONTACT_FEE_UT = 5000
export const MAX_INTRO_CHARS = 280
/** CREATE_POST (spec "Limits"): fee floor BASE_POST_FEE + size × POST_BYTE_FEE, sizes up to MAX_POST_SIZE bytes. */
export const BASE_POST_FEE = 1000
export const POST_BYTE_FEE = 1
export const MAX_POST_SIZE = 256 * 1024
/** Bytes a post's `size` counts beyond its content and stored attachment (decisions.md). */
export const POST_METADATA_BYTES = 128

/** The least fee of a CREATE_POST of `size` bytes. */
export function postFee (size: number): number {
  return BASE_POST_FEE + size * POST_BYTE_FEE
}
/** DEPLOY_CONTRACT: fee floor MIN_FEE + code bytes × DEPLOY_BYTE_FEE. */
export const DEPLOY_BYTE_FEE = 1
/**
 * Most gas a call may be given, and the largest module a DEPLOY_CONTRACT may carry (before
 * instrumentation). The chain enforces both; the contract VM takes them from here as its caps.
 */
export const MAX_GAS_LIMIT = 10_000_000
export const MAX_CONTRACT_CODE_BYTES = 128 * 1024
/** CALL_CONTRACT: largest args_json (bytes); the client's default gas limit (spec "Limits"). */
export const MAX_ARGS_JSON_BYTES = 16 * 1024
export const DEFAULT_GAS_LIMIT = 1_000_000
/**
 * Gas all the calls of one block may use together (docs/protocol.md § 3.1). Every validator
 * re-executes every call; the slowest gas measured (a call made of storage reads, each crossing
 * from the VM's thread) runs at ~2.5 ms per million, so a block's calls stay inside the
 * proposer's build budget. (The fixed cost of a call, ~0.2 ms, is bounded by the block's
 * transaction count instead.)
 */
export const MAX_BLOCK_GAS = 200_000_000
/**
 * A deploy counts this much gas per byte of code against MAX_BLOCK_GAS (it is not billed: the fee
 * pays per byte): validating and instrumenting runs ~0.7 µs per byte, so a block holds at most two
 * deploys of the largest module.
 */
export const DEPLOY_GAS_PER_BYTE = 700
/**
 * The first call of a contract in a block counts this much gas per byte of its code against
 * MAX_BLOCK_GAS (not billed: the caller cannot know whether it comes first). A node compiles a
 * module on its first call in the process (V8 compiles each function when first called), which
 * no gas pays for, ~0.1–1 µs per byte measured; a block that calls many contracts no node has
 * compiled yet (more than the 64 a node keeps) is bounded to 1,000,000 bytes of code.
 */
export const COMPILE_GAS_PER_BYTE = 200
/** Gas price at genesis when the genesis file sets none: µT per 1,000 gas. It is also the floor of the live price. */
export const DEFAULT_GAS_PRICE = 1
/** Ceiling of the live gas price: MAX_GAS_LIMIT at it costs 10^13 µT, an exact amount. */
export const MAX_GAS_PRICE = 1_000_000_000
