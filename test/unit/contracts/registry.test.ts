/** The username registry's rules, called through the VM with a Map-backed storage. */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { USERNAME_FEE_UT, usernameRegistryWasm } from '../../../src/contracts/wellknown.js'
import type { CallOutcome, ContractVm, PreparedModule } from '../../../src/contracts/vm/index.js'
import { ALICE, BOB, MapStorage, VMS, invoke, text } from './helpers.js'

const CAROL = 'c'.repeat(64)
const FEE = USERNAME_FEE_UT

for (const [name, makeVm] of VMS) {
  describe(`username registry (${name})`, () => {
    let vm: ContractVm
    let registry: PreparedModule
    before(async () => {
      vm = await makeVm()
      registry = vm.prepare(usernameRegistryWasm())
    })
    after(async () => { await vm.close() })

    const call = (storage: MapStorage, method: string, args: unknown[], caller: string, amount = 0): CallOutcome =>
      invoke(vm, registry, storage, method, { argsJson: JSON.stringify(args), caller, amount })
    const register = (storage: MapStorage, username: string, caller = ALICE, amount = FEE): CallOutcome => call(storage, 'register', [username], caller, amount)
    const error = (out: CallOutcome): string => out.ok ? 'ok' : out.error
    const stored = (storage: MapStorage): Record<string, string> =>
      Object.fromEntries([...storage.map].map(([k, v]) => [k, text(v)]))

    test('exposes its methods', () => {
      assert.deepEqual(registry.methods, ['name_of', 'owner_of', 'register', 'release', 'transfer'])
    })

    test('register stores both directions as plain text, folding ASCII case', () => {
      const s = new MapStorage()
      const out = register(s, 'Alice_01')
      assert.ok(out.ok)
      assert.deepEqual(stored(s), { 'name:alice_01': ALICE, ['addr:' + ALICE]: 'alice_01' })
      assert.deepEqual(out.logs.map(text), [`register alice_01 ${ALICE}`])
      const owner = call(s, 'owner_of', ['ALICE_01'], BOB)
      assert.equal(owner.ok && text(owner.returnData), ALICE)
      const named = call(s, 'name_of', [ALICE], BOB)
      assert.equal(named.ok && text(named.returnData), 'alice_01')
    })

    test('register needs exactly the fee attached', () => {
      const s = new MapStorage()
      for (const amount of [0, FEE - 1, FEE + 1]) assert.match(error(register(s, 'alice', ALICE, amount)), /abort: register needs exactly 10000/)
      assert.equal(s.map.size, 0)
    })

    test('names are 4 to 32 characters of a-z, 0-9 and _', () => {
      const s = new MapStorage()
      assert.match(error(register(s, 'abc')), /4 to 32 characters/)
      assert.match(error(register(s, 'a'.repeat(33))), /4 to 32 characters/)
      for (const bad of ['al ce', 'alice!', 'al-ce', 'alicé', 'ali.ce']) assert.match(error(register(s, bad)), /may only contain a-z, 0-9 and _/, bad)
      assert.ok(register(s, 'a'.repeat(32)).ok)
      assert.ok(register(s, '_0z9', BOB).ok)
      assert.match(error(call(s, 'register', [], CAROL, FEE)), /one argument/)
    })

    test('one owner per name, one name per address', () => {
      const s = new MapStorage()
      assert.ok(register(s, 'alice').ok)
      assert.match(error(register(s, 'ALICE', BOB)), /username is taken/)
      assert.match(error(register(s, 'alice2')), /already has a username/)
      assert.ok(register(s, 'bobby', BOB).ok)
    })

    test('release frees the name (no refund) and takes no payment or arguments', () => {
      const s = new MapStorage()
      assert.match(error(call(s, 'release', [], ALICE)), /has no username/)
      assert.ok(register(s, 'alice').ok)
      assert.match(error(call(s, 'release', [], ALICE, 5)), /no payment/)
      assert.match(error(call(s, 'release', ['alice'], ALICE)), /no arguments/)
      const out = call(s, 'release', [], ALICE)
      assert.ok(out.ok)
      assert.deepEqual(out.transfers, [])
      assert.deepEqual(stored(s), {})
      assert.ok(register(s, 'alice', BOB).ok)
    })

    test('transfer moves the name to a pubkey that has none', () => {
      const s = new MapStorage()
      assert.ok(register(s, 'alice').ok)
      assert.ok(register(s, 'bobby', BOB).ok)
      assert.match(error(call(s, 'transfer', [BOB], ALICE)), /new owner already has a username/)
      assert.match(error(call(s, 'transfer', ['C'.repeat(64)], ALICE)), /64 lowercase hex/)
      assert.match(error(call(s, 'transfer', [CAROL], CAROL)), /has no username/)
      assert.ok(call(s, 'transfer', [CAROL], ALICE).ok)
      assert.deepEqual(stored(s), { 'name:alice': CAROL, ['addr:' + CAROL]: 'alice', 'name:bobby': BOB, ['addr:' + BOB]: 'bobby' })
      assert.ok(register(s, 'alice2').ok) // the old owner may register again
    })
  })
}
