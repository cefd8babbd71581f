/** Shared by the contract VM tests: WAT modules, a Map-backed storage, both VMs. */
import binaryen from 'binaryen'
import { createInlineVm, createWorkerVm, type CallInput, type CallOutcome, type ContractVm, type PreparedModule } from '../../../src/contracts/vm/index.js'

const F = binaryen.Features
export const BASE_FEATURES = F.MutableGlobals | F.SignExt | F.BulkMemory

/** Assembles WebAssembly text with the given features (default: what AssemblyScript emits). */
export function wat (text: string, features = BASE_FEATURES): Uint8Array {
  const m = binaryen.parseText(text)
  try {
    m.setFeatures(features)
    return m.emitBinary()
  } finally {
    m.dispose()
  }
}

/** Every host import, for WAT modules to paste. */
export const IMPORTS = `
  (import "kith" "storage_get" (func $storage_get (param i32 i32 i32 i32) (result i32)))
  (import "kith" "storage_set" (func $storage_set (param i32 i32 i32 i32)))
  (import "kith" "storage_delete" (func $storage_delete (param i32 i32)))
  (import "kith" "balance" (func $balance (result i64)))
  (import "kith" "transfer" (func $transfer (param i32 i32 i64)))
  (import "kith" "emit_log" (func $emit_log (param i32 i32)))
  (import "kith" "arg_count" (func $arg_count (result i32)))
  (import "kith" "arg_len" (func $arg_len (param i32) (result i32)))
  (import "kith" "arg_read" (func $arg_read (param i32 i32)))
  (import "kith" "set_return" (func $set_return (param i32 i32)))
`

export const ALICE = 'a'.repeat(64)
export const BOB = 'b'.repeat(64)

/** A contract's storage: committed state plus what `apply` keeps of successful calls. */
export class MapStorage {
  readonly map = new Map<string, Uint8Array>()
  get (key: string): Uint8Array | undefined { return this.map.get(key) }
  apply (out: CallOutcome): void {
    if (!out.ok) return
    for (const [k, v] of out.writes) {
      if (v === null) this.map.delete(k)
      else this.map.set(k, v)
    }
  }
}

/** Calls `method` of `prepared` with sensible defaults, applying the writes of a successful call. */
export function invoke (vm: ContractVm, prepared: PreparedModule, storage: MapStorage, method: string, over: Partial<CallInput> = {}): CallOutcome {
  const out = vm.call({
    code: prepared.code,
    codeHash: prepared.codeHash,
    callBaseGas: prepared.callBaseGas,
    method,
    argsJson: '',
    caller: ALICE,
    contractId: 'contract-1',
    amount: 0,
    balance: over.amount ?? 0,
    gasLimit: 1_000_000,
    blockHeight: 7,
    ...over
  }, storage)
  storage.apply(out)
  return out
}

export const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('utf8')

export const VMS: Array<[string, () => Promise<ContractVm>]> = [
  ['inline VM', createInlineVm],
  ['worker VM', async () => await createWorkerVm()]
]
