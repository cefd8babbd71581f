/**
 * Contract VM benchmark: the cost of metering. The same AssemblyScript work loop
 * (contracts/bench/work.ts) runs unmetered (asc's output on a plain instance with stub imports)
 * and metered (prepared, through the inline VM: instrumented gas and depth, a fresh instance per
 * call), with the overhead ratio (goal: under 1.5×). Then whole calls per second of the username
 * registry's `register` through the inline and the worker VM.
 *
 * Run alone: `node dist/bench/contracts-vm.js`; in `npm run bench` unless --no-contracts.
 */
import { fileURLToPath } from 'node:url'
// eslint-disable-next-line doors/through-the-door -- the dev-time contract compiler (npm run contract:build) loads AssemblyScript, so the node's door must not hold it
import { compileContract } from '../src/contracts/build-tool.js'
import { MAX_GAS_LIMIT, createInlineVm, createWorkerVm, type ContractVm, type StorageView } from '../src/contracts/vm/index.js'
import { usernameRegistryWasm } from '../src/contracts/index.js'

export interface ContractsBenchResult {
  iterations: number
  unmeteredMs: number
  meteredMs: number
  overhead: number
  gasUsed: number
  registerPerSec: { inline: number, worker: number }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** Runs the unmetered module directly: stub host functions, _initialize, then work. */
function unmeteredRunner (wasm: Uint8Array, n: number): () => string {
  const args = Buffer.from(String(n))
  let instance: WebAssembly.Instance | undefined
  let result = ''
  const mem = (): Uint8Array => new Uint8Array((instance?.exports.memory as WebAssembly.Memory).buffer)
  const imports = {
    kith: {
      arg_count: () => 1,
      arg_len: () => args.length,
      arg_read: (_i: number, out: number) => { mem().set(args, out) },
      set_return: (ptr: number, len: number) => { result = Buffer.from(mem().subarray(ptr, ptr + len)).toString() }
    },
    env: { abort: () => { throw new Error('abort') } }
  }
  const compiled = new WebAssembly.Module(wasm as Uint8Array<ArrayBuffer>)
  return () => {
    instance = new WebAssembly.Instance(compiled, imports)
    ;(instance.exports._initialize as () => void)()
    ;(instance.exports.work as () => void)()
    return result
  }
}

function registerRate (vm: ContractVm, seconds: number): number {
  const prepared = vm.prepare(usernameRegistryWasm())
  const empty: StorageView = { get: () => undefined }
  const end = performance.now() + seconds * 1000
  let n = 0
  while (performance.now() < end) {
    const out = vm.call({ code: prepared.code, codeHash: prepared.codeHash, callBaseGas: prepared.callBaseGas, method: 'register', argsJson: `["user_${n}"]`, caller: 'a'.repeat(64), contractId: 'username_registry', amount: 10_000, balance: 10_000, gasLimit: 1_000_000, blockHeight: 1 }, empty)
    if (!out.ok) throw new Error(`register failed: ${out.error}`)
    n++
  }
  return n / seconds
}

export async function runContractsBench (log: (line: string) => void = console.error, rounds = 15): Promise<ContractsBenchResult> {
  log('contracts: compiling the work loop...')
  const wasm = await compileContract('contracts/bench/work.ts')
  const vm = await createInlineVm()
  const prepared = vm.prepare(wasm)
  const storage: StorageView = { get: () => undefined }
  const meteredCall = (n: number) => vm.call({ code: prepared.code, codeHash: prepared.codeHash, callBaseGas: prepared.callBaseGas, method: 'work', argsJson: `[${n}]`, caller: 'a'.repeat(64), contractId: 'bench', amount: 0, balance: 0, gasLimit: MAX_GAS_LIMIT, blockHeight: 1 }, storage)
  // The most iterations that fit in the largest gas limit, from the gas of a small run.
  const small = meteredCall(1000)
  const large = meteredCall(2000)
  if (!small.ok || !large.ok) throw new Error('work loop failed')
  const perIteration = (large.gasUsed - small.gasUsed) / 1000
  const iterations = Math.floor((MAX_GAS_LIMIT * 0.9 - small.gasUsed) / perIteration)

  const unmetered = unmeteredRunner(wasm, iterations)
  const expected = unmetered()
  const tUn: number[] = []
  const tMe: number[] = []
  let gasUsed = 0
  for (let r = 0; r < rounds; r++) {
    let t = performance.now()
    if (unmetered() !== expected) throw new Error('unmetered result changed')
    tUn.push(performance.now() - t)
    t = performance.now()
    const out = meteredCall(iterations)
    tMe.push(performance.now() - t)
    if (!out.ok || Buffer.from(out.returnData).toString() !== expected) throw new Error('metered result differs')
    gasUsed = out.gasUsed
  }
  log('contracts: register calls per second...')
  const worker = await createWorkerVm()
  const registerPerSec = { inline: registerRate(vm, 1), worker: registerRate(worker, 1) }
  await Promise.all([vm.close(), worker.close()])
  const unmeteredMs = median(tUn)
  const meteredMs = median(tMe)
  return { iterations, unmeteredMs, meteredMs, overhead: meteredMs / unmeteredMs, gasUsed, registerPerSec }
}

export function formatContractsBench (r: ContractsBenchResult): string {
  const f = (x: number, d = 2): string => x.toLocaleString('en-US', { maximumFractionDigits: d })
  return [
    '| measure | value |', '|---|--:|',
    `| work loop iterations (fit in MAX_GAS_LIMIT) | ${f(r.iterations, 0)} |`,
    `| unmetered (asc output, plain instance), median ms | ${f(r.unmeteredMs)} |`,
    `| metered (prepared, inline VM call), median ms | ${f(r.meteredMs)} |`,
    `| **metering overhead** (goal < 1.5×) | **${f(r.overhead)}×** |`,
    `| gas used by the metered call | ${f(r.gasUsed, 0)} |`,
    `| registry register calls/s, inline VM | ${f(r.registerPerSec.inline, 0)} |`,
    `| registry register calls/s, worker VM | ${f(r.registerPerSec.worker, 0)} |`
  ].join('\n')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  runContractsBench().then((r) => { console.log(formatContractsBench(r)) }, (err: unknown) => {
    console.error(err)
    process.exitCode = 1
  })
}
