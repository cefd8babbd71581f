/** Deploy admission in the engine: refusals cached by code hash, limits per sender, and block apply never reading the refusal cache. */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { KithError } from '../../../src/errors/index.js'
import { engineOver, MAX_DEPLOYS_VALIDATING, MAX_REFUSALS_PER_SENDER, REFUSAL_WINDOW_MS, type ContractEngine } from '../../../src/contracts/index.js'
import { createInlineVm, createWorkerVm } from '../../../src/contracts/vm/index.js'
import { usernameRegistryWasm } from '../../../src/contracts/wellknown.js'
import { wat } from './helpers.js'

const ok = '(func (export "run"))'
const refusedModule = (n: number): Uint8Array => wat(`(module (table ${2000 + n} funcref) ${ok})`)
const isCode = (code: string, message?: RegExp) => (err: unknown): boolean => err instanceof KithError && err.code === code && (message === undefined || message.test(err.message))

let clock = 1_000_000
let engine: ContractEngine
before(async () => { engine = engineOver(await createInlineVm(), { now: () => clock }) })
after(async () => { await engine.close() })

test('a refused module is validated once; sent again it is refused from the cache, and block apply recomputes the refusal', async () => {
  const wasm = refusedModule(0)
  await assert.rejects(engine.admitDeploy(wasm, 'alice'), isCode('CONTRACT_REFUSED', /table entries: 2000, more than 1024$/))
  const before = { ...engine.deployStats }
  await assert.rejects(engine.admitDeploy(wasm, 'bob'), isCode('CONTRACT_REFUSED', /table entries: 2000, more than 1024 \(this code was refused before\)/))
  assert.equal(engine.deployStats.refusedFromCache, before.refusedFromCache + 1)
  assert.equal(engine.deployStats.refused, before.refused, 'not validated again')
  // apply: the pure prepare's own answer, never the cache's
  assert.throws(() => engine.prepare(wasm), isCode('CONTRACT_REFUSED', /more than 1024$/))
})

test('an admitted module is what block apply gets', async () => {
  const wasm = wat(`(module (memory 1 1) ${ok})`)
  await engine.admitDeploy(wasm, 'carol')
  const fresh = await createInlineVm()
  assert.deepEqual(engine.prepare(wasm), fresh.prepare(wasm))
  await fresh.close()
})

test('one deploy per sender is validated at a time, and a few node-wide', async () => {
  const first = engine.admitDeploy(wat(`(module (memory 2 2) ${ok})`), 'dave')
  await assert.rejects(engine.admitDeploy(wat(`(module (memory 3 3) ${ok})`), 'dave'), isCode('CONTRACT_DEPLOY_BUSY', /from this sender/))
  await first
  const many = Array.from({ length: MAX_DEPLOYS_VALIDATING }, (_, i) => engine.admitDeploy(wat(`(module (memory ${i + 4} 16) ${ok})`), `sender-${i}`))
  await assert.rejects(engine.admitDeploy(wat(`(module (memory 1 16) ${ok})`), 'erin'), isCode('CONTRACT_DEPLOY_BUSY', /as many deploys/))
  await Promise.all(many)
})

test(`a sender refused ${MAX_REFUSALS_PER_SENDER} times is turned away until its refusals age out of the window`, async () => {
  for (let i = 1; i <= MAX_REFUSALS_PER_SENDER; i++) await assert.rejects(engine.admitDeploy(refusedModule(i), 'mallory'), isCode('CONTRACT_REFUSED'))
  const good = wat(`(module (global i32 (i32.const 9)) ${ok})`)
  await assert.rejects(engine.admitDeploy(good, 'mallory'), isCode('CONTRACT_DEPLOY_REFUSALS'))
  await engine.admitDeploy(good, 'someone-else')
  clock += REFUSAL_WINDOW_MS + 1
  await engine.admitDeploy(wat(`(module (global i32 (i32.const 10)) ${ok})`), 'mallory')
})

test('the worker VM\'s prepare worker gives what prepare on the caller\'s thread gives, refusals included', async () => {
  const vm = await createWorkerVm()
  try {
    const registry = usernameRegistryWasm()
    assert.deepEqual(await vm.prepareAsync(registry), vm.prepare(registry))
    await assert.rejects(vm.prepareAsync(refusedModule(99)), isCode('CONTRACT_REFUSED', /table entries: 2099, more than 1024$/))
  } finally {
    await vm.close()
  }
})
