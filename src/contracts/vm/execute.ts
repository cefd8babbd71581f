/**
 * One contract call on a fresh instance: the host functions, gas accounting and the mapping of
 * every way a call can fail to a fixed error category. Shared by the inline VM and the worker,
 * so both give byte-identical outcomes. Engine error messages never reach an outcome: they could
 * differ between V8 versions.
 */
import { DEPTH_EXPORT, GAS_EXPORT, INIT_EXPORT, MEMORY_EXPORT, RESERVED_EXPORT_PREFIX } from './abi.js'
import { GAS, MAX_ABORT_CHARS, MAX_CALL_DEPTH, MAX_KEY_BYTES, MAX_LOG_BYTES, MAX_LOGS, MAX_RETURN_BYTES, MAX_TRANSFERS, MAX_VALUE_BYTES } from './limits.js'
import { VmGuardError, type CallInput, type CallOutcome, type CallTransfer, type StorageView } from './types.js'
import { MemoryPool } from './memory-pool.js'
import { importOwnMemory, POOLED_MEMORY_MODULE, POOLED_MEMORY_NAME, type MemoryLimits } from './sections.js'

/** A trap raised by a host function, with its error category. */
class HostTrap extends Error {}

const utf8 = new TextEncoder()
const strictUtf8 = new TextDecoder('utf-8', { fatal: true })
const utf16 = new TextDecoder('utf-16le')
const PUBKEY_HEX = /^[0-9a-f]{64}$/

/** The args array as bytes: a JSON string → its UTF-8 text, anything else → its JSON text. */
function argBytes (argsJson: string): Uint8Array[] | undefined {
  if (argsJson === '') return []
  const parsed: unknown = JSON.parse(argsJson)
  if (!Array.isArray(parsed)) return undefined
  return parsed.map((a: unknown) => utf8.encode(typeof a === 'string' ? a : JSON.stringify(a)))
}

const fail = (gasUsed: number, error: string): CallOutcome => ({ ok: false, gasUsed, error })

/**
 * Runs `input.method` of a compiled prepared module, on `memory` when the module declares one
 * (moved to an import by `importOwnMemory`). Throws VmGuardError when the host stack ran out.
 */
export function executeCall (compiled: WebAssembly.Module, input: CallInput, storage: StorageView, memory?: WebAssembly.Memory): CallOutcome {
  const limit = input.gasLimit
  // paid before instantiation: a module that is costly to instantiate is never instantiated unpaid
  const base = input.callBaseGas
  if (limit < base) return fail(limit, 'out of gas')
  let args: Uint8Array[] | undefined
  try {
    args = argBytes(input.argsJson)
  } catch {
    args = undefined
  }
  if (args === undefined) return fail(base, 'arguments are not a JSON array')
  const argsRaw = utf8.encode(input.argsJson)

  const writes = new Map<string, Uint8Array | null>()
  // Storage does not change during a call: a key crosses to the caller's thread once at most.
  const reads = new Map<string, Uint8Array | undefined>()
  const logs: Uint8Array[] = []
  const transfers: CallTransfer[] = []
  let returnData: Uint8Array = new Uint8Array(0)
  let balance = BigInt(input.balance)
  let instance: WebAssembly.Instance | undefined

  const gasGlobal = (): WebAssembly.Global => (instance as WebAssembly.Instance).exports[GAS_EXPORT] as WebAssembly.Global
  const use = (gas: number): void => {
    const left = (gasGlobal().value as bigint) - BigInt(gas)
    gasGlobal().value = left
    if (left < 0n) throw new HostTrap('out of gas')
  }
  const memoryBytes = (): Uint8Array => {
    const mem = (instance as WebAssembly.Instance).exports[MEMORY_EXPORT] as WebAssembly.Memory | undefined
    return mem === undefined ? new Uint8Array(0) : new Uint8Array(mem.buffer)
  }
  const read = (ptr: number, len: number): Uint8Array => {
    const mem = memoryBytes()
    const at = ptr >>> 0
    const end = at + (len >>> 0)
    if (end > mem.length) throw new HostTrap('memory access out of bounds')
    return mem.slice(at, end)
  }
  const write = (ptr: number, bytes: Uint8Array): void => {
    const mem = memoryBytes()
    const at = ptr >>> 0
    if (at + bytes.length > mem.length) throw new HostTrap('memory access out of bounds')
    mem.set(bytes, at)
  }
  const readKey = (ptr: number, len: number): string => {
    if ((len >>> 0) === 0 || (len >>> 0) > MAX_KEY_BYTES) throw new HostTrap('invalid storage key')
    try {
      return strictUtf8.decode(read(ptr, len))
    } catch (err) {
      if (err instanceof HostTrap) throw err
      throw new HostTrap('invalid storage key')
    }
  }
  const arg = (i: number): Uint8Array => {
    const a = (args as Uint8Array[])[i]
    if (!Number.isInteger(i) || i < 0 || a === undefined) throw new HostTrap('argument index out of range')
    return a
  }
  const callerBytes = utf8.encode(input.caller)
  const contractIdBytes = utf8.encode(input.contractId)

  const kith = {
    storage_get: (kp: number, kl: number, out: number, cap: number): number => {
      use(GAS.storageGet + GAS.hostByte * (kl >>> 0))
      const key = readKey(kp, kl)
      let value = writes.has(key) ? writes.get(key) : reads.get(key)
      if (value === undefined && !writes.has(key) && !reads.has(key)) {
        value = storage.get(key)
        reads.set(key, value)
      }
      if (value === undefined || value === null) return -1
      const n = Math.min(value.length, cap >>> 0)
      use(GAS.hostByte * n)
      write(out, value.subarray(0, n))
      return value.length
    },
    storage_set: (kp: number, kl: number, vp: number, vl: number): void => {
      use(GAS.storageSet + GAS.storageSetByte * ((kl >>> 0) + (vl >>> 0)))
      const key = readKey(kp, kl)
      if ((vl >>> 0) > MAX_VALUE_BYTES) throw new HostTrap('storage value too large')
      writes.set(key, read(vp, vl))
    },
    storage_delete: (kp: number, kl: number): void => {
      use(GAS.storageDelete + GAS.hostByte * (kl >>> 0))
      writes.set(readKey(kp, kl), null)
    },
    caller: (out: number): void => {
      use(GAS.hostCall + GAS.hostByte * callerBytes.length)
      write(out, callerBytes)
    },
    contract_id_len: (): number => {
      use(GAS.hostCall)
      return contractIdBytes.length
    },
    contract_id: (out: number): void => {
      use(GAS.hostCall + GAS.hostByte * contractIdBytes.length)
      write(out, contractIdBytes)
    },
    attached_amount: (): bigint => {
      use(GAS.hostCall)
      return BigInt(input.amount)
    },
    balance: (): bigint => {
      use(GAS.hostCall)
      return balance
    },
    transfer: (tp: number, tl: number, amount: bigint): void => {
      use(GAS.transfer + GAS.hostByte * (tl >>> 0))
      if ((tl >>> 0) !== 64) throw new HostTrap('invalid transfer recipient')
      const to = new TextDecoder().decode(read(tp, tl))
      if (!PUBKEY_HEX.test(to)) throw new HostTrap('invalid transfer recipient')
      if (amount <= 0n) throw new HostTrap('invalid transfer amount')
      if (amount > balance) throw new HostTrap('transfer exceeds contract balance')
      if (transfers.length >= MAX_TRANSFERS) throw new HostTrap('too many transfers')
      balance -= amount
      transfers.push({ to, amount: Number(amount) })
    },
    emit_log: (ptr: number, len: number): void => {
      use(GAS.emitLog + GAS.emitLogByte * (len >>> 0))
      if ((len >>> 0) > MAX_LOG_BYTES) throw new HostTrap('log too large')
      if (logs.length >= MAX_LOGS) throw new HostTrap('too many logs')
      logs.push(read(ptr, len))
    },
    args_size: (): number => {
      use(GAS.hostCall)
      return argsRaw.length
    },
    args_read: (out: number): void => {
      use(GAS.hostCall + GAS.hostByte * argsRaw.length)
      write(out, argsRaw)
    },
    arg_count: (): number => {
      use(GAS.hostCall)
      return (args as Uint8Array[]).length
    },
    arg_len: (i: number): number => {
      use(GAS.hostCall)
      return arg(i).length
    },
    arg_read: (i: number, out: number): void => {
      use(GAS.hostCall)
      const a = arg(i)
      use(GAS.hostByte * a.length)
      write(out, a)
    },
    block_height: (): bigint => {
      use(GAS.hostCall)
      return BigInt(input.blockHeight)
    },
    set_return: (ptr: number, len: number): void => {
      use(GAS.hostCall + GAS.hostByte * (len >>> 0))
      if ((len >>> 0) > MAX_RETURN_BYTES) throw new HostTrap('return data too large')
      returnData = read(ptr, len)
    }
  }
  const env = {
    // AssemblyScript's abort(message, file, line, column); the message is an AS string (UTF-16,
    // byte length in the u32 before it), which comes from the contract, so it is deterministic.
    abort: (msg: number): void => {
      use(GAS.hostCall)
      let text = ''
      try {
        const mem = memoryBytes()
        const at = msg >>> 0
        if (at >= 4 && at <= mem.length) {
          const bytes = new DataView(mem.buffer).getUint32(at - 4, true)
          const keep = Math.min(bytes, MAX_ABORT_CHARS * 2) & ~1
          if (at + keep <= mem.length) text = utf16.decode(mem.subarray(at, at + keep))
        }
      } catch {
        text = ''
      }
      // eslint-disable-next-line no-control-regex
      text = text.replace(/[\u0000-\u001f\u007f]/g, ' ')
      throw new HostTrap(text === '' ? 'abort' : `abort: ${text}`)
    }
  }

  try {
    instance = new WebAssembly.Instance(compiled, memory === undefined ? { kith, env } : { kith, env, [POOLED_MEMORY_MODULE]: { [POOLED_MEMORY_NAME]: memory } })
  } catch {
    return fail(base, 'trap')
  }
  const method = instance.exports[input.method]
  if (!Object.hasOwn(instance.exports, input.method) || typeof method !== 'function' || method.length !== 0 ||
    input.method.startsWith(RESERVED_EXPORT_PREFIX) || input.method === INIT_EXPORT) {
    return fail(base, `method not found: ${input.method.slice(0, 64)}`)
  }
  gasGlobal().value = BigInt(limit - base)
  const used = (): number => {
    const left = gasGlobal().value as bigint
    return left < 0n ? limit : limit - Number(left)
  }
  const init = instance.exports[INIT_EXPORT]
  try {
    if (typeof init === 'function') (init as () => unknown)()
    ;(method as () => unknown)()
  } catch (err) {
    if (err instanceof HostTrap) return fail(used(), err.message)
    if (err instanceof WebAssembly.RuntimeError) {
      if ((gasGlobal().value as bigint) < 0n) return fail(limit, 'out of gas')
      const depth = (instance.exports[DEPTH_EXPORT] as WebAssembly.Global).value as number
      if (depth > MAX_CALL_DEPTH) return fail(used(), 'call depth exceeded')
      return fail(used(), 'trap')
    }
    // V8's stack limit depends on the machine and thread: not a result this node may record.
    if (err instanceof RangeError) throw new VmGuardError('host stack exhausted')
    throw err
  }
  return { ok: true, gasUsed: used(), writes, logs, transfers, returnData }
}

/** A prepared module compiled with its memory moved to an import, and that memory's limits. */
interface CompiledContract {
  module: WebAssembly.Module
  memory: MemoryLimits | undefined
}

/** Compiled modules by codeHash, least recently used dropped first, and the memories calls reuse. */
export class ModuleCache {
  private readonly modules = new Map<string, CompiledContract>()
  readonly memories = new MemoryPool()

  constructor (private readonly capacity = 64) {}

  get (codeHash: string, code: Uint8Array): CompiledContract {
    let compiled = this.modules.get(codeHash)
    if (compiled !== undefined) {
      this.modules.delete(codeHash)
    } else {
      const { code: withImport, memory } = importOwnMemory(code)
      compiled = { module: new WebAssembly.Module(withImport as Uint8Array<ArrayBuffer>), memory }
    }
    this.modules.set(codeHash, compiled)
    if (this.modules.size > this.capacity) this.modules.delete(this.modules.keys().next().value as string)
    return compiled
  }
}

/** Compiles (or reuses) the module and runs the call on a kept memory. */
export function runCall (cache: ModuleCache, input: CallInput, storage: StorageView): CallOutcome {
  let compiled: CompiledContract
  try {
    compiled = cache.get(input.codeHash, input.code)
  } catch {
    return fail(Math.min(input.gasLimit, input.callBaseGas), 'invalid code')
  }
  const limits = compiled.memory
  if (limits === undefined) return executeCall(compiled.module, input, storage)
  const memory = cache.memories.take(limits)
  const outcome = executeCall(compiled.module, input, storage, memory)
  cache.memories.give(limits, memory)
  return outcome
}
