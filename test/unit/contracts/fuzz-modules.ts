/**
 * Random valid contract modules for the VM fuzzer (test/unit/contracts/fuzz.test.ts and
 * bench/contracts-fuzz.ts), seeded and reproducible: integer arithmetic that may trap (division
 * by zero, out-of-bounds loads and stores), bounded loops, calls down a call graph without
 * recursion, globals, memory.fill/copy/grow and storage writes, and a `run` method that returns
 * what it computed. Each module also runs uninstrumented (`runPlain`, the same host semantics),
 * which is what the instrumented run must equal until gas runs out.
 */
import { rng } from '../../sim/simulator.js'
import { wat } from './helpers.js'

export { rng }

type Ty = 'i32' | 'i64'

interface Fn { params: Ty[], result: Ty | null }

const KEYS = 8
/** Scratch memory the program writes (after the keys). */
const SCRATCH = 1024

class Generator {
  private depth = 0
  /** inside a loop no call is made: bounded loops times a chain of callees' loops would be too long to run plainly */
  private inLoop = 0
  constructor (private readonly r: () => number, private readonly fns: Fn[], private readonly self: number, private readonly locals: Ty[]) {}

  int (n: number): number { return Math.floor(this.r() * n) }
  pick<T> (xs: readonly T[]): T { return xs[this.int(xs.length)] }

  const (t: Ty): string {
    const special = [0, 1, -1, 7, 255, 0x7fffffff, -0x80000000]
    const v = this.r() < 0.5 ? this.pick(special) : this.int(2 ** 31) - 2 ** 30
    return `(${t}.const ${v})`
  }

  /** An address inside memory most of the time, sometimes past its end (a trap in both runs). */
  addr (): string {
    const mask = this.r() < 0.97 ? 0x3fff : 0xffff
    return `(i32.add (i32.const ${SCRATCH}) (i32.and ${this.expr('i32')} (i32.const ${mask})))`
  }

  expr (t: Ty): string {
    this.depth++
    try {
      if (this.depth > 5) return this.leaf(t)
      const roll = this.r()
      if (roll < 0.25) return this.leaf(t)
      if (roll < 0.6) {
        if (this.r() < 0.1) {
          // division: by an odd divisor mostly, so that a trap (by zero, MIN / -1) stays an exception
          const divisor = this.r() < 0.8 ? `(${t}.or ${this.expr(t)} (${t}.const 1))` : this.expr(t)
          return `(${t}.${this.pick(['div_s', 'div_u', 'rem_s', 'rem_u'])} ${this.expr(t)} ${divisor})`
        }
        const op = this.pick(['add', 'sub', 'mul', 'and', 'or', 'xor', 'shl', 'shr_s', 'shr_u', 'rotl'])
        return `(${t}.${op} ${this.expr(t)} ${this.expr(t)})`
      }
      if (roll < 0.7) {
        const cmp = this.pick(['eq', 'ne', 'lt_s', 'gt_u', 'le_s', 'ge_u'])
        const inner = this.pick<Ty>(['i32', 'i64'])
        const c = `(${inner}.${cmp} ${this.expr(inner)} ${this.expr(inner)})`
        return t === 'i32' ? c : `(i64.extend_i32_u ${c})`
      }
      if (roll < 0.78) return t === 'i32' ? `(i32.wrap_i64 ${this.expr('i64')})` : `(i64.extend_i32_s ${this.expr('i32')})`
      if (roll < 0.86) return `(${t}.load ${this.addr()})`
      if (roll < 0.9) return `(select ${this.expr(t)} ${this.expr(t)} ${this.expr('i32')})`
      if (roll < 0.94) return `(${t}.${this.pick(['clz', 'ctz', 'popcnt', 'extend8_s'])} ${this.expr(t)})`
      const callees = this.fns.map((f, i) => ({ f, i })).filter(({ f, i }) => i > this.self && f.result === t)
      if (callees.length === 0 || this.inLoop > 0) return this.leaf(t)
      const { f, i } = this.pick(callees)
      return `(call $f${i} ${f.params.map((p) => this.expr(p)).join(' ')})`
    } finally {
      this.depth--
    }
  }

  leaf (t: Ty): string {
    const matching = this.locals.map((l, i) => ({ l, i })).filter(({ l }) => l === t)
    const roll = this.r()
    if (roll < 0.4 && matching.length > 0) return `(local.get ${this.pick(matching).i})`
    if (roll < 0.55) return `(global.get $g_${t})`
    return this.const(t)
  }

  statement (loopDepth: number): string {
    const roll = this.r()
    // the loop counters (the last locals) are never assigned but by their loop
    const assignable = this.locals.length - LOOP_COUNTERS.length
    if (roll < 0.2 && assignable > 0) {
      const i = this.int(assignable)
      return `(local.set ${i} ${this.expr(this.locals[i])})`
    }
    if (roll < 0.3) { const t = this.pick<Ty>(['i32', 'i64']); return `(global.set $g_${t} ${this.expr(t)})` }
    if (roll < 0.45) { const t = this.pick<Ty>(['i32', 'i64']); return `(${t}.store ${this.addr()} ${this.expr(t)})` }
    if (roll < 0.55) return `(if ${this.expr('i32')} (then ${this.block(loopDepth)}) (else ${this.block(loopDepth)}))`
    if (roll < 0.65 && loopDepth < 2) {
      // a loop that ends: its own counter, from 1 to 40 iterations
      const counter = this.locals.length - 1 - loopDepth
      this.inLoop++
      const body = this.block(loopDepth + 1)
      this.inLoop--
      return `(local.set ${counter} (i32.const ${1 + this.int(40)}))
        (loop $l${loopDepth} ${body}
          (br_if $l${loopDepth} (local.tee ${counter} (i32.sub (local.get ${counter}) (i32.const 1)))))`
    }
    if (roll < 0.72) return `(call $storage_set (i32.const ${2 * this.int(KEYS)}) (i32.const 2) ${this.addr()} (i32.const 8))`
    if (roll < 0.78) return `(memory.fill ${this.addr()} ${this.expr('i32')} (i32.const ${this.int(512)}))`
    if (roll < 0.83) return `(memory.copy ${this.addr()} ${this.addr()} (i32.const ${this.int(512)}))`
    if (roll < 0.85) return `(drop (memory.grow (i32.const ${this.int(2)})))`
    if (roll < 0.855) return '(unreachable)'
    const t = this.pick<Ty>(['i32', 'i64'])
    return `(drop ${this.expr(t)})`
  }

  block (loopDepth: number): string {
    return Array.from({ length: 1 + this.int(4) }, () => this.statement(loopDepth)).join('\n')
  }
}

/** Two locals at the end of every function serve as loop counters (nested at most 2 deep). */
const LOOP_COUNTERS: Ty[] = ['i32', 'i32']

/** A random valid module: its WAT text and bytes. */
export function randomModule (seed: number): { text: string, wasm: Uint8Array } {
  const r = rng(seed)
  const types: Ty[] = ['i32', 'i64']
  const fns: Fn[] = Array.from({ length: 1 + Math.floor(r() * 4) }, () => ({
    params: Array.from({ length: Math.floor(r() * 3) }, () => types[Math.floor(r() * 2)]),
    result: r() < 0.2 ? null : types[Math.floor(r() * 2)]
  }))
  const bodies = fns.map((f, i) => {
    const vars: Ty[] = [...Array.from({ length: Math.floor(r() * 3) }, () => types[Math.floor(r() * 2)]), ...LOOP_COUNTERS]
    const g = new Generator(r, fns, i, [...f.params, ...vars])
    const tail = f.result === null ? '' : g.expr(f.result)
    return `(func $f${i} ${f.params.map((p) => `(param ${p})`).join(' ')} ${f.result === null ? '' : `(result ${f.result})`}
      ${vars.map((v) => `(local ${v})`).join(' ')}
      ${g.block(0)}
      ${tail})`
  })
  const main = new Generator(r, fns, -1, LOOP_COUNTERS)
  const call0 = `(call $f0 ${fns[0].params.map((p) => main.expr(p)).join(' ')})`
  const keys = Array.from({ length: KEYS }, (_, i) => `k${i}`).join('')
  const text = `(module
    (import "kith" "storage_set" (func $storage_set (param i32 i32 i32 i32)))
    (import "kith" "set_return" (func $set_return (param i32 i32)))
    (memory (export "memory") 1 2)
    (global $g_i32 (mut i32) (i32.const 3))
    (global $g_i64 (mut i64) (i64.const 5))
    (data (i32.const 0) "${keys}")
    ${bodies.join('\n')}
    (func (export "run") (local i32 i32)
      ${fns[0].result === null ? call0 : `(${fns[0].result}.store (i32.const ${SCRATCH}) ${call0})`}
      ${main.block(0)}
      (i64.store (i32.const ${SCRATCH + 8}) (i64.extend_i32_u (global.get $g_i32)))
      (i64.store (i32.const ${SCRATCH + 16}) (global.get $g_i64))
      (call $set_return (i32.const ${SCRATCH}) (i32.const 64))))`
  return { text, wasm: wat(text) }
}

export type PlainOutcome =
  | { ok: true, writes: Array<[string, string]>, returnHex: string }
  | { ok: false, error: 'trap' | 'memory access out of bounds' }

/** A host function given a bad pointer: the VM's `memory access out of bounds`. */
class HostOutOfBounds extends Error {}

/** Runs `run` of the original (uninstrumented) module with the same host semantics as the VM. */
export function runPlain (wasm: Uint8Array): PlainOutcome {
  const writes = new Map<string, string>()
  let returnHex = ''
  const memory: { current?: WebAssembly.Memory } = {}
  const buffer = (): ArrayBuffer => (memory.current as WebAssembly.Memory).buffer
  const bytes = (ptr: number, len: number): Buffer => Buffer.from(new Uint8Array(buffer(), ptr, len))
  const instance = new WebAssembly.Instance(new WebAssembly.Module(wasm as Uint8Array<ArrayBuffer>), {
    kith: {
      storage_set: (kp: number, kl: number, vp: number, vl: number) => {
        if (vp + vl > buffer().byteLength) throw new HostOutOfBounds()
        // a Map keeps first-touch order with the final value, as the VM's writes do
        writes.set(bytes(kp, kl).toString('utf8'), bytes(vp, vl).toString('hex'))
      },
      set_return: (p: number, l: number) => { returnHex = bytes(p, l).toString('hex') }
    }
  })
  memory.current = instance.exports.memory as WebAssembly.Memory
  try {
    (instance.exports.run as () => void)()
  } catch (err) {
    if (err instanceof WebAssembly.RuntimeError) return { ok: false, error: 'trap' }
    if (err instanceof HostOutOfBounds) return { ok: false, error: 'memory access out of bounds' }
    throw err
  }
  return { ok: true, writes: [...writes], returnHex }
}
