/**
 * Deploy-time work on a contract module: validation against the VM's rules, then one
 * instrumentation pass with binaryen (gas and call depth). The output is what chain state stores,
 * so this must be a pure function of the input bytes: binaryen is pinned to an exact version, no
 * optimisation pass runs, and everything is walked in module order.
 */
import { createHash } from 'node:crypto'
import type Binaryen from 'binaryen'
import { KithError } from '../../errors/index.js'
import { DEPTH_EXPORT, GAS_EXPORT, INIT_EXPORT, MEMORY_EXPORT, RESERVED_EXPORT_PREFIX, allowedImport } from './abi.js'
import {
  GAS, MAX_CALL_DEPTH, MAX_DATA_BYTES, MAX_DATA_SEGMENTS, MAX_ELEMENT_SEGMENTS, MAX_EXPORTS, MAX_FUNCTIONS, MAX_GLOBALS, MAX_LOCALS,
  MAX_MEMORY_PAGES, MAX_MODULE_BYTES, MAX_TABLE_ENTRIES, MAX_TABLES
} from './limits.js'
import { scanSections, type SectionFacts } from './sections.js'
import type { PreparedModule } from './types.js'
import { Refused, walkFunctionBody, type BodyWalk } from './walk.js'

export type BinaryenApi = typeof Binaryen

/** Binaryen accessors present at run time but missing from its typings. */
interface Setters {
  Loop: { setBody: (expr: number, body: number) => void }
  MemoryCopy: { setSize: (expr: number, size: number) => void }
  MemoryFill: { setSize: (expr: number, size: number) => void }
  MemoryGrow: { setDelta: (expr: number, delta: number) => void }
}

function refuse (reason: string): never {
  throw new KithError('CONTRACT_REFUSED', `contract module refused: ${reason}`)
}

/** WebAssembly's typings want an ArrayBuffer-backed view; the bytes are only read. */
const bufferSource = (bytes: Uint8Array): Uint8Array<ArrayBuffer> => bytes as Uint8Array<ArrayBuffer>

/** Validates and instruments `wasm`; throws KithError('CONTRACT_REFUSED') saying why a module is refused. */
export function prepareModule (binaryen: BinaryenApi, wasm: Uint8Array): PreparedModule {
  if (wasm.length > MAX_MODULE_BYTES) refuse(`module is ${wasm.length} bytes, more than ${MAX_MODULE_BYTES}`)
  if (!WebAssembly.validate(bufferSource(wasm))) refuse('not a valid WebAssembly module')
  const sections = scanSections(wasm)
  if (sections.hasStart) refuse('a start function is not allowed')
  if (sections.hasTags) refuse('exception handling (tags) is not allowed')
  if (sections.memories > 1) refuse('multiple memories are not allowed')
  checkInstantiationCaps(sections)

  let module: Binaryen.Module
  try {
    module = binaryen.readBinary(sections.stripped)
  } catch {
    return refuse('module uses a WebAssembly feature the VM does not support')
  }
  try {
    const methods = validateModule(binaryen, module)
    instrument(binaryen, module)
    // Explicit features: Features.All emits encodings V8 rejects (research § 9).
    module.setFeatures(binaryen.Features.MutableGlobals | binaryen.Features.SignExt | binaryen.Features.BulkMemory)
    const code = module.emitBinary()
    if (!WebAssembly.validate(bufferSource(code))) refuse('instrumentation produced an invalid module')
    return { code, codeHash: createHash('sha256').update(code).digest('hex'), methods, callBaseGas: callBaseGas(sections) }
  } finally {
    module.dispose()
  }
}

/** What instantiating the module costs is capped: every call instantiates it afresh. */
function checkInstantiationCaps (s: SectionFacts): void {
  if (s.unsupportedSegment !== undefined) refuse(s.unsupportedSegment)
  const over = (what: string, n: number, cap: number): void => { if (n > cap) refuse(`${what} ${n}, more than ${cap}`) }
  over('tables:', s.tables, MAX_TABLES)
  over('table entries:', s.tableEntries, MAX_TABLE_ENTRIES)
  for (const max of s.tableMaxima) if (max !== undefined) over('table maximum:', max, MAX_TABLE_ENTRIES)
  over('element segments:', s.elementSegments, MAX_ELEMENT_SEGMENTS)
  over('element entries:', s.elementEntries, MAX_TABLE_ENTRIES)
  over('globals:', s.globals, MAX_GLOBALS)
  over('exports:', s.exports, MAX_EXPORTS)
  over('data segments:', s.dataSegments, MAX_DATA_SEGMENTS)
  over('data segment bytes:', s.dataBytes, MAX_DATA_BYTES)
}

/** Gas every call of the module pays before its code runs: callBase plus what the module declares. */
export function callBaseGas (s: SectionFacts): number {
  const per = GAS.instantiation
  return GAS.callBase + per.memoryPage * s.memoryInitialPages + per.tableEntry * s.tableEntries + per.elementEntry * s.elementEntries +
    per.global * s.globals + per.export * s.exports + per.dataSegment * s.dataSegments + per.dataByte * s.dataBytes
}

const isValueType = (binaryen: BinaryenApi, t: number): boolean => t === binaryen.i32 || t === binaryen.i64

/** Module-level rules; returns the callable methods (exported functions without params), sorted. */
function validateModule (binaryen: BinaryenApi, module: Binaryen.Module): string[] {
  if (module.hasMemory()) {
    const mem = module.getMemoryInfo()
    if (mem.module !== null && mem.module !== '') refuse('memory imports are not allowed')
    if (mem.shared) refuse('shared memory (threads) is not allowed')
    if (mem.is64) refuse('memory64 is not allowed')
    if (mem.max === undefined || mem.max > MAX_MEMORY_PAGES) refuse(`memory must declare a maximum of at most ${MAX_MEMORY_PAGES} pages`)
  }
  for (let i = 0; i < module.getNumTables(); i++) {
    const table = binaryen.getTableInfo(module.getTableByIndex(i))
    if (table.module !== null && table.module !== '') refuse('table imports are not allowed')
  }
  for (let i = 0; i < module.getNumGlobals(); i++) {
    const g = binaryen.getGlobalInfo(module.getGlobalByIndex(i))
    if (g.module !== null && g.module !== '') refuse('global imports are not allowed')
    if (!isValueType(binaryen, g.type)) refuse(`global ${g.name} is not i32 or i64 (floats and vectors are not allowed)`)
  }
  let defined = 0
  for (let i = 0; i < module.getNumFunctions(); i++) {
    const f = binaryen.getFunctionInfo(module.getFunctionByIndex(i))
    const params = binaryen.expandType(f.params)
    const results = binaryen.expandType(f.results)
    if (f.module !== null && f.module !== '') {
      const allowed = allowedImport(f.module, f.base ?? '')
      if (allowed === undefined) refuse(`import ${f.module}.${f.base ?? ''} is not part of the host API`)
      const same = params.length === allowed.params.length && params.every((p, j) => p === binaryen[allowed.params[j]]) &&
        (allowed.result === null ? results.length === 0 : results.length === 1 && results[0] === binaryen[allowed.result])
      if (!same) refuse(`import ${f.module}.${f.base ?? ''} has the wrong signature`)
      continue
    }
    defined++
    if ([...params, ...f.vars].some((t) => !isValueType(binaryen, t))) refuse(`function ${f.name} has a local that is not i32 or i64`)
    if (results.length > 1 || results.some((t) => !isValueType(binaryen, t))) refuse(`function ${f.name} must return nothing, i32 or i64`)
    if (params.length + f.vars.length > MAX_LOCALS) refuse(`function ${f.name} has more than ${MAX_LOCALS} locals`)
  }
  if (defined > MAX_FUNCTIONS) refuse(`more than ${MAX_FUNCTIONS} functions`)

  const methods: string[] = []
  for (let i = 0; i < module.getNumExports(); i++) {
    const e = binaryen.getExportInfo(module.getExportByIndex(i))
    if (e.name.startsWith(RESERVED_EXPORT_PREFIX)) refuse(`export names starting with ${RESERVED_EXPORT_PREFIX} are reserved`)
    if (e.kind !== binaryen.ExternalFunction) continue
    const f = binaryen.getFunctionInfo(module.getFunction(e.value))
    const noParams = binaryen.expandType(f.params).length === 0
    if (e.name === INIT_EXPORT) {
      if (!noParams || f.results !== binaryen.none) refuse(`${INIT_EXPORT} must take no parameters and return nothing`)
    } else if (noParams) methods.push(e.name)
  }
  if (methods.length === 0) refuse('no callable export (an exported function without parameters)')
  return methods.sort()
}

/** A name no function or global of the module uses yet. */
function freshName (taken: (name: string) => boolean, base: string): string {
  let name = base
  while (taken(name)) name += '_'
  return name
}

/**
 * Gas: a mutable i64 global, decremented at each function entry and loop header by the static
 * node count of that region (nested loops excluded), `unreachable` when it goes negative.
 * Depth: each function becomes a wrapper (same name, so calls, exports and tables reach it) that
 * counts depth around a call to the original body, moved to an inner function; a `return` in the
 * body returns from the inner function, so it cannot skip the decrement.
 */
function instrument (binaryen: BinaryenApi, module: Binaryen.Module): void {
  const setters = binaryen as unknown as Setters
  const functionTaken = (n: string): boolean => module.getFunction(n) !== 0
  const globalTaken = (n: string): boolean => module.getGlobal(n) !== 0
  const gas = freshName(globalTaken, 'kith$gas')
  module.addGlobal(gas, binaryen.i64, true, module.i64.const(0n))
  const depth = freshName(globalTaken, 'kith$depth')
  module.addGlobal(depth, binaryen.i32, true, module.i32.const(0))

  /** `gas -= amount (i64 expr); if gas < 0 unreachable` */
  const chargeBy = (amount: number): number => module.block(null, [
    module.global.set(gas, module.i64.sub(module.global.get(gas, binaryen.i64), amount)),
    module.if(module.i64.lt_s(module.global.get(gas, binaryen.i64), module.i64.const(0n)), module.unreachable())
  ], binaryen.none)
  const charge = (n: number): number => chargeBy(module.i64.const(BigInt(n)))

  const names: string[] = []
  for (let i = 0; i < module.getNumFunctions(); i++) {
    const f = binaryen.getFunctionInfo(module.getFunctionByIndex(i))
    if (f.module === null || f.module === '') names.push(f.name)
  }
  const walks: BodyWalk[] = []
  for (const name of names) {
    const f = binaryen.getFunctionInfo(module.getFunction(name))
    let walk: BodyWalk
    try {
      walk = walkFunctionBody(binaryen, f.body)
    } catch (err) {
      if (err instanceof Refused) refuse(`function ${name}: ${err.message}`)
      throw err
    }
    walks.push(walk)
    const inner = freshName(functionTaken, `${name}$kith_body`)
    module.removeFunction(name)
    module.addFunction(inner, f.params, f.results, f.vars, f.body)
    const args = binaryen.expandType(f.params).map((t, j) => module.local.get(j, t))
    const paramCount = args.length
    const hasResult = f.results !== binaryen.none
    const leave = module.global.set(depth, module.i32.sub(module.global.get(depth, binaryen.i32), module.i32.const(1)))
    const body = [
      charge(walk.entryCost + GAS.functionEntry),
      module.global.set(depth, module.i32.add(module.global.get(depth, binaryen.i32), module.i32.const(1))),
      module.if(module.i32.gt_u(module.global.get(depth, binaryen.i32), module.i32.const(MAX_CALL_DEPTH)), module.unreachable()),
      ...(hasResult
        ? [module.local.set(paramCount, module.call(inner, args, f.results)), leave, module.local.get(paramCount, f.results)]
        : [module.call(inner, args, binaryen.none), leave])
    ]
    module.addFunction(name, f.params, f.results, hasResult ? [f.results] : [], module.block(null, body, f.results))
  }

  // Memory helpers are added after the wrapping above, so they are not wrapped themselves.
  const chargeBytes = freshName(functionTaken, 'kith$charge_bytes')
  const chargePages = freshName(functionTaken, 'kith$charge_pages')
  const size = module.local.get(0, binaryen.i32)
  // each has a fixed part: the operation is a call out of the compiled code, whatever its size
  module.addFunction(chargeBytes, binaryen.i32, binaryen.i32, [], module.block(null, [
    chargeBy(module.i64.add(module.i64.const(BigInt(GAS.memoryOp)), module.i64.div_u(
      module.i64.add(module.i64.extend_u(size), module.i64.const(BigInt(GAS.memoryBytesPerGas - 1))),
      module.i64.const(BigInt(GAS.memoryBytesPerGas))))),
    module.local.get(0, binaryen.i32)
  ], binaryen.i32))
  module.addFunction(chargePages, binaryen.i32, binaryen.i32, [], module.block(null, [
    chargeBy(module.i64.add(module.i64.const(BigInt(GAS.memoryGrow)),
      module.i64.mul(module.i64.extend_u(module.local.get(0, binaryen.i32)), module.i64.const(BigInt(GAS.memoryGrowPage))))),
    module.local.get(0, binaryen.i32)
  ], binaryen.i32))

  for (const walk of walks) {
    for (const loop of walk.loops) {
      const body = binaryen.getExpressionInfo(loop.expr) as Binaryen.LoopInfo
      setters.Loop.setBody(loop.expr, module.block(null, [charge(loop.cost), body.body], binaryen.getExpressionType(body.body)))
    }
    for (const expr of walk.copies) {
      const info = binaryen.getExpressionInfo(expr) as Binaryen.MemoryCopyInfo
      setters.MemoryCopy.setSize(expr, module.call(chargeBytes, [info.size], binaryen.i32))
    }
    for (const expr of walk.fills) {
      const info = binaryen.getExpressionInfo(expr) as Binaryen.MemoryFillInfo
      setters.MemoryFill.setSize(expr, module.call(chargeBytes, [info.size], binaryen.i32))
    }
    for (const expr of walk.grows) {
      const info = binaryen.getExpressionInfo(expr) as Binaryen.MemoryGrowInfo
      setters.MemoryGrow.setDelta(expr, module.call(chargePages, [info.delta], binaryen.i32))
    }
  }

  module.addGlobalExport(gas, GAS_EXPORT)
  module.addGlobalExport(depth, DEPTH_EXPORT)
  if (module.hasMemory()) module.addMemoryExport('0', MEMORY_EXPORT)
}
