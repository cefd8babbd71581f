/**
 * Contracts: the wasm VM (./vm, a deterministic engine the chain calls through ContractExecutor)
 * and the contracts every chain starts with (./wellknown). The node gets its engine here.
 */
import { sha256Hex } from '../crypto/index.js'
import type { ContractExecutor, PreparedContract } from '../chain/index.js'
import { createInlineVm, createWorkerVm, type ContractVm } from './vm/index.js'
import {
  DEFAULT_WALL_CLOCK_MS, MAX_CALL_DEPTH, MAX_FUNCTIONS, MAX_KEY_BYTES, MAX_LOG_BYTES, MAX_LOGS, MAX_MEMORY_PAGES, MAX_MODULE_BYTES, MAX_RETURN_BYTES,
  MAX_TRANSFERS, MAX_VALUE_BYTES
} from './vm/index.js'

export { createInlineVm, createWorkerVm, VmGuardError, type ContractVm } from './vm/index.js'
export * from './wellknown.js'

/** Caps of one call inside the VM, as /api/limits publishes them. */
export const VM_LIMITS = {
  max_module_bytes: MAX_MODULE_BYTES,
  max_memory_pages: MAX_MEMORY_PAGES,
  max_functions: MAX_FUNCTIONS,
  max_call_depth: MAX_CALL_DEPTH,
  max_key_bytes: MAX_KEY_BYTES,
  max_value_bytes: MAX_VALUE_BYTES,
  max_logs: MAX_LOGS,
  max_log_bytes: MAX_LOG_BYTES,
  max_transfers: MAX_TRANSFERS,
  max_return_bytes: MAX_RETURN_BYTES,
  wall_clock_guard_ms: DEFAULT_WALL_CLOCK_MS
} as const

export interface ContractEngine extends ContractExecutor {
  close: () => Promise<void>
}

/** Prepared modules kept by the hash of the submitted wasm: a DEPLOY is prepared at admission, at every mempool replay and in its block. */
const PREPARED_CACHE = 64

/** The VM behind a small cache of prepared modules. */
export function engineOver (vm: ContractVm): ContractEngine {
  const prepared = new Map<string, PreparedContract>()
  return {
    prepare (wasm) {
      const key = sha256Hex(Buffer.from(wasm))
      const hit = prepared.get(key)
      if (hit !== undefined) return hit
      const module = vm.prepare(wasm)
      if (prepared.size >= PREPARED_CACHE) prepared.delete(prepared.keys().next().value as string)
      prepared.set(key, module)
      return module
    },
    call: (input, storage) => vm.call(input, storage),
    close: async () => { await vm.close() }
  }
}

/** The node's engine: calls run on a worker thread behind a wall-clock guard (inline for simulations). */
export async function startContractEngine (opts: { inline?: boolean } = {}): Promise<ContractEngine> {
  return engineOver(opts.inline === true ? await createInlineVm() : await createWorkerVm())
}
