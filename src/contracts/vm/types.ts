/** The contract VM's interface: what the chain's state transition sees of it. */

export interface PreparedModule {
  /** Validated and instrumented wasm: what chain state stores and every node executes. */
  code: Uint8Array
  /** sha256 hex of `code`. */
  codeHash: string
  /** Callable exports (functions without parameters), sorted. */
  methods: string[]
  /**
   * Gas every call pays before any code runs: instantiating a fresh instance of this module
   * (GAS.callBase plus GAS.instantiation per page, table entry, global, export and data byte it
   * declares). Computed at deploy; part of consensus.
   */
  callBaseGas: number
}

export interface CallInput {
  /** A PreparedModule's code; compiled modules are cached by codeHash. */
  code: Uint8Array
  codeHash: string
  /** The PreparedModule's callBaseGas (at least GAS.callBase). */
  callBaseGas: number
  method: string
  /** '' or the text of a JSON array (the node has checked that it parses as one). */
  argsJson: string
  /** 64-char lowercase hex Ed25519 public key of the transaction's signer. */
  caller: string
  contractId: string
  /** µT attached to the call, already moved to the contract. */
  amount: number
  /** The contract's balance in µT, including `amount`. */
  balance: number
  gasLimit: number
  blockHeight: number
}

/** The contract's committed + pending storage, read on the caller's thread. */
export interface StorageView {
  get: (key: string) => Uint8Array | undefined
}

export interface CallTransfer {
  to: string
  amount: number
}

export type CallOutcome =
  | { ok: true, gasUsed: number, writes: Map<string, Uint8Array | null>, logs: Uint8Array[], transfers: CallTransfer[], returnData: Uint8Array }
  | { ok: false, gasUsed: number, error: string }

export interface ContractVm {
  /** Validates and instruments a module; throws KithError('TX_INVALID') when it is refused. */
  prepare: (wasm: Uint8Array) => PreparedModule
  /** The same, off the caller's thread where the VM has one (the worker VM): for admission, which must not hold the event loop. */
  prepareAsync: (wasm: Uint8Array) => Promise<PreparedModule>
  /** Runs one call; throws VmGuardError when this node cannot decide it (never a consensus result). */
  call: (input: CallInput, storage: StorageView) => CallOutcome
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
