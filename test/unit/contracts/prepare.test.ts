/** prepare: what a module must be to be deployed, and instrumentation that changes nothing but gas. */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import binaryen from 'binaryen'
import { KithError } from '../../../src/errors/index.js'
import {
  GAS, MAX_DATA_BYTES, MAX_DATA_SEGMENTS, MAX_ELEMENT_SEGMENTS, MAX_EXPORTS, MAX_FUNCTIONS, MAX_GLOBALS, MAX_MODULE_BYTES, MAX_TABLE_ENTRIES,
  type ContractVm
} from '../../../src/contracts/vm/index.js'
import { BASE_FEATURES, IMPORTS, MapStorage, VMS, invoke, wat } from './helpers.js'

const F = binaryen.Features
const ok = '(func (export "run"))'

const times = (n: number, item: (i: number) => string): string => Array.from({ length: n }, (_, i) => item(i)).join(' ')

const refusals: Array<[string, () => Uint8Array, RegExp]> = [
  // every call instantiates the module afresh: what that costs is capped (issue 25, item 3)
  ['a table of 10,000,000 entries', () => wat(`(module (table 10000000 funcref) ${ok})`), /table entries: 10000000, more than 1024/],
  ['a table whose maximum is over the cap', () => wat(`(module (table 1 ${MAX_TABLE_ENTRIES + 1} funcref) ${ok})`), /table maximum: 1025, more than 1024/],
  ['two tables', () => wat(`(module (table 1 funcref) (table 1 funcref) ${ok})`, BASE_FEATURES | F.ReferenceTypes), /tables: 2, more than 1/],
  ['too many globals', () => wat(`(module ${times(MAX_GLOBALS + 1, (i) => `(global $g${i} i32 (i32.const 0))`)} ${ok})`), /globals: 129, more than 128/],
  ['too many exports', () => wat(`(module (func $f) ${times(MAX_EXPORTS, (i) => `(export "e${i}" (func $f))`)} ${ok})`), /exports: 129, more than 128/],
  ['too many data segments', () => wat(`(module (memory 1 1) ${times(MAX_DATA_SEGMENTS + 1, (i) => `(data (i32.const ${i}) "x")`)} ${ok})`), /data segments: 257, more than 256/],
  ['too many data bytes', () => wat(`(module (memory 2 2) (data (i32.const 0) "${'x'.repeat(MAX_DATA_BYTES + 1)}") ${ok})`), /data segment bytes: 65537, more than 65536/],
  ['a passive data segment', () => wat(`(module (memory 1 1) (data "x") ${ok})`), /data segments must be active/],
  ['too many element segments', () => wat(`(module (table 64 funcref) (func $f) ${times(MAX_ELEMENT_SEGMENTS + 1, (i) => `(elem (i32.const ${i}) $f)`)} ${ok})`), /element segments: 17, more than 16/],
  ['a passive element segment', () => wat(`(module (table 1 funcref) (func $f) (elem func $f) ${ok})`, BASE_FEATURES | F.ReferenceTypes), /element segments must be active/],
  ['a table import', () => wat(`(module (import "env" "table" (table 1 funcref)) ${ok})`), /table imports/],
  ['invalid bytes', () => new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 99]), /not a valid WebAssembly module/],
  ['an f64 operation', () => wat(`(module (func (export "run") (drop (f64.add (f64.const 1) (f64.const 2)))))`), /only i32 and i64/],
  ['an f32 local', () => wat(`(module (func (export "run") (local f32)))`), /local that is not i32 or i64/],
  ['an f32 param', () => wat(`(module ${ok} (func (export "g") (param f32)))`), /local that is not i32 or i64/],
  ['an f64 global', () => wat(`(module (global f64 (f64.const 0)) ${ok})`), /global .* not i32 or i64/],
  ['a float hidden in a conversion', () => wat(`(module (func (export "run") (drop (i32.trunc_f32_s (f32.const 1)))))`), /only i32 and i64/],
  ['SIMD', () => wat(`(module (func (export "run") (drop (v128.any_true (v128.const i32x4 0 0 0 0)))))`, BASE_FEATURES | F.SIMD128), /only i32 and i64|SIMD/],
  ['atomics', () => wat(`(module (memory 1 1 shared) (func (export "run") (drop (i32.atomic.load (i32.const 0)))))`, BASE_FEATURES | F.Atomics), /shared memory|atomics/],
  ['memory64', () => wat(`(module (memory i64 1 1) ${ok})`, BASE_FEATURES | F.Memory64), /memory64/],
  ['two memories', () => wat(`(module (memory 1 1) (memory 1 1) ${ok})`, BASE_FEATURES | F.MultiMemory), /multiple memories/],
  ['a start function', () => wat(`(module (func $s) (start $s) ${ok})`), /start function/],
  ['an import outside the host API', () => wat(`(module (import "kith" "random" (func (result i32))) ${ok})`), /not part of the host API/],
  ['a host import with the wrong signature', () => wat(`(module (import "kith" "balance" (func (result i32))) ${ok})`), /wrong signature/],
  ['a memory import', () => wat(`(module (import "env" "memory" (memory 1 1)) ${ok})`), /memory imports/],
  ['memory without a maximum', () => wat(`(module (memory 1) ${ok})`), /maximum of at most 16 pages/],
  ['memory maximum above 16 pages', () => wat(`(module (memory 1 17) ${ok})`), /maximum of at most 16 pages/],
  ['too many functions', () => wat(`(module ${ok} ${'(func)'.repeat(MAX_FUNCTIONS)})`), /more than 1024 functions/],
  ['an oversized module', () => wat(`(module (memory 1 1) (data (i32.const 0) "${'x'.repeat(MAX_MODULE_BYTES)}") ${ok})`), /bytes, more than/],
  ['no callable export', () => wat(`(module (func (export "f") (param i32)))`), /no callable export/],
  ['a reserved export name', () => wat(`(module ${ok} (func (export "kith_gas")))`), /reserved/]
]

for (const [name, makeVm] of VMS) {
  describe(`prepare (${name})`, () => {
    let vm: ContractVm
    before(async () => { vm = await makeVm() })
    after(async () => { await vm.close() })

    for (const [what, build, reason] of refusals) {
      test(`refuses ${what}`, () => {
        assert.throws(() => vm.prepare(build()), (err: unknown) => err instanceof KithError && err.code === 'CONTRACT_REFUSED' && reason.test(err.message))
      })
    }

    test('bills instantiation per call from what the module declares', () => {
      const module = wat(`(module (memory 3 16) (table 10 funcref) (func $f) (elem (i32.const 0) $f $f)
        (global $a (mut i32) (i32.const 0)) (global $b i64 (i64.const 0))
        (data (i32.const 0) "abcd") (data (i32.const 8) "ef") (export "f2" (func $f)) ${ok})`)
      const per = GAS.instantiation
      assert.equal(vm.prepare(module).callBaseGas, GAS.callBase + 3 * per.memoryPage + 10 * per.tableEntry + 2 * per.elementEntry +
        2 * per.global + 2 * per.export + 2 * per.dataSegment + 6 * per.dataByte)
      assert.equal(vm.prepare(wat(`(module ${ok})`)).callBaseGas, GAS.callBase + per.export)
    })

    test('is deterministic and lists the callable exports, sorted', () => {
      const module = wat(`(module ${IMPORTS} (memory 1 1) (func (export "zeta")) (func (export "alpha") (result i32) (i32.const 1)) (func (export "takes") (param i32)))`)
      const a = vm.prepare(module)
      const b = vm.prepare(Uint8Array.from(module))
      assert.deepEqual(a.code, b.code)
      assert.equal(a.codeHash, b.codeHash)
      assert.match(a.codeHash, /^[0-9a-f]{64}$/)
      assert.deepEqual(a.methods, ['alpha', 'zeta'])
    })

    test('instrumented code computes what the original does (returns inside loops, recursion, br_table)', () => {
      // fib(n) with an early return inside a loop, a recursive helper and a br_table
      const module = wat(`(module ${IMPORTS} (memory 1 1)
        (func $fib (param $n i32) (result i64) (local $a i64) (local $b i64) (local $t i64)
          (local.set $b (i64.const 1))
          (loop $l
            (if (i32.eqz (local.get $n)) (then (return (local.get $a))))
            (local.set $t (i64.add (local.get $a) (local.get $b)))
            (local.set $a (local.get $b)) (local.set $b (local.get $t))
            (local.set $n (i32.sub (local.get $n) (i32.const 1)))
            (br $l))
          (unreachable))
        (func $sum (param $n i32) (result i64)
          (if (result i64) (i32.eqz (local.get $n)) (then (i64.const 0))
            (else (i64.add (i64.extend_i32_u (local.get $n)) (call $sum (i32.sub (local.get $n) (i32.const 1)))))))
        (func $pick (param $k i32) (result i32)
          (block $c (block $b (block $a (br_table $a $b $c (local.get $k))) (return (i32.const 10))) (return (i32.const 20))) (i32.const 30))
        (func (export "run")
          (i64.store (i32.const 0) (call $fib (i32.const 50)))
          (i64.store (i32.const 8) (call $sum (i32.const 100)))
          (i32.store (i32.const 16) (i32.add (call $pick (i32.const 0)) (i32.add (call $pick (i32.const 1)) (call $pick (i32.const 7)))))
          (call $set_return (i32.const 0) (i32.const 20))))`)
      const out = invoke(vm, vm.prepare(module), new MapStorage(), 'run')
      assert.ok(out.ok)
      const view = Buffer.from(out.returnData)
      assert.equal(view.readBigUInt64LE(0), 12586269025n)
      assert.equal(view.readBigUInt64LE(8), 5050n)
      assert.equal(view.readUInt32LE(16), 60)
    })
  })
}
