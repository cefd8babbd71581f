/** Calls: gas, caps and failures end as deterministic outcomes in both VMs, never a hang or a crash. */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { GAS, MAX_GAS_LIMIT, createInlineVm, createWorkerVm, type CallOutcome, type ContractVm, type PreparedModule } from '../../../src/contracts/vm/index.js'
import { ALICE, BOB, IMPORTS, MapStorage, VMS, invoke, text, wat } from './helpers.js'

const counterWasm = (): Uint8Array => readFileSync(new URL('../../../../contracts/build/counter.wasm', import.meta.url))

/** One module with a method per behaviour under test. */
const TEST_MODULE = wat(`(module ${IMPORTS}
  (memory 1 16)
  (data (i32.const 0) "key1")
  (data (i32.const 16) "${BOB}")
  (func (export "spin") (loop $l (br $l)))
  (func (export "write_then_spin")
    (call $storage_set (i32.const 0) (i32.const 4) (i32.const 0) (i32.const 4))
    (loop $l (br $l)))
  (func $rec (export "recurse") (call $rec))
  (func (export "grow_all")
    (loop $l (br_if $l (i32.ne (memory.grow (i32.const 1)) (i32.const -1)))))
  (func (export "fill_forever")
    (drop (memory.grow (i32.const 15)))
    (loop $l (memory.fill (i32.const 0) (i32.const 7) (i32.const 1048576)) (br $l)))
  (func (export "fill_out_of_bounds") (memory.fill (i32.const 0) (i32.const 7) (i32.const 1048576)))
  (func (export "huge_log") (call $emit_log (i32.const 0) (i32.const 1025)))
  (func (export "many_logs") (local $i i32)
    (loop $l (call $emit_log (i32.const 0) (i32.const 4))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 33)))))
  (func (export "pay")
    (call $transfer (i32.const 16) (i32.const 64) (i64.const 600))
    (i64.store (i32.const 200) (call $balance))
    (call $set_return (i32.const 200) (i32.const 8)))
  (func (export "pay_twice")
    (call $transfer (i32.const 16) (i32.const 64) (i64.const 600))
    (call $transfer (i32.const 16) (i32.const 64) (i64.const 600)))
  (func (export "pay_nobody") (call $transfer (i32.const 0) (i32.const 64) (i64.const 1)))
  (func (export "read_your_writes")
    ;; missing -> -1; set -> its length and bytes; delete -> -1 again
    (i32.store (i32.const 300) (call $storage_get (i32.const 0) (i32.const 4) (i32.const 400) (i32.const 16)))
    (call $storage_set (i32.const 0) (i32.const 4) (i32.const 16) (i32.const 8))
    (i32.store (i32.const 304) (call $storage_get (i32.const 0) (i32.const 4) (i32.const 400) (i32.const 16)))
    (call $storage_delete (i32.const 0) (i32.const 4))
    (i32.store (i32.const 308) (call $storage_get (i32.const 0) (i32.const 4) (i32.const 400) (i32.const 16)))
    (call $storage_set (i32.const 0) (i32.const 4) (i32.const 16) (i32.const 3))
    (call $set_return (i32.const 300) (i32.const 108)))
  (func (export "read_committed")
    (i32.store (i32.const 300) (call $storage_get (i32.const 0) (i32.const 4) (i32.const 304) (i32.const 16)))
    (call $set_return (i32.const 300) (i32.const 20)))
  (func (export "bad_pointer") (call $emit_log (i32.const 1048000) (i32.const 1000)))
  (func (export "args") (local $n i32) (local $i i32) (local $at i32)
    (local.set $n (call $arg_count)) (local.set $at (i32.const 500))
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (call $arg_read (local.get $i) (local.get $at))
      (local.set $at (i32.add (local.get $at) (call $arg_len (local.get $i))))
      (i32.store8 (local.get $at) (i32.const 124))
      (local.set $at (i32.add (local.get $at) (i32.const 1)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l)))
    (call $set_return (i32.const 500) (i32.sub (local.get $at) (i32.const 500))))
  (func (export "trap") (drop (i32.div_u (i32.const 1) (i32.const 0))))
)`)

/** Outcomes as plain data, to compare across VMs. */
const plain = (o: CallOutcome): unknown => o.ok ? { ...o, writes: [...o.writes], logs: o.logs.map(text), returnData: [...o.returnData] } : o

for (const [name, makeVm] of VMS) {
  describe(`contract calls (${name})`, () => {
    let vm: ContractVm
    let mod: PreparedModule
    before(async () => {
      vm = await makeVm()
      mod = vm.prepare(TEST_MODULE)
    })
    after(async () => { await vm.close() })
    const run = (method: string, over = {}, storage = new MapStorage()): CallOutcome => invoke(vm, mod, storage, method, over)

    test('the same call uses the same gas every time', () => {
      const counter = vm.prepare(counterWasm())
      const runs = Array.from({ length: 3 }, () => invoke(vm, counter, new MapStorage(), 'increment'))
      for (const r of runs) assert.deepEqual(plain(r), plain(runs[0]))
      assert.ok(runs[0].ok)
      assert.deepEqual([...runs[0].writes.get('count') ?? []], [1, 0, 0, 0, 0, 0, 0, 0])
      assert.equal(text(runs[0].returnData), '1')
    })

    test('out of gas: gasUsed is the limit and nothing is written', () => {
      const out = run('write_then_spin', { gasLimit: 50_000 })
      assert.deepEqual(out, { ok: false, gasUsed: 50_000, error: 'out of gas' })
      assert.deepEqual(run('spin', { gasLimit: mod.callBaseGas - 1 }), { ok: false, gasUsed: mod.callBaseGas - 1, error: 'out of gas' })
    })

    test('an infinite loop stops at the largest gas limit', () => {
      const started = performance.now()
      assert.deepEqual(run('spin', { gasLimit: MAX_GAS_LIMIT }), { ok: false, gasUsed: MAX_GAS_LIMIT, error: 'out of gas' })
      assert.ok(performance.now() - started < 1500)
    })

    test('deep recursion ends at the depth cap', () => {
      const out = run('recurse', { gasLimit: MAX_GAS_LIMIT })
      assert.equal(out.ok, false)
      assert.equal(!out.ok && out.error, 'call depth exceeded')
    })

    test('memory: growth stops at the declared maximum and is charged per page; a fill bomb runs out of gas', () => {
      const grown = run('grow_all')
      assert.ok(grown.ok)
      assert.ok(grown.gasUsed > mod.callBaseGas + 15 * GAS.memoryGrowPage)
      assert.deepEqual(run('fill_forever', { gasLimit: MAX_GAS_LIMIT }), { ok: false, gasUsed: MAX_GAS_LIMIT, error: 'out of gas' })
      const oob = run('fill_out_of_bounds')
      assert.equal(!oob.ok && oob.error, 'trap')
    })

    test('logs: one over MAX_LOG_BYTES, or more than MAX_LOGS, fail the call', () => {
      assert.equal((run('huge_log') as { error: string }).error, 'log too large')
      assert.equal((run('many_logs') as { error: string }).error, 'too many logs')
    })

    test('transfers: recorded while the balance lasts; beyond it, or to a bad recipient, the call fails', () => {
      const paid = run('pay', { amount: 0, balance: 1000 })
      assert.ok(paid.ok)
      assert.deepEqual(paid.transfers, [{ to: BOB, amount: 600 }])
      assert.equal(Buffer.from(paid.returnData).readBigUInt64LE(0), 400n) // balance() after the transfer
      const twice = run('pay_twice', { balance: 1000 })
      assert.equal(!twice.ok && twice.error, 'transfer exceeds contract balance')
      assert.equal((run('pay_nobody', { balance: 1000 }) as { error: string }).error, 'invalid transfer recipient')
    })

    test('storage: a call reads its own writes; reads that miss them see committed storage', () => {
      const storage = new MapStorage()
      const out = run('read_your_writes', {}, storage)
      assert.ok(out.ok)
      const r = Buffer.from(out.returnData)
      assert.deepEqual([r.readInt32LE(0), r.readInt32LE(4), r.readInt32LE(8)], [-1, 8, -1])
      assert.equal(r.subarray(100, 108).toString(), BOB.slice(0, 8))
      assert.deepEqual([...out.writes.keys()], ['key1'])
      assert.equal(text(storage.map.get('key1') as Uint8Array), 'bbb')
      const seen = run('read_committed', {}, storage)
      assert.ok(seen.ok)
      assert.equal(Buffer.from(seen.returnData).readInt32LE(0), 3)
      assert.equal(Buffer.from(seen.returnData).subarray(4, 7).toString(), 'bbb')
    })

    test('failures are fixed categories', () => {
      assert.equal((run('bad_pointer') as { error: string }).error, 'memory access out of bounds')
      assert.equal((run('trap') as { error: string }).error, 'trap')
      assert.deepEqual(run('nope'), { ok: false, gasUsed: mod.callBaseGas, error: 'method not found: nope' })
      assert.deepEqual(run('kith_gas'), { ok: false, gasUsed: mod.callBaseGas, error: 'method not found: kith_gas' })
    })

    test('arguments: strings as their text, anything else as JSON', () => {
      const out = run('args', { argsJson: JSON.stringify(['alice', 42, { a: [1, 'x'] }, null, 'ü']) })
      assert.ok(out.ok)
      assert.equal(text(out.returnData), 'alice|42|{"a":[1,"x"]}|null|ü|')
    })
  })
}

describe('inline and worker VMs agree byte for byte', () => {
  let inline: ContractVm
  let worker: ContractVm
  before(async () => { [inline, worker] = await Promise.all([createInlineVm(), createWorkerVm()]) })
  after(async () => { await Promise.all([inline.close(), worker.close()]) })

  test('the same calls give the same outcomes and code', () => {
    const a = inline.prepare(TEST_MODULE)
    const b = worker.prepare(TEST_MODULE)
    assert.deepEqual(a, b)
    const methods = ['read_your_writes', 'pay', 'spin', 'recurse', 'grow_all', 'huge_log', 'args', 'trap', 'nope']
    for (const method of methods) {
      const over = { balance: 1000, argsJson: '["x", 1]', gasLimit: 300_000 }
      assert.deepEqual(plain(invoke(worker, b, new MapStorage(), method, over)), plain(invoke(inline, a, new MapStorage(), method, over)), method)
    }
    const counterA = inline.prepare(counterWasm())
    const sa = new MapStorage()
    const sb = new MapStorage()
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(plain(invoke(worker, counterA, sb, 'increment', { caller: ALICE })), plain(invoke(inline, counterA, sa, 'increment', { caller: ALICE })))
    }
  })
})
