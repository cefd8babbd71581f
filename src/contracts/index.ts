/**
 * Contracts: the wasm VM (./vm, a deterministic engine the chain calls through ContractExecutor)
 * and the contracts every chain starts with (./wellknown). The node gets its engine here.
 */
import { sha256Hex } from '../crypto/index.js'
import type { ContractExecutor, PreparedContract } from '../chain/index.js'
import { KithError } from '../errors/index.js'
import { createInlineVm, createWorkerVm, type ContractVm } from './vm/index.js'
import {
  DEFAULT_WALL_CLOCK_MS, MAX_CALL_DEPTH, MAX_DATA_BYTES, MAX_DATA_SEGMENTS, MAX_ELEMENT_SEGMENTS, MAX_EXPORTS, MAX_FUNCTIONS, MAX_GLOBALS, MAX_KEY_BYTES,
  MAX_LOG_BYTES, MAX_LOGS, MAX_MEMORY_PAGES, MAX_MODULE_BYTES, MAX_RETURN_BYTES, MAX_TABLE_ENTRIES, MAX_TABLES, MAX_TRANSFERS, MAX_VALUE_BYTES
} from './vm/index.js'

export { createInlineVm, createWorkerVm, VmGuardError, type ContractVm } from './vm/index.js'
export * from './wellknown.js'

/** Caps of one call inside the VM, as /api/limits publishes them. */
export const VM_LIMITS = {
  max_module_bytes: MAX_MODULE_BYTES,
  max_memory_pages: MAX_MEMORY_PAGES,
  max_tables: MAX_TABLES,
  max_table_entries: MAX_TABLE_ENTRIES,
  max_element_segments: MAX_ELEMENT_SEGMENTS,
  max_globals: MAX_GLOBALS,
  max_exports: MAX_EXPORTS,
  max_data_segments: MAX_DATA_SEGMENTS,
  max_data_bytes: MAX_DATA_BYTES,
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
  /**
   * Admission of a deploy (POST /api/tx and gossip): prepares the module off the main thread, so
   * that the synchronous `prepare` of the admission check and of the block finds it ready.
   * Refusals are remembered by code hash (a repeated refused module costs a hash lookup) and
   * limited per sender. Throws KithError: CONTRACT_REFUSED, CONTRACT_DEPLOY_BUSY,
   * CONTRACT_DEPLOY_REFUSALS.
   */
  admitDeploy: (wasm: Uint8Array, sender: string) => Promise<void>
  /** Prepares the deploys of a proposed block ahead of its (synchronous) check, off the main thread; never throws. */
  warmDeploys: (wasms: Uint8Array[]) => Promise<void>
  /** Counters of deploy admission, for tests and metrics. */
  readonly deployStats: DeployStats
  close: () => Promise<void>
}

export interface DeployStats {
  /** modules prepared off the main thread */
  prepared: number
  /** refused after validation */
  refused: number
  /** refused again from the refusal cache, without validation */
  refusedFromCache: number
  /** turned away by the per-sender or the node-wide limit */
  limited: number
}

/** Prepared modules kept by the hash of the submitted wasm: a DEPLOY is prepared at admission, at every mempool replay and in its block. */
const PREPARED_CACHE = 64
/** Refused modules remembered by the hash of the submitted wasm. */
export const REFUSED_CACHE = 1024
/** Deploys validated at once on the prepare worker, node-wide; one per sender. */
export const MAX_DEPLOYS_VALIDATING = 4
/** Refused deploys one sender may have in REFUSAL_WINDOW_MS before its deploys are turned away unvalidated. */
export const MAX_REFUSALS_PER_SENDER = 5
export const REFUSAL_WINDOW_MS = 10 * 60_000
/** Senders whose refusals are remembered (the oldest forgotten first). */
const REFUSAL_SENDERS = 10_000

/** Inserts into a Map used as an LRU of `capacity` entries. */
function remember<V> (map: Map<string, V>, capacity: number, key: string, value: V): void {
  map.delete(key)
  if (map.size >= capacity) map.delete(map.keys().next().value as string)
  map.set(key, value)
}

export interface EngineOptions {
  /** the wall clock of the per-sender refusal window (not consensus) */
  now?: () => number
}

/** The VM behind a cache of prepared modules, a cache of refused ones and the deploy admission limits. */
export function engineOver (vm: ContractVm, opts: EngineOptions = {}): ContractEngine {
  const now = opts.now ?? Date.now
  const prepared = new Map<string, PreparedContract>()
  const refused = new Map<string, string>()
  const validating = new Set<string>()
  const refusalsBySender = new Map<string, number[]>()
  const stats: DeployStats = { prepared: 0, refused: 0, refusedFromCache: 0, limited: 0 }

  const recentRefusals = (sender: string): number[] => {
    const since = now() - REFUSAL_WINDOW_MS
    const times = (refusalsBySender.get(sender) ?? []).filter((t) => t > since)
    if (times.length === 0) refusalsBySender.delete(sender)
    else refusalsBySender.set(sender, times)
    return times
  }
  const limited = (code: 'CONTRACT_DEPLOY_BUSY' | 'CONTRACT_DEPLOY_REFUSALS', message: string): KithError => {
    stats.limited++
    return new KithError(code, message)
  }

  return {
    // Block apply: the pure prepare, from the cache of successes when it holds the module. A
    // refusal is always recomputed, so no cached answer can decide a block.
    prepare (wasm) {
      const key = sha256Hex(Buffer.from(wasm))
      const hit = prepared.get(key)
      if (hit !== undefined) return hit
      const module = vm.prepare(wasm)
      remember(prepared, PREPARED_CACHE, key, module)
      return module
    },
    async admitDeploy (wasm, sender) {
      const key = sha256Hex(Buffer.from(wasm))
      if (prepared.has(key)) return
      const refusal = refused.get(key)
      if (refusal !== undefined) {
        stats.refusedFromCache++
        throw new KithError('CONTRACT_REFUSED', `${refusal} (this code was refused before)`)
      }
      if (recentRefusals(sender).length >= MAX_REFUSALS_PER_SENDER) {
        throw limited('CONTRACT_DEPLOY_REFUSALS', `${MAX_REFUSALS_PER_SENDER} deploys from this sender were refused in the last ${REFUSAL_WINDOW_MS / 60_000} minutes; check modules with a local build before deploying again`)
      }
      if (validating.has(sender)) throw limited('CONTRACT_DEPLOY_BUSY', 'a deploy from this sender is being validated; wait for its answer before sending another')
      if (validating.size >= MAX_DEPLOYS_VALIDATING) throw limited('CONTRACT_DEPLOY_BUSY', 'the node is validating as many deploys as it takes at once; retry shortly')
      validating.add(sender)
      try {
        remember(prepared, PREPARED_CACHE, key, await vm.prepareAsync(wasm))
        stats.prepared++
      } catch (err) {
        if (err instanceof KithError && err.code === 'CONTRACT_REFUSED') {
          stats.refused++
          remember(refused, REFUSED_CACHE, key, err.message)
          remember(refusalsBySender, REFUSAL_SENDERS, sender, [...recentRefusals(sender), now()])
        }
        throw err
      } finally {
        validating.delete(sender)
      }
    },
    async warmDeploys (wasms) {
      for (const wasm of wasms) {
        const key = sha256Hex(Buffer.from(wasm))
        if (prepared.has(key) || refused.has(key)) continue
        // a refusal or failure here is for block apply to find again, synchronously
        const module = await vm.prepareAsync(wasm).catch(() => undefined)
        if (module !== undefined) remember(prepared, PREPARED_CACHE, key, module)
      }
    },
    deployStats: stats,
    call: (input, storage) => vm.call(input, storage),
    close: async () => { await vm.close() }
  }
}

/** The node's engine: calls run on a worker thread behind a wall-clock guard (inline for simulations). */
export async function startContractEngine (opts: { inline?: boolean } = {}): Promise<ContractEngine> {
  return engineOver(opts.inline === true ? await createInlineVm() : await createWorkerVm())
}
