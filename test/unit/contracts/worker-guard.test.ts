/** The worker VM's wall-clock guard: a slow call throws VmGuardError, and the next call runs on a fresh worker. */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { MAX_GAS_LIMIT, VmGuardError, createWorkerVm, type ContractVm } from '../../../src/contracts/vm/index.js'
import { IMPORTS, MapStorage, invoke, wat } from './helpers.js'

// Allowed but slow: each read of a new key crosses to the main thread and back (keys are three
// ASCII bytes spelling the loop counter in base 64).
const SLOW = wat(`(module ${IMPORTS} (memory 1 1)
  (func (export "slow") (local $i i32)
    (loop $l
      (i32.store8 (i32.const 0) (i32.add (i32.const 48) (i32.and (local.get $i) (i32.const 63))))
      (i32.store8 (i32.const 1) (i32.add (i32.const 48) (i32.and (i32.shr_u (local.get $i) (i32.const 6)) (i32.const 63))))
      (i32.store8 (i32.const 2) (i32.add (i32.const 48) (i32.and (i32.shr_u (local.get $i) (i32.const 12)) (i32.const 63))))
      (drop (call $storage_get (i32.const 0) (i32.const 3) (i32.const 8) (i32.const 8)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l)))
  (func (export "quick")))`)

let vm: ContractVm
before(async () => { vm = await createWorkerVm({ wallClockMs: 25 }) })
after(async () => { await vm.close() })

test('the guard trips on a slow call and the next call works', () => {
  const mod = vm.prepare(SLOW)
  assert.throws(() => invoke(vm, mod, new MapStorage(), 'slow', { gasLimit: MAX_GAS_LIMIT }), VmGuardError)
  const next = invoke(vm, mod, new MapStorage(), 'quick')
  assert.equal(next.ok, true)
})
