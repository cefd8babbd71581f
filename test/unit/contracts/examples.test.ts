/** The example contracts do what contracts/examples says, in both VMs. */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import type { CallOutcome, ContractVm } from '../../../src/contracts/vm/index.js'
import { ALICE, BOB, MapStorage, VMS, invoke, text } from './helpers.js'

const built = (name: string): Uint8Array => readFileSync(new URL(`../../../../contracts/build/${name}.wasm`, import.meta.url))
const returned = (out: CallOutcome): string => out.ok ? text(out.returnData) : out.error

for (const [name, makeVm] of VMS) {
  describe(`example contracts (${name})`, () => {
    let vm: ContractVm
    before(async () => { vm = await makeVm() })
    after(async () => { await vm.close() })

    test('counter counts in a u64 stored little-endian', () => {
      const counter = vm.prepare(built('counter'))
      const s = new MapStorage()
      for (let i = 1; i <= 3; i++) assert.equal(returned(invoke(vm, counter, s, 'increment')), String(i))
      assert.equal(returned(invoke(vm, counter, s, 'get')), '3')
      assert.equal(Buffer.from(s.map.get('count') as Uint8Array).readBigUInt64LE(0), 3n)
    })

    test('token: the creator mints, holders transfer, anyone reads balances', () => {
      const token = vm.prepare(built('token'))
      const s = new MapStorage()
      const call = (method: string, args: unknown[], caller = ALICE): CallOutcome => invoke(vm, token, s, method, { argsJson: JSON.stringify(args), caller })
      assert.ok(call('init', []).ok)
      assert.match(returned(call('init', [], BOB)), /already initialised/)
      assert.match(returned(call('mint', [BOB, 5], BOB)), /only the creator/)
      const minted = call('mint', [ALICE, 100])
      assert.deepEqual(minted.ok && minted.logs.map(text), [`mint ${ALICE} 100`])
      assert.ok(call('transfer', [BOB, '30']).ok)
      assert.match(returned(call('transfer', [ALICE, 31], BOB)), /insufficient token balance/)
      assert.match(returned(call('transfer', [BOB, 1.5])), /not a u64/)
      assert.equal(returned(call('balance_of', [ALICE], BOB)), '70')
      assert.equal(returned(call('balance_of', [BOB])), '30')
    })
  })
}
