/**
 * The contract VM: WebAssembly contracts with deterministic gas (docs/contracts.md). `prepare`
 * validates and instruments a module once, at deploy; `call` runs a method on a fresh instance
 * and returns an outcome every node computes byte for byte the same. This file is the folder's
 * one door.
 */
export type { CallInput, CallOutcome, CallTransfer, ContractVm, PreparedModule, StorageView } from './types.js'
export { VmGuardError } from './types.js'
export * from './limits.js'
export { HOST_IMPORTS, HOST_MODULE, ENV_IMPORTS } from './abi.js'
export { createInlineVm } from './inline-vm.js'
export { createWorkerVm, type WorkerVmOptions } from './worker-vm.js'
