/**
 * The host ABI: every import a contract may declare, with its exact signature (docs/contracts.md
 * § ABI). `prepare` refuses any other import; execute.ts implements these.
 */

/** A signature as wasm value-type letters: params and result ('' for none). */
export interface ImportSignature {
  params: Array<'i32' | 'i64'>
  result: 'i32' | 'i64' | null
}

const sig = (params: ImportSignature['params'], result: ImportSignature['result'] = null): ImportSignature => ({ params, result })

export const HOST_MODULE = 'kith'

export const HOST_IMPORTS: Readonly<Record<string, ImportSignature>> = {
  storage_get: sig(['i32', 'i32', 'i32', 'i32'], 'i32'),
  storage_set: sig(['i32', 'i32', 'i32', 'i32']),
  storage_delete: sig(['i32', 'i32']),
  caller: sig(['i32']),
  contract_id_len: sig([], 'i32'),
  contract_id: sig(['i32']),
  attached_amount: sig([], 'i64'),
  balance: sig([], 'i64'),
  transfer: sig(['i32', 'i32', 'i64']),
  emit_log: sig(['i32', 'i32']),
  args_size: sig([], 'i32'),
  args_read: sig(['i32']),
  arg_count: sig([], 'i32'),
  arg_len: sig(['i32'], 'i32'),
  arg_read: sig(['i32', 'i32']),
  block_height: sig([], 'i64'),
  set_return: sig(['i32', 'i32'])
}

/** AssemblyScript's abort(message, file, line, column): traps with the message. */
export const ENV_IMPORTS: Readonly<Record<string, ImportSignature>> = {
  abort: sig(['i32', 'i32', 'i32', 'i32'])
}

/** The signature of an allowed import, or undefined. */
export function allowedImport (module: string, name: string): ImportSignature | undefined {
  const table = module === HOST_MODULE ? HOST_IMPORTS : module === 'env' ? ENV_IMPORTS : undefined
  return table !== undefined && Object.hasOwn(table, name) ? table[name] : undefined
}

/** Exports the instrumentation adds; a module may not export names with this prefix itself. */
export const RESERVED_EXPORT_PREFIX = 'kith_'
export const GAS_EXPORT = 'kith_gas'
export const DEPTH_EXPORT = 'kith_depth'
export const MEMORY_EXPORT = 'kith_memory'
/**
 * The WASI reactor convention: when a module exports `_initialize`, every call runs it first
 * (metered like any code). AssemblyScript's start function (heap set-up) is exported under this
 * name with `--exportStart _initialize`, since a wasm start section is refused. Not a method.
 */
export const INIT_EXPORT = '_initialize'
