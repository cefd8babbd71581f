/**
 * Caps and the gas table of the contract VM (docs/contracts.md). Every number here is part of
 * consensus: changing one changes results, so it needs a coordinated upgrade.
 */

/**
 * Most gas a call may be given (MAX_GAS_LIMIT), and the largest module `prepare` accepts, before
 * instrumentation (MAX_MODULE_BYTES): the chain's limits, which it enforces on every transaction.
 * Taken from the chain's limits file, not its door: the VM's worker threads load this file, and
 * the door would load the whole chain into each of them (~0.4 s per worker start).
 */
// eslint-disable-next-line doors/through-the-door -- the VM's worker threads load this file: the chain's door would load the whole chain into each
export { MAX_GAS_LIMIT, MAX_CONTRACT_CODE_BYTES as MAX_MODULE_BYTES } from '../../chain/limits.js'
/** A module's memory must declare a maximum of at most this many 64 KiB pages (1 MiB). */
export const MAX_MEMORY_PAGES = 16
/**
 * Caps on what instantiating a module costs, checked at deploy: every call instantiates the
 * module afresh, so these bound the work a call does before its first instruction (it is billed
 * per call too: GAS.instantiation).
 */
export const MAX_TABLES = 1
/** Entries of the table, initial and declared maximum (AssemblyScript needs one per function referenced indirectly). */
export const MAX_TABLE_ENTRIES = 1024
export const MAX_ELEMENT_SEGMENTS = 16
export const MAX_GLOBALS = 128
export const MAX_EXPORTS = 128
export const MAX_DATA_SEGMENTS = 256
/** Bytes of all data segments together (copied into the fresh memory at every call). */
export const MAX_DATA_BYTES = 64 * 1024
/** Most functions a module may define (imports not counted). */
export const MAX_FUNCTIONS = 1024
/** Most locals (params + vars) of one function: bounds a frame, so the depth cap bounds the stack. */
export const MAX_LOCALS = 256
/** Deepest expression nesting prepare walks; deeper modules are refused, never a host stack overflow. */
export const MAX_EXPRESSION_DEPTH = 512
/** Deepest chain of wasm calls in one contract call. */
export const MAX_CALL_DEPTH = 256
/** Storage keys are UTF-8 text of 1..MAX_KEY_BYTES bytes; values at most MAX_VALUE_BYTES. */
export const MAX_KEY_BYTES = 256
export const MAX_VALUE_BYTES = 4 * 1024
/** Logs one call may emit, and the size of each. */
export const MAX_LOGS = 32
export const MAX_LOG_BYTES = 1024
/** Transfers one call may make. */
export const MAX_TRANSFERS = 16
/** Largest return data (set_return). */
export const MAX_RETURN_BYTES = 4 * 1024
/** Longest abort message kept in an `abort: ...` error, in characters. */
export const MAX_ABORT_CHARS = 128
/** Default wall-clock guard of the worker VM, per call (a safety net, never a consensus input). */
export const DEFAULT_WALL_CLOCK_MS = 2000

/**
 * Gas table. Wasm code pays one gas per binaryen IR node executed (charged in advance per
 * function entry and loop iteration, by the static count of the region); host functions pay a
 * fixed cost plus a cost per byte they move.
 */
export const GAS = {
  /**
   * Every call, before any code runs: a fresh instance of an empty module. What the module
   * declares costs more (GAS.instantiation), computed once at deploy (PreparedModule.callBaseGas).
   */
  callBase: 10_000,
  /** Per unit of what a module declares, paid by every call on top of callBase (measured: docs/contracts.md). */
  instantiation: {
    /** initial memory page: the same as a page grown later */
    memoryPage: 8192,
    tableEntry: 100,
    elementEntry: 100,
    global: 500,
    /** an export becomes a JS function or object of the fresh instance */
    export: 2000,
    dataSegment: 500,
    dataByte: 4
  },
  /** Entry of any wasm function, on top of the body's node count: the depth check. */
  functionEntry: 4,
  /** memory.copy / memory.fill: a fixed cost (each is a call out of the wasm code: a fill of 0 bytes took ~85 ns) ... */
  memoryOp: 50,
  /** ... plus one gas per this many bytes (rounded up). */
  memoryBytesPerGas: 8,
  /** memory.grow: a fixed cost (a call into the engine: `memory.grow(0)` took ~170 ns, so a loop of it ran 1.7 s on 10,000,000 gas when it was charged nothing) ... */
  memoryGrow: 2000,
  /** ... plus per page requested (a page is 65,536 zeroed bytes). */
  memoryGrowPage: 8192,
  /** Host functions: fixed cost of each import call (~300 ns measured for `balance`), and per byte moved across the boundary. */
  hostCall: 400,
  hostByte: 1,
  /**
   * A read the call has not made before crosses from the VM's thread to the main thread and back
   * (~8.5 µs measured, against ~0.07 µs per gas of wasm): priced so that a call made of reads is
   * no slower per gas than the block gas bound assumes.
   */
  storageGet: 4000,
  storageSet: 2000,
  /** every stored byte ends in the block's write set, its state root and lmdb */
  storageSetByte: 100,
  storageDelete: 1000,
  emitLog: 500,
  emitLogByte: 5,
  transfer: 2000
} as const
