/**
 * DEPLOY_CONTRACT and CALL_CONTRACT (spec "Transaction", docs/contracts.md). The wasm itself runs
 * in the injected ContractExecutor; these rules decide what a call may touch and write its
 * outcome into state. A failed call (trap, out of gas) is still a confirmed transaction: the
 * fee and the gas are charged and nothing else changes. A transaction that cannot be decided at
 * all (unknown contract or method, too poor for its gas limit) is rejected and never included.
 */
import { z } from 'zod'
import { safeParse } from '../../validation/index.js'
import { KithError } from '../../errors/index.js'
import { ContractKeys, Contracts, contractIdFor, CONTRACT_ID_RE, gasCost, installContract, type CallRecord, type ContractExecutor } from '../contract-state.js'
import { credit, debit, balanceOf } from '../ledger.js'
import { COMPILE_GAS_PER_BYTE, DEPLOY_BYTE_FEE, DEPLOY_GAS_PER_BYTE, MAX_ARGS_JSON_BYTES, MAX_BLOCK_GAS, MAX_CONTRACT_CODE_BYTES, MAX_GAS_LIMIT, MIN_FEE } from '../limits.js'
import { asState } from '../registry.js'
import type { StateOverlay, StateReader } from '../state.js'
import { decodePayload, type Transaction } from '../tx.js'
import { defineRule, type BlockContext } from './types.js'

const METHOD_RE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/
const ABI_NAME_RE = /^[a-z][a-z0-9_]{0,63}$/

const DeployPayload = z.object({
  name: z.string().regex(ABI_NAME_RE, 'must be an ABI name: a lowercase letter, then up to 63 lowercase letters, digits or _'),
  version: z.string().max(32, 'must be at most 32 characters').default(''),
  code_b64: z.string().min(1, 'must not be empty').refine((s) => /^[A-Za-z0-9+/]*={0,2}$/.test(s) && s.length % 4 === 0, 'must be standard padded base64 of a wasm module')
})

const CallPayload = z.object({
  contract_id: z.string().regex(CONTRACT_ID_RE, 'must be a contract id: 40 lowercase hex characters'),
  method: z.string().regex(METHOD_RE, 'must be a method name: a letter or _, then up to 63 letters, digits or _'),
  args_json: z.string().default(''),
  gas_limit: z.number().int('must be an integer').min(1, 'must be at least 1').max(MAX_GAS_LIMIT, `must be at most ${MAX_GAS_LIMIT}`)
})

function executorOf (block: BlockContext, type: string): ContractExecutor {
  if (block.contracts === undefined) throw new Error(`${type} needs a contract executor in the block context`)
  return block.contracts
}

/**
 * Runs `work` on the executor. Anything but a KithError means this node could not decide the
 * transaction (its wall-clock guard tripped, a worker died): never a result, so the proposer
 * leaves it out and a validator refuses the block carrying it.
 */
function undecidedIfThrown<T> (what: string, work: () => T): T {
  try {
    return work()
  } catch (err) {
    if (err instanceof KithError) throw err
    throw new KithError('TX_UNDECIDED', `${what} could not be decided by this node (${(err as Error).message}); left out`)
  }
}

/**
 * Counts `gas` against the block's bound (MAX_BLOCK_GAS): what every validator must spend
 * re-executing the block's calls and preparing its deploys.
 */
function spendBlockGas (block: BlockContext, gas: number): void {
  checkBlockRoom(block, gas)
  if (block.gas !== undefined) block.gas.used += gas
}

function checkBlockRoom (block: BlockContext, gas: number): void {
  if (block.gas !== undefined && block.gas.used + gas > MAX_BLOCK_GAS) throw new KithError('TX_BLOCK_FULL', `the block's calls and deploys would use more than ${MAX_BLOCK_GAS} gas`)
}

/** What compiling the code counts against the block's gas: only at its first call in the block. */
function compileGas (block: BlockContext, codeHash: string, codeBytes: number): number {
  return block.gas === undefined || block.gas.compiled.has(codeHash) ? 0 : codeBytes * COMPILE_GAS_PER_BYTE
}

/** At admission (no proposer yet) calls are not run: the worst case is reserved instead. */
function isAdmission (block: BlockContext): boolean {
  return block.proposer === ''
}

function codeOf (payload: { code_b64: string }): Buffer {
  return Buffer.from(payload.code_b64, 'base64')
}

export function deployFee (codeBytes: number): number {
  return MIN_FEE + codeBytes * DEPLOY_BYTE_FEE
}

/** A genesis contract's ABI name is not for a lookalike: refused before any work on the code. */
function checkDeployName (state: StateReader, name: string): void {
  if (Contracts.wellKnown(state, name) !== undefined) {
    throw new KithError('CONTRACT_REFUSED', `the ABI name ${name} belongs to a well-known contract deployed at genesis; deploy under another name`)
  }
}

/**
 * The wasm of a DEPLOY_CONTRACT worth preparing, after the checks that cost nothing (its name,
 * a balance that covers its fee), or undefined for any other transaction or a payload its rule
 * refuses anyway. Admission prepares the code off the main thread with it.
 */
export function deployToPrepare (state: StateReader, tx: Transaction): Uint8Array | undefined {
  if (tx.type !== 'DEPLOY_CONTRACT') return undefined
  let parsed
  try {
    parsed = safeParse(DeployPayload, decodePayload(tx))
  } catch {
    return undefined
  }
  if (!parsed.success) return undefined
  checkDeployName(state, parsed.data.name)
  const balance = balanceOf(state, tx.from)
  if (balance < tx.fee) throw new KithError('TX_INSUFFICIENT_FUNDS', `insufficient funds: balance ${balance} µT does not cover the fee ${tx.fee} µT`)
  return codeOf(parsed.data)
}

export const deployContractRule = defineRule({
  payload: DeployPayload,
  minFee: MIN_FEE,
  clientSubmittable: true,
  check (tx, payload) {
    if (tx.to !== '') throw new KithError('TX_BAD_FIELD', 'DEPLOY_CONTRACT takes no recipient (`to` must be empty)')
    if (tx.amount !== 0) throw new KithError('TX_BAD_FIELD', 'DEPLOY_CONTRACT carries no amount (`amount` must be 0)')
    const size = codeOf(payload).length
    if (size > MAX_CONTRACT_CODE_BYTES) throw new KithError('CONTRACT_REFUSED', `contract code is ${size} bytes, more than the ${MAX_CONTRACT_CODE_BYTES} allowed`)
    const least = deployFee(size)
    if (tx.fee < least) throw new KithError('TX_FEE_TOO_LOW', `fee ${tx.fee} µT is below ${MIN_FEE} + ${DEPLOY_BYTE_FEE} µT per code byte = ${least} µT for ${size} bytes of code`)
  },
  apply ({ tx, payload, state, block }) {
    checkDeployName(state, payload.name)
    const executor = executorOf(block, tx.type)
    const code = codeOf(payload)
    const prepared = undecidedIfThrown('the deploy', () => executor.prepare(code))
    if (!isAdmission(block)) spendBlockGas(block, code.length * DEPLOY_GAS_PER_BYTE)
    installContract(state, {
      id: contractIdFor(tx.id),
      name: payload.name,
      version: payload.version,
      deployer: tx.from,
      height: block.height,
      time: block.time,
      txId: tx.id,
      prepared
    })
  }
})

function checkArgs (argsJson: string): void {
  if (Buffer.byteLength(argsJson) > MAX_ARGS_JSON_BYTES) throw new KithError('TX_INVALID', `args_json is longer than ${MAX_ARGS_JSON_BYTES} bytes`)
  if (argsJson === '') return
  let parsed: unknown
  try {
    parsed = JSON.parse(argsJson)
  } catch {
    throw new KithError('TX_INVALID', 'args_json must be the text of a JSON array (or empty): it does not parse as JSON')
  }
  if (!Array.isArray(parsed)) throw new KithError('TX_INVALID', 'args_json must be the text of a JSON array (or empty)')
}

export const callContractRule = defineRule({
  payload: CallPayload,
  minFee: MIN_FEE,
  clientSubmittable: true,
  check (tx, payload) {
    if (tx.to !== '') throw new KithError('TX_BAD_FIELD', 'CALL_CONTRACT takes no recipient (`to` must be empty; the contract is payload.contract_id)')
    checkArgs(payload.args_json)
  },
  apply ({ tx, payload, state, block }) {
    const contract = Contracts.get(state, payload.contract_id)
    if (contract === undefined) throw new KithError('TX_UNKNOWN_TARGET', `unknown contract ${payload.contract_id}`)
    if (!contract.methods.includes(payload.method)) {
      throw new KithError('TX_UNKNOWN_TARGET', `contract ${payload.contract_id} (${contract.name}) has no method ${payload.method}; it has ${contract.methods.join(', ')}`)
    }
    const gasPrice = Contracts.gasPrice(state)
    const worstGas = gasCost(payload.gas_limit, gasPrice)
    const balance = balanceOf(state, tx.from)
    if (balance < tx.amount + worstGas) {
      throw new KithError('TX_INSUFFICIENT_FUNDS', `insufficient funds: balance ${balance} µT does not cover amount ${tx.amount} µT plus gas up to ${worstGas} µT (gas_limit ${payload.gas_limit} at ${gasPrice} µT per 1,000 gas) after the fee`)
    }
    if (isAdmission(block)) {
      debit(state, tx.from, tx.amount + worstGas, 'the call')
      return
    }
    const code = Contracts.code(state, contract.code_hash)
    if (code === undefined) throw new Error(`contract ${contract.contract_id} has no code ${contract.code_hash} in state`)
    const compiling = compileGas(block, contract.code_hash, code.length)
    // refused before it runs when compiling alone would overfill the block
    checkBlockRoom(block, compiling)
    // The attached amount is the contract's for the call; a failed call hands it back with the rest.
    const call = state.child()
    debit(call, tx.from, tx.amount, 'the attached amount')
    credit(call, contract.contract_id, tx.amount)
    const executor = executorOf(block, tx.type)
    const outcome = undecidedIfThrown('the call', () => executor.call({
      code,
      codeHash: contract.code_hash,
      callBaseGas: contract.call_base_gas,
      method: payload.method,
      argsJson: payload.args_json,
      caller: tx.from,
      contractId: contract.contract_id,
      amount: tx.amount,
      balance: balanceOf(call, contract.contract_id),
      gasLimit: payload.gas_limit,
      blockHeight: block.height
    }, { get: (key) => Contracts.storage(call, contract.contract_id, key) }))
    // counted with the call's gas, so a call the block has no room for leaves no trace in it
    spendBlockGas(block, compiling + outcome.gasUsed)
    block.gas?.compiled.add(contract.code_hash)
    const record: CallRecord = { ok: outcome.ok, gas_used: outcome.gasUsed, gas_cost_ut: gasCost(outcome.gasUsed, gasPrice) }
    if (outcome.ok) {
      for (const [key, value] of outcome.writes) {
        const stateKey = ContractKeys.storage(contract.contract_id, key)
        if (value === null) call.delete(stateKey)
        else call.set(stateKey, Buffer.from(value).toString('base64'))
      }
      for (const { to, amount } of outcome.transfers) {
        debit(call, contract.contract_id, amount, `a transfer of ${amount} µT out of contract ${contract.contract_id}`)
        credit(call, to, amount)
      }
      appendLogs(call, contract.contract_id, tx, block.height, outcome.logs)
      if (outcome.returnData.length > 0) record.return_b64 = Buffer.from(outcome.returnData).toString('base64')
      call.commitTo(state)
    } else record.error = outcome.error
    debit(state, tx.from, record.gas_cost_ut, `gas ${record.gas_cost_ut} µT`)
    credit(state, block.proposer, record.gas_cost_ut)
    state.set(ContractKeys.call(tx.id), asState(record))
  }
})

function appendLogs (state: StateOverlay, contractId: string, tx: Transaction, height: number, logs: Uint8Array[]): void {
  if (logs.length === 0) return
  let seq = Contracts.logCount(state, contractId)
  for (const data of logs) {
    seq += 1
    state.set(ContractKeys.log(contractId, seq), asState({ tx_id: tx.id, height, data_b64: Buffer.from(data).toString('base64') }))
  }
  state.set(ContractKeys.logCount(contractId), seq)
}
