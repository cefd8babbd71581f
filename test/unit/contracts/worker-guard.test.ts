/** The worker VM's wall-clock guard: a slow call throws VmGuardError, and the next call runs on a fresh worker. */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { MAX_GAS_LIMIT, VmGuardError, createWorkerVm, type ContractVm } from '../../../src/contracts/vm/index.js'
import { IMPORTS, MapStorage, invoke, wat } from './helpers.js'

// Allowed but slow: each storage read crosses to the main thread and back.
const SLOW = wat(`(module ${IMPORTS} (memory 1 1) (data (i32.const 0) "k")
  (func (export "slow") (loop $l (drop (call $storage_get (i32.const 0) (i32.const 1) (i32.const 8) (i32.const 8))) (br $l)))
  (func (export "quick")))`)

let vm: ContractVm
before(async () => { vm = await createWorkerVm({ wallClockMs: 5 }) })
after(async () => { await vm.close() })

test('the guard trips on a slow call and the next call works', () => {
  const mod = vm.prepare(SLOW)
  assert.throws(() => invoke(vm, mod, new MapStorage(), 'slow', { gasLimit: MAX_GAS_LIMIT }), VmGuardError)
  const next = invoke(vm, mod, new MapStorage(), 'quick')
  assert.equal(next.ok, true)
})
