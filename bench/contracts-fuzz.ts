/**
 * What a unit of gas costs in time, at its worst: the block gas bound (200,000,000) is sized on
 * ~2.5 ns per gas (docs/contracts.md), so no call may run much slower per gas than that.
 *
 * 1. Instantiation: modules at each cap of prepare (memory, table and elements, globals, exports,
 *    data segments, data bytes, and all at once), called with a method that does nothing: the
 *    time of a call against the callBaseGas it pays. The empty module is the fixed cost of any
 *    call, which the block's transaction count bounds; the others are judged by what they cost
 *    above it against the gas they pay above it.
 * 2. Single operations in a loop that runs until the largest gas limit is spent (the cheapest
 *    ways to buy a call out of compiled code: memory.grow(0), a 0-byte fill, a host call, a call).
 * 3. Random modules (the fuzzer's, test/unit/contracts/fuzz-modules.ts), each run with the
 *    largest gas limit: the worst ns per gas found, among calls of at least 100,000 gas (below
 *    that a call's fixed cost, bounded by the block's transaction count, dominates). Each is
 *    warmed up first (its first calls compile it, which the block bound counts apart), then
 *    timed as the mean of a run of calls, as a block of them pays.
 *
 * Run: `node dist/bench/contracts-fuzz.js [modules=2000] [seed=1]`. Exits 1 when a figure is over
 * the budget.
 */
import { fileURLToPath } from 'node:url'
import { createInlineVm, GAS, MAX_DATA_BYTES, MAX_DATA_SEGMENTS, MAX_EXPORTS, MAX_GAS_LIMIT, MAX_GLOBALS, MAX_TABLE_ENTRIES, type ContractVm, type PreparedModule } from '../src/contracts/vm/index.js'
import { randomModule } from '../test/unit/contracts/fuzz-modules.js'
import { IMPORTS, wat } from '../test/unit/contracts/helpers.js'

/** ns per gas the block gas bound assumes (200,000,000 gas ≈ 0.5 s of re-execution). */
export const BUDGET_NS_PER_GAS = 2.5
const MIN_GAS_FOR_RATE = 100_000

const times = (n: number, item: (i: number) => string): string => Array.from({ length: n }, (_, i) => item(i)).join(' ')
const ok = '(func (export "run"))'

/** Modules at the instantiation caps. */
export const CAP_MODULES: Record<string, string> = {
  'empty module': `(module ${ok})`,
  'memory: 16 initial pages': `(module (memory 16 16) ${ok})`,
  // a data segment makes instantiation write the memory: each page it touches is faulted in
  'memory: 1 page, one 16-byte data segment': `(module (memory 1 2) (data (i32.const 0) "0123456789abcdef") ${ok})`,
  'memory: 16 pages, a data segment in each': `(module (memory 16 16) ${times(16, (i) => `(data (i32.const ${i * 65536}) "0123456789abcdef")`)} ${ok})`,
  [`table: ${MAX_TABLE_ENTRIES} entries, all initialised`]: `(module (table ${MAX_TABLE_ENTRIES} funcref) (func $f) (elem (i32.const 0) ${times(MAX_TABLE_ENTRIES, () => '$f')}) ${ok})`,
  [`globals: ${MAX_GLOBALS} mutable i64`]: `(module ${times(MAX_GLOBALS, (i) => `(global $g${i} (mut i64) (i64.const ${i}))`)} ${ok})`,
  [`exports: ${MAX_EXPORTS} distinct functions`]: `(module ${times(MAX_EXPORTS - 1, (i) => `(func (export "e${i}"))`)} ${ok})`,
  [`exports: ${MAX_EXPORTS} mutable i64 globals`]: `(module ${times(MAX_EXPORTS - 1, (i) => `(global $g${i} (export "g${i}") (mut i64) (i64.const 0))`)} ${ok})`,
  [`data: ${MAX_DATA_SEGMENTS} segments`]: `(module (memory 1 1) ${times(MAX_DATA_SEGMENTS, (i) => `(data (i32.const ${i * 16}) "0123456789abcdef")`)} ${ok})`,
  [`data: ${MAX_DATA_BYTES} bytes in 1 page`]: `(module (memory 1 1) (data (i32.const 0) "${'x'.repeat(MAX_DATA_BYTES)}") ${ok})`,
  'all caps at once': `(module (memory 16 16) (table ${MAX_TABLE_ENTRIES} funcref) (func $f) (elem (i32.const 0) ${times(MAX_TABLE_ENTRIES, () => '$f')})
    ${times(MAX_GLOBALS, (i) => `(global $g${i} (mut i64) (i64.const ${i}))`)}
    ${times(MAX_EXPORTS - 1, (i) => `(func (export "e${i}"))`)}
    ${times(MAX_DATA_SEGMENTS - 1, (i) => `(data (i32.const ${i * 16}) "0123456789abcdef")`)}
    (data (i32.const 8192) "${'x'.repeat(MAX_DATA_BYTES - 16 * (MAX_DATA_SEGMENTS - 1))}") ${ok})`
}

/** Loop bodies, each run until MAX_GAS_LIMIT is spent. */
export const OPERATIONS: Record<string, string> = {
  'memory.grow(0)': '(drop (memory.grow (i32.const 0)))',
  'memory.fill of 0 bytes': '(memory.fill (i32.const 0) (i32.const 0) (i32.const 0))',
  'memory.copy of 0 bytes': '(memory.copy (i32.const 0) (i32.const 8) (i32.const 0))',
  'host call (balance)': '(drop (call $balance))',
  'storage_set of a 1-byte key': '(call $storage_set (i32.const 0) (i32.const 1) (i32.const 0) (i32.const 0))',
  'call of an empty function': '(call $empty)',
  'i32.add to a global': '(global.set $g (i32.add (global.get $g) (i32.const 1)))'
}

export interface Figure {
  name: string
  gas: number
  ns: number
  nsPerGas: number
  /** the figure judged against the budget, when not nsPerGas (instantiation: above the fixed cost) */
  judged?: number
  /** the fixed cost of a call: shown, not judged */
  fixed?: true
}

function call (vm: ContractVm, p: PreparedModule, gasLimit: number): { gasUsed: number, ns: number } {
  const started = process.hrtime.bigint()
  const out = vm.call({ code: p.code, codeHash: p.codeHash, callBaseGas: p.callBaseGas, method: 'run', argsJson: '', caller: 'a'.repeat(64), contractId: 'bench', amount: 0, balance: 0, gasLimit, blockHeight: 1 }, { get: () => undefined })
  return { gasUsed: out.gasUsed, ns: Number(process.hrtime.bigint() - started) }
}

/**
 * The mean time of `rounds` calls in a row of a module at the caps: a block of calls pays the
 * mean, garbage collection included, which a median hides (it once showed a third of the mean).
 */
export function instantiationFigures (vm: ContractVm, rounds = 2000): Figure[] {
  const figures = Object.entries(CAP_MODULES).map(([name, text]) => {
    const p = vm.prepare(wat(text))
    for (let i = 0; i < 20; i++) call(vm, p, MAX_GAS_LIMIT)
    const started = process.hrtime.bigint()
    for (let i = 0; i < rounds; i++) call(vm, p, MAX_GAS_LIMIT)
    const ns = Number(process.hrtime.bigint() - started) / rounds
    return { name, gas: p.callBaseGas, ns, nsPerGas: ns / p.callBaseGas }
  })
  const empty = figures[0]
  return figures.map((f, i) => i === 0 ? { ...f, fixed: true } : { ...f, judged: Math.max(0, f.ns - empty.ns) / (f.gas - empty.gas) })
}

/** The best of 5 runs of each operation's loop, against the gas it spent. */
export function operationFigures (vm: ContractVm): Figure[] {
  return Object.entries(OPERATIONS).map(([name, body]) => {
    const p = vm.prepare(wat(`(module ${IMPORTS} (memory 1 1) (data (i32.const 0) "k") (global $g (mut i32) (i32.const 0)) (func $empty)
      (func (export "run") (loop $l ${body} (br $l))))`))
    const runs = Array.from({ length: 5 }, () => call(vm, p, MAX_GAS_LIMIT))
    const best = runs.reduce((a, b) => (a.ns <= b.ns ? a : b))
    return { name: `loop of ${name}`, gas: best.gasUsed, ns: best.ns, nsPerGas: best.ns / best.gasUsed }
  })
}

/** Calls of a random module before it is timed: V8 compiles a function on its first call and optimises hot ones. */
const WARM_UP_CALLS = 10
const TIMED_CALLS = 20

/** The mean of TIMED_CALLS calls in a row. */
function meanCall (vm: ContractVm, p: PreparedModule): { gasUsed: number, ns: number } {
  let ns = 0
  let gasUsed = 0
  for (let i = 0; i < TIMED_CALLS; i++) {
    const run = call(vm, p, MAX_GAS_LIMIT)
    ns += run.ns / TIMED_CALLS
    gasUsed = run.gasUsed
  }
  return { gasUsed, ns }
}

/** The worst ns per gas among `modules` random modules run with the largest gas limit (warmed up, then the mean of a run of calls). */
export function fuzzWorst (vm: ContractVm, modules: number, seed: number): Figure & { seed: number } {
  let worst: Figure & { seed: number } = { name: 'none', gas: 0, ns: 0, nsPerGas: 0, seed }
  for (let s = seed; s < seed + modules; s++) {
    const p = vm.prepare(randomModule(s).wasm)
    // the first call compiles: counted apart, against the block's bound (docs/contracts.md § Compiling)
    if (call(vm, p, MAX_GAS_LIMIT).gasUsed < MIN_GAS_FOR_RATE) continue
    for (let i = 1; i < WARM_UP_CALLS; i++) call(vm, p, MAX_GAS_LIMIT)
    let timed = meanCall(vm, p)
    // a new worst is timed twice more and keeps its best mean: a garbage collection of what the
    // bench itself piled up (binaryen, thousands of modules) is not this module's doing
    if (timed.ns / timed.gasUsed > worst.nsPerGas) {
      for (let again = 0; again < 2; again++) {
        const next = meanCall(vm, p)
        if (next.ns < timed.ns) timed = next
      }
    }
    const nsPerGas = timed.ns / timed.gasUsed
    if (nsPerGas > worst.nsPerGas) worst = { name: `random module, seed ${s}`, gas: timed.gasUsed, ns: timed.ns, nsPerGas, seed: s }
  }
  return worst
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const modules = Number(process.argv[2] ?? 2000)
  const seed = Number(process.argv[3] ?? 1)
  const vm = await createInlineVm()
  const rows = [...instantiationFigures(vm), ...operationFigures(vm), fuzzWorst(vm, modules, seed)]
  await vm.close()
  const f = (x: number, d = 0): string => x.toLocaleString('en-US', { maximumFractionDigits: d })
  console.log(`budget: ${BUDGET_NS_PER_GAS} ns per gas (callBase ${f(GAS.callBase)} gas); inline VM; instantiation: mean of 2,000 calls in a row, judged above the empty module's fixed cost; loops: best of 5; random modules: mean of ${TIMED_CALLS} calls after ${WARM_UP_CALLS}\n`)
  console.log('| module | gas | µs per call | ns per gas | judged |\n|---|--:|--:|--:|--:|')
  for (const r of rows) console.log(`| ${r.name} | ${f(r.gas)} | ${f(r.ns / 1000, 1)} | ${f(r.nsPerGas, 2)} | ${r.fixed === true ? 'fixed cost' : f(r.judged ?? r.nsPerGas, 2)} |`)
  if (rows.some((r) => r.fixed !== true && (r.judged ?? r.nsPerGas) > BUDGET_NS_PER_GAS)) process.exitCode = 1
}
