/**
 * The state transition: pure functions of (state, transaction or block, context). No I/O,
 * clock or randomness: time comes from the caller (node clock at submission, block time
 * when a block is applied) so every node decides the same.
 */
import { KithError } from '../errors/index.js'
import { parseOrThrow } from '../validation/index.js'
import { blockHash, commitHash, txRootAndBytes, type Block } from './block.js'
import { settleGasPrice, type ContractExecutor } from './contract-state.js'
import type { ChainParams } from './genesis.js'
import { credit, debit } from './ledger.js'
import { MAX_BLOCK_BYTES, MAX_BLOCK_TXS, MAX_TX_AGE_IN_BLOCK_MS, TIMESTAMP_TOLERANCE_MS } from './limits.js'
import { newBlockGas, TX_RULES, type BlockContext, type TxRule } from './rules/index.js'
import { nextStateRoot, StateKeys, StateOverlay, type StateReader, type WriteSet } from './state.js'
import { decodePayload, timestampMs, txSize, verifyTxSignature, type Transaction } from './tx.js'

export interface CheckedTx {
  tx: Transaction
  payload: unknown
  rule: TxRule<unknown>
}

export type SignatureCheck = (tx: Transaction) => boolean

export function badSignature (): KithError {
  return new KithError('TX_BAD_SIGNATURE', 'invalid signature: not a valid Ed25519 signature by `from` over the canonical bytes')
}

function ruleFor (tx: Transaction): TxRule<unknown> {
  const rule = TX_RULES[tx.type]
  if (rule === undefined) {
    throw new KithError('TX_UNSUPPORTED_TYPE', `transaction type ${tx.type} is not supported by this node yet`)
  }
  return rule
}

/** Checks that need nothing but the transaction: fee floor, payload shape, type rules, signature. */
export function checkStateless (tx: Transaction, checkSignature: SignatureCheck = verifyTxSignature): CheckedTx {
  const rule = ruleFor(tx)
  if (tx.fee < rule.minFee) {
    throw new KithError('TX_FEE_TOO_LOW', `fee ${tx.fee} µT is below the minimum of ${rule.minFee} µT for ${tx.type}`)
  }
  const payload = parseOrThrow(rule.payload, decodePayload(tx), 'TX_MALFORMED', 'payload')
  rule.check?.(tx, payload)
  if (!checkSignature(tx)) throw badSignature()
  return { tx, payload, rule }
}

/** Submission-time checks (POST /api/tx): client-submittable type and timestamp within ±5 minutes of `now`. */
export function checkSubmission (tx: Transaction, now: number, checkSignature?: SignatureCheck): CheckedTx {
  const rule = ruleFor(tx)
  if (!rule.clientSubmittable) throw new KithError('TX_NOT_ALLOWED', `${tx.type} transactions are created by the block proposer and cannot be submitted`)
  if (tx.id.startsWith(REWARD_ID_PREFIX)) throw new KithError('TX_NOT_ALLOWED', `transaction ids starting with "${REWARD_ID_PREFIX}" are reserved for block rewards`)
  const skew = timestampMs(tx) - now
  if (Math.abs(skew) > TIMESTAMP_TOLERANCE_MS) {
    throw new KithError('TX_BAD_TIMESTAMP', `timestamp ${tx.timestamp} is more than 5 minutes from the node clock`)
  }
  return checkStateless(tx, checkSignature)
}

/** Applies one checked transaction to `state` (an overlay that is discarded if this throws). */
export function applyTx (state: StateOverlay, checked: CheckedTx, block: BlockContext): void {
  const { tx, payload, rule } = checked
  if (state.get(StateKeys.txSeen(tx.id)) !== undefined) {
    throw new KithError('TX_DUPLICATE', `duplicate transaction id ${tx.id}`)
  }
  const ts = timestampMs(tx)
  if (ts > block.time + TIMESTAMP_TOLERANCE_MS || ts < block.time - MAX_TX_AGE_IN_BLOCK_MS) {
    throw new KithError('TX_BAD_TIMESTAMP', `timestamp ${tx.timestamp} is outside the window allowed at block time`)
  }
  if (tx.type === 'BLOCK_REWARD' ? tx.id !== rewardTxId(block.height) : tx.id.startsWith(REWARD_ID_PREFIX)) {
    throw new KithError('BLOCK_INVALID', `transaction ids starting with "${REWARD_ID_PREFIX}" are reserved for the block reward, which has id ${rewardTxId(block.height)}`)
  }
  const ctx = { tx, payload, state, block }
  debit(state, tx.from, tx.fee, `fee ${tx.fee} µT`)
  credit(state, rule.feeRecipient?.(ctx) ?? block.proposer, tx.fee)
  rule.apply(ctx)
  state.set(StateKeys.txSeen(tx.id), block.height)
  state.set(StateKeys.totalTxs, state.getNumber(StateKeys.totalTxs) + 1)
}

/** Applies `checked` in a child overlay, keeping its writes only when it succeeds. */
export function tryApplyTx (state: StateOverlay, checked: CheckedTx, block: BlockContext): KithError | undefined {
  const scratch = state.child()
  try {
    applyTx(scratch, checked, block)
  } catch (err) {
    if (err instanceof KithError) return err
    throw err
  }
  scratch.commitTo(state)
  return undefined
}

export const REWARD_ID_PREFIX = 'reward-'

/** The id of the BLOCK_REWARD at `height`; ids with this prefix are reserved. */
export function rewardTxId (height: number): string {
  return `${REWARD_ID_PREFIX}${height}`
}

export interface BlockExecution {
  writes: WriteSet
  stateRoot: string
}

export interface ExecuteOptions {
  params: ChainParams
  chainId: string
  prevHash: string
  prevStateRoot: string
  checkSignature?: SignatureCheck
  /** runs contract code (DEPLOY_CONTRACT, CALL_CONTRACT) */
  contracts?: ContractExecutor
}

/** Validates a whole block against the state after its parent and returns its writes. */
export function executeBlock (state: StateReader, block: Block, opts: ExecuteOptions): BlockExecution {
  const { header } = block
  if (header.chain_id !== opts.chainId) throw new KithError('BLOCK_INVALID', `block chain_id ${header.chain_id} is not ${opts.chainId}`)
  if (header.prev_hash !== opts.prevHash) throw new KithError('BLOCK_INVALID', `block ${header.height} does not extend the head`)
  const { root, bytes } = txRootAndBytes(block.txs)
  checkBlockBounds(block.txs.length, bytes, opts.params)
  if (header.tx_root !== root) throw new KithError('BLOCK_INVALID', 'block tx_root does not match its transactions')
  if (header.last_commit_hash !== commitHash(block.last_commit)) throw new KithError('BLOCK_INVALID', 'block last_commit_hash does not match')
  const overlay = new StateOverlay(state)
  const ctx: BlockContext = { height: header.height, time: header.time, proposer: header.proposer, params: opts.params, gas: newBlockGas(), ...(opts.contracts !== undefined ? { contracts: opts.contracts } : {}) }
  block.txs.forEach((tx, index) => {
    if (tx.type === 'BLOCK_REWARD' && index !== 0) throw new KithError('BLOCK_INVALID', 'BLOCK_REWARD must be the first transaction of a block')
    if (tx.type === 'BLOCK_REWARD' && block.txs.length === 1) throw new KithError('BLOCK_INVALID', 'BLOCK_REWARD is only minted in a block that carries other transactions')
    applyTx(overlay, checkStateless(tx, opts.checkSignature), ctx)
  })
  settleGasPrice(overlay, ctx.gas?.used ?? 0, opts.params.gas_price)
  const stateRoot = nextStateRoot(opts.prevStateRoot, overlay.writes)
  if (header.state_root !== stateRoot) {
    throw new KithError('BLOCK_INVALID', `block ${header.height} state_root does not match its execution`)
  }
  return { writes: overlay.writes, stateRoot }
}

const SELECT_CHECK_EVERY = 64

/** The most transactions a block may carry under `params`. */
export function maxBlockTxs (params: ChainParams): number {
  return Math.min(params.max_block_txs, MAX_BLOCK_TXS)
}

/** Refuses a block over the count or byte bound (docs/protocol.md § 3.1). */
export function checkBlockBounds (count: number, bytes: number, params: ChainParams): void {
  const most = maxBlockTxs(params)
  if (count > most) throw new KithError('BLOCK_INVALID', `block carries ${count} transactions, more than the ${most} a block may carry`)
  if (bytes > MAX_BLOCK_BYTES) throw new KithError('BLOCK_INVALID', `block carries ${bytes} bytes of transactions, more than the ${MAX_BLOCK_BYTES} a block may carry`)
}

export interface BlockSelection {
  included: Transaction[]
  rejected: Array<{ tx: Transaction, error: KithError }>
  writes: WriteSet
  stateRoot: string
}

/**
 * The proposer's side: applies candidates in order, keeping those that apply and reporting
 * the rest, and returns the resulting writes and state root for the new header. `full` lets the
 * caller end the block early (the node gives it a time budget: a block that took long to build
 * takes as long to check on every peer); it is asked every SELECT_CHECK_EVERY transactions.
 */
export function selectBlockTxs (state: StateReader, candidates: Iterable<CheckedTx>, blockCtx: BlockContext, prevStateRoot: string, full: () => boolean = () => false): BlockSelection {
  const ctx: BlockContext = { ...blockCtx, gas: newBlockGas() }
  const overlay = new StateOverlay(state)
  const included: Transaction[] = []
  const rejected: BlockSelection['rejected'] = []
  const most = maxBlockTxs(ctx.params)
  let bytes = 0
  let seen = 0
  for (const checked of candidates) {
    if (included.length >= most) break
    if (++seen % SELECT_CHECK_EVERY === 0 && full()) break
    const size = txSize(checked.tx)
    // the block is full: the rest wait for the next one (admission order is kept)
    if (bytes + size > MAX_BLOCK_BYTES) break
    const error = tryApplyTx(overlay, checked, ctx)
    // the block's gas is spent: this call and the rest wait for the next block
    if (error?.code === 'TX_BLOCK_FULL') break
    if (error === undefined) {
      included.push(checked.tx)
      bytes += size
    } else rejected.push({ tx: checked.tx, error })
  }
  settleGasPrice(overlay, ctx.gas?.used ?? 0, ctx.params.gas_price)
  return { included, rejected, writes: overlay.writes, stateRoot: nextStateRoot(prevStateRoot, overlay.writes) }
}

export { blockHash }
