/**
 * A raw look at a module's section list, for the few facts binaryen.js does not expose (how many
 * memories, a start or tag section), and to drop custom sections (names, producers, anything
 * else) before binaryen reads the module, so they neither reach chain state nor name anything.
 * Called only on modules WebAssembly.validate accepted.
 */
export interface SectionFacts {
  memories: number
  hasStart: boolean
  hasTags: boolean
  /** The module without its custom sections. */
  stripped: Uint8Array
}

const CUSTOM = 0
const MEMORY = 5
const START = 8
const TAG = 13

function readU32 (bytes: Uint8Array, at: number): [value: number, next: number] {
  let value = 0
  let shift = 0
  for (;;) {
    const b = bytes[at++]
    value += (b & 0x7f) * 2 ** shift
    if ((b & 0x80) === 0) return [value, at]
    shift += 7
  }
}

export function scanSections (wasm: Uint8Array): SectionFacts {
  const facts: SectionFacts = { memories: 0, hasStart: false, hasTags: false, stripped: wasm }
  const kept: Uint8Array[] = [wasm.subarray(0, 8)]
  let at = 8
  while (at < wasm.length) {
    const start = at
    const id = wasm[at]
    const [size, payload] = readU32(wasm, at + 1)
    at = payload + size
    if (id === MEMORY) facts.memories = readU32(wasm, payload)[0]
    if (id === START) facts.hasStart = true
    if (id === TAG) facts.hasTags = true
    if (id !== CUSTOM) kept.push(wasm.subarray(start, at))
  }
  facts.stripped = Buffer.concat(kept)
  return facts
}
