/**
 * The contract VM's interface. The chain owns what its state transition sees of it (the
 * ContractExecutor port and its input and output records, src/chain/contract-state.ts); the VM
 * implements that port and names its records after its own vocabulary.
 */
import type {
  ContractCallInput, ContractCallOutcome, ContractExecutor, ContractStorageView, ContractTransfer, PreparedContract
} from '../../chain/index.js'

export type PreparedModule = PreparedContract
export type CallInput = ContractCallInput
export type StorageView = ContractStorageView
export type CallTransfer = ContractTransfer
export type CallOutcome = ContractCallOutcome

/**
 * The chain's executor, and more: `prepare` throws KithError('CONTRACT_REFUSED') when it refuses a
 * module; `call` throws VmGuardError when this node cannot decide the call (never a consensus
 * result).
 */
export interface ContractVm extends ContractExecutor {
  /** `prepare`, off the caller's thread where the VM has one (the worker VM): for admission, which must not hold the event loop. */
  prepareAsync: (wasm: Uint8Array) => Promise<PreparedModule>
  close: () => Promise<void>
}

/**
 * This node could not decide the call (wall-clock guard, host stack exhausted, worker lost): not
 * a result. The proposer leaves the transaction out; a validator refuses the block.
 */
export class VmGuardError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'VmGuardError'
  }
}
