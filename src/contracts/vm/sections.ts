/**
 * A raw look at a module's sections, for the facts binaryen.js does not expose: how many
 * memories, a start or tag section, and everything instantiating the module costs (memory pages,
 * tables and their entries, globals, exports, element and data segments), which prepare caps
 * and bills per call. Also drops custom sections (names, producers, anything else) before
 * binaryen reads the module, so they neither reach chain state nor name anything. Called only on
 * modules WebAssembly.validate accepted, so the structure is well formed; encodings the VM does
 * not run (passive or declarative segments, non-constant offsets) are reported, not parsed.
 */
export interface SectionFacts {
  memories: number
  /** initial pages of the memory, 0 without one */
  memoryInitialPages: number
  hasStart: boolean
  hasTags: boolean
  tables: number
  /** initial entries of all tables together, and the largest declared maximum (undefined: none declared) */
  tableEntries: number
  tableMaxima: Array<number | undefined>
  globals: number
  exports: number
  elementSegments: number
  elementEntries: number
  dataSegments: number
  dataBytes: number
  /** why a segment cannot be instantiated the way the VM bills it, or undefined */
  unsupportedSegment: string | undefined
  /** The module without its custom sections. */
  stripped: Uint8Array
}

const CUSTOM = 0
const TABLE = 4
const MEMORY = 5
const GLOBAL = 6
const EXPORT = 7
const START = 8
const ELEMENT = 9
const DATA = 11
const TAG = 13

/** Reads a module's bytes in order: unsigned LEB128 and constant offset expressions. */
class Reader {
  constructor (private readonly bytes: Uint8Array, public at: number) {}

  u32 (): number {
    let value = 0
    let shift = 0
    for (;;) {
      const b = this.bytes[this.at++]
      value += (b & 0x7f) * 2 ** shift
      if ((b & 0x80) === 0) return value
      shift += 7
    }
  }

  byte (): number {
    return this.bytes[this.at++]
  }

  /** Skips a signed LEB128. */
  skipLeb (): void {
    while ((this.bytes[this.at++] & 0x80) !== 0);
  }

  /**
   * Skips an active segment's offset: `i32.const n end` (what compilers emit). Anything else is
   * refused by the caller, so no other constant-expression opcode needs to be known here.
   */
  offset (): boolean {
    if (this.byte() !== 0x41) return false
    this.skipLeb()
    return this.byte() === 0x0b
  }

  /** Table or memory limits: flags, initial, optional maximum. */
  limits (): { initial: number, max: number | undefined } {
    const flags = this.u32()
    const initial = this.u32()
    return { initial, max: (flags & 1) !== 0 ? this.u32() : undefined }
  }
}

function scanTables (r: Reader, facts: SectionFacts): void {
  const n = r.u32()
  facts.tables = n
  for (let i = 0; i < n; i++) {
    const first = r.byte()
    // 0x40 0x00 <reftype> <limits> <expr>: a table with an initialiser (GC proposal); not billed, refused
    if (first === 0x40) {
      facts.unsupportedSegment = 'tables with an initialiser expression are not allowed'
      return
    }
    // (ref null? <heaptype>) of the GC proposal: skip the heap type
    if (first === 0x63 || first === 0x64) r.skipLeb()
    const { initial, max } = r.limits()
    facts.tableEntries += initial
    facts.tableMaxima.push(max)
  }
}

function scanElements (r: Reader, facts: SectionFacts): void {
  const n = r.u32()
  facts.elementSegments = n
  for (let i = 0; i < n; i++) {
    // flags 0: active, table 0, i32.const offset, function indices. Passive and declarative
    // segments (flags 1, 3, ...) serve table instructions and ref.func, which the VM refuses.
    if (r.u32() !== 0 || !r.offset()) {
      facts.unsupportedSegment = 'element segments must be active, for table 0, at a constant offset, listing functions'
      return
    }
    const entries = r.u32()
    facts.elementEntries += entries
    for (let e = 0; e < entries; e++) r.u32()
  }
}

function scanData (r: Reader, facts: SectionFacts): void {
  const n = r.u32()
  facts.dataSegments = n
  for (let i = 0; i < n; i++) {
    // flags 0: active, memory 0, i32.const offset. Passive segments serve memory.init, refused.
    if (r.u32() !== 0 || !r.offset()) {
      facts.unsupportedSegment = 'data segments must be active, for memory 0, at a constant offset'
      return
    }
    const size = r.u32()
    facts.dataBytes += size
    r.at += size
  }
}

interface Section { id: number, start: number, body: number, end: number }

/** The sections of a module in order: id, where the section starts, where its body starts, where it ends. */
function sectionsOf (wasm: Uint8Array): Section[] {
  const sections: Section[] = []
  let at = 8
  while (at < wasm.length) {
    const start = at
    const header = new Reader(wasm, at + 1)
    const size = header.u32()
    at = header.at + size
    sections.push({ id: wasm[start], start, body: header.at, end: at })
  }
  return sections
}

export function scanSections (wasm: Uint8Array): SectionFacts {
  const facts: SectionFacts = {
    memories: 0,
    memoryInitialPages: 0,
    hasStart: false,
    hasTags: false,
    tables: 0,
    tableEntries: 0,
    tableMaxima: [],
    globals: 0,
    exports: 0,
    elementSegments: 0,
    elementEntries: 0,
    dataSegments: 0,
    dataBytes: 0,
    unsupportedSegment: undefined,
    stripped: wasm
  }
  const kept: Uint8Array[] = [wasm.subarray(0, 8)]
  for (const { id, start, body: bodyAt, end } of sectionsOf(wasm)) {
    const body = new Reader(wasm, bodyAt)
    switch (id) {
      case TABLE: scanTables(body, facts); break
      case MEMORY:
        facts.memories = body.u32()
        if (facts.memories > 0) facts.memoryInitialPages = body.limits().initial
        break
      case GLOBAL: facts.globals = body.u32(); break
      case EXPORT: facts.exports = body.u32(); break
      case START: facts.hasStart = true; break
      case ELEMENT: scanElements(body, facts); break
      case DATA: scanData(body, facts); break
      case TAG: facts.hasTags = true; break
    }
    if (id !== CUSTOM) kept.push(wasm.subarray(start, end))
  }
  facts.stripped = Buffer.concat(kept)
  return facts
}

/** Where a module's own memory comes from once `importOwnMemory` moved it out. */
export const POOLED_MEMORY_MODULE = 'kith_vm'
export const POOLED_MEMORY_NAME = 'memory'

export interface MemoryLimits { initial: number, maximum: number | undefined }

const TYPE = 1
const IMPORT = 2
const IMPORT_KIND_MEMORY = 0x02

function leb (value: number): number[] {
  const out: number[] = []
  do {
    let b = value & 0x7f
    value = Math.floor(value / 128)
    if (value !== 0) b |= 0x80
    out.push(b)
  } while (value !== 0)
  return out
}

function section (id: number, body: number[] | Uint8Array): Uint8Array {
  return Uint8Array.from([id, ...leb(body.length), ...body])
}

function name (text: string): number[] {
  const bytes = [...new TextEncoder().encode(text)]
  return [...leb(bytes.length), ...bytes]
}

/**
 * The same module with its memory declared as an import (`kith_vm.memory`, same limits) instead
 * of defined, so the VM can hand every call a zeroed memory it keeps rather than a new one: a new
 * memory costs a reservation, page faults on first touch and garbage collection of the last one
 * (~140 µs against ~25 µs for zeroing a kept page, docs/contracts.md). Instantiation applies the
 * data segments to an imported memory just as to its own, and memory index 0 stays the memory,
 * so a call computes exactly what it computed before. A module without a memory comes back as is.
 */
export function importOwnMemory (wasm: Uint8Array): { code: Uint8Array, memory: MemoryLimits | undefined } {
  const sections = sectionsOf(wasm)
  const memorySection = sections.find((s) => s.id === MEMORY)
  if (memorySection === undefined) return { code: wasm, memory: undefined }
  const r = new Reader(wasm, memorySection.body)
  if (r.u32() !== 1) return { code: wasm, memory: undefined }
  const limitsAt = r.at
  const { initial, max } = r.limits()
  // the limits' bytes as they are: flags, initial, maximum
  const entry = [...name(POOLED_MEMORY_MODULE), ...name(POOLED_MEMORY_NAME), IMPORT_KIND_MEMORY, ...wasm.subarray(limitsAt, r.at)]

  const parts: Uint8Array[] = [wasm.subarray(0, 8)]
  const importSection = sections.find((s) => s.id === IMPORT)
  // a new import section goes after the type section (and custom sections before the next one)
  const insertBefore = importSection === undefined ? sections.find((s) => s.id !== CUSTOM && s.id !== TYPE) : undefined
  for (const s of sections) {
    if (s === insertBefore) parts.push(section(IMPORT, [...leb(1), ...entry]))
    if (s === memorySection) continue
    if (s === importSection) {
      const ir = new Reader(wasm, s.body)
      const count = ir.u32()
      parts.push(section(IMPORT, [...leb(count + 1), ...wasm.subarray(ir.at, s.end), ...entry]))
      continue
    }
    parts.push(wasm.subarray(s.start, s.end))
  }
  if (importSection === undefined && insertBefore === undefined) parts.push(section(IMPORT, [...leb(1), ...entry]))
  return { code: Buffer.concat(parts), memory: { initial, maximum: max } }
}
