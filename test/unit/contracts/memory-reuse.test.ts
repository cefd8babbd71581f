/**
 * Calls reuse memories (src/contracts/vm/memory-pool.ts): each call must still start on what a
 * fresh instance would hold, whatever the call before it wrote, grew or trapped on.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { ContractVm, PreparedModule } from '../../../src/contracts/vm/index.js'
import { importOwnMemory } from '../../../src/contracts/vm/sections.js'
import { IMPORTS, MapStorage, VMS, invoke, wat } from './helpers.js'

const u32 = (bytes: Uint8Array): number => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true)

// `peek` returns the word at 100 (data: 7) plus the memory size in pages * 1000, then scribbles
const MODULE = wat(`(module ${IMPORTS}
  (memory 1 4)
  (data (i32.const 100) "\\07\\00\\00\\00")
  (func (export "peek")
    (i32.store (i32.const 0) (i32.add (i32.load (i32.const 100)) (i32.mul (memory.size) (i32.const 1000))))
    (call $set_return (i32.const 0) (i32.const 4))
    (i32.store (i32.const 100) (i32.const 99))
    (memory.fill (i32.const 200) (i32.const 255) (i32.const 60000)))
  (func (export "scribble_and_trap")
    (i32.store (i32.const 100) (i32.const 55))
    (unreachable))
  (func (export "grow") (drop (memory.grow (i32.const 3))) (i32.store (i32.const 196608) (i32.const 1)))
  (func (export "far") (call $set_return (i32.const 60000) (i32.const 4))))`)

describe('the module rewrite', () => {
  test('a module with a memory and imports gets it as one more import, same limits, and still compiles', () => {
    const { code, memory } = importOwnMemory(MODULE)
    assert.deepEqual(memory, { initial: 1, maximum: 4 })
    const imports = WebAssembly.Module.imports(new WebAssembly.Module(code as Uint8Array<ArrayBuffer>))
    assert.deepEqual(imports.at(-1), { module: 'kith_vm', name: 'memory', kind: 'memory' })
    assert.equal(imports.length, 11)
  })

  test('a module without imports gets an import section; one without a memory is left as it is', () => {
    const lone = wat('(module (memory 2 2) (func (export "f") (drop (i32.load (i32.const 0)))))')
    const { code, memory } = importOwnMemory(lone)
    assert.deepEqual(memory, { initial: 2, maximum: 2 })
    assert.deepEqual(WebAssembly.Module.imports(new WebAssembly.Module(code as Uint8Array<ArrayBuffer>)), [{ module: 'kith_vm', name: 'memory', kind: 'memory' }])
    const noMemory = wat('(module (func (export "f")))')
    assert.equal(importOwnMemory(noMemory).code, noMemory)
  })
})

for (const [name, makeVm] of VMS) {
  describe(`memory reuse between calls (${name})`, () => {
    let vm: ContractVm
    let mod: PreparedModule
    before(async () => {
      vm = await makeVm()
      mod = vm.prepare(MODULE)
    })
    after(async () => { await vm.close() })

    const peek = (): number => {
      const out = invoke(vm, mod, new MapStorage(), 'peek')
      assert.ok(out.ok, JSON.stringify(out))
      return u32(out.returnData)
    }

    test('writes of one call are gone at the next: data segments again, zeros elsewhere', () => {
      assert.equal(peek(), 1007)
      assert.equal(peek(), 1007)
      const far = invoke(vm, mod, new MapStorage(), 'far')
      assert.ok(far.ok)
      assert.deepEqual([...far.returnData], [0, 0, 0, 0])
    })

    test('a call that trapped leaves nothing behind', () => {
      assert.equal(invoke(vm, mod, new MapStorage(), 'scribble_and_trap').ok, false)
      assert.equal(peek(), 1007)
    })

    test('a call that grew the memory leaves the next call its declared size', () => {
      assert.equal(invoke(vm, mod, new MapStorage(), 'grow').ok, true)
      assert.equal(peek(), 1007)
    })
  })
}
