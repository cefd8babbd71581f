/**
 * Hostile contract deployers and callers against a real node over HTTP (issue 25, items 3, 7 and
 * 13): modules that would be costly to instantiate are refused at deploy naming the cap; a
 * refused module sent again is answered from the refusal cache; a sender whose deploys keep
 * being refused is turned away before validation; a module at the caps pays its instantiation at
 * every call while the chain keeps committing and /api/netstats answers; and a user's contract
 * can neither take a genesis contract's name nor wear the well-known badge.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { callContract, deployContract, newAccount, type Transaction } from '../../src/client/index.js'
import { contractIdFor } from '../../src/chain/index.js'
import { GAS, MAX_DATA_BYTES, MAX_GLOBALS, MAX_TABLE_ENTRIES } from '../../src/contracts/vm/index.js'
import { MAX_REFUSALS_PER_SENDER } from '../../src/contracts/index.js'
import { USERNAME_REGISTRY_ID } from '../../src/contracts/wellknown.js'
import { wat } from '../unit/contracts/helpers.js'
import { errorMessage, http, startNode, stopAllNodes, type NodeProcess } from '../helpers/node-process.js'

const T = 1_000_000
const ok = '(func (export "run"))'
const times = (n: number, item: (i: number) => string): string => Array.from({ length: n }, (_, i) => item(i)).join(' ')

interface CallResult { ok: boolean, gas_used: number, error?: string }
interface ContractInfo { contract_id: string, name: string, well_known: boolean, call_base_gas: number }

after(async () => { await stopAllNodes() })

describe('hostile contracts over HTTP', () => {
  let node: NodeProcess
  const mallory = newAccount()
  const trudy = newAccount()
  const alice = newAccount()

  before(async () => {
    node = await startNode({ chainId: 'kith-contracts-hostile', alloc: [mallory, trudy, alice].map((a) => ({ pub: a.pub, amountUt: 1000 * T })), blockIntervalMs: 150 })
  })

  async function get<R> (path: string): Promise<R> {
    const res = await http(node.url, 'GET', path)
    assert.equal(res.status, 200, `GET ${path}: ${res.status} ${res.text}`)
    return res.json as R
  }

  async function submit (tx: Transaction): Promise<{ status: number, error: string }> {
    const res = await http(node.url, 'POST', '/api/tx', { body: tx })
    return { status: res.status, error: res.status === 200 ? '' : errorMessage(res) }
  }

  async function confirm (tx: Transaction): Promise<Record<string, unknown>> {
    const res = await submit(tx)
    assert.equal(res.status, 200, `submit ${tx.id}: ${res.status} ${res.error}`)
    return await node.client.waitForConfirmation(tx.id, { timeoutMs: 20_000, intervalMs: 50 })
  }

  test('modules costly to instantiate are refused at deploy with 400 naming the cap', async () => {
    const cases: Array<[string, Uint8Array, RegExp]> = [
      ['a 10,000,000-entry table', wat(`(module (table 10000000 funcref) ${ok})`), /table entries: 10000000, more than 1024/],
      ['300 data segments', wat(`(module (memory 1 1) ${times(300, (i) => `(data (i32.const ${i}) "x")`)} ${ok})`), /data segments: 300, more than 256/],
      ['200 globals', wat(`(module ${times(200, (i) => `(global $g${i} i32 (i32.const 0))`)} ${ok})`), /globals: 200, more than 128/]
    ]
    for (const [what, wasm, cap] of cases) {
      const res = await submit(deployContract(mallory, wasm, 'bloat'))
      assert.equal(res.status, 400, what)
      assert.match(res.error, cap, what)
    }
    assert.ok((await get<{ height: number }>('/api/netstats')).height >= 0, 'the node still answers')
  })

  /** kith_contract_deploy_checks{result} from /metrics */
  async function deployChecks (result: string): Promise<number> {
    const res = await http(node.url, 'GET', '/metrics')
    assert.equal(res.status, 200, res.text)
    const line = res.text.split('\n').find((l) => l.startsWith(`kith_contract_deploy_checks{result="${result}"} `))
    assert.ok(line !== undefined, `kith_contract_deploy_checks{result="${result}"} in /metrics`)
    return Number(line.split(' ')[1])
  }

  test('a refused module sent again is answered from the refusal cache, without validating it again', async () => {
    const [refusedBefore, cachedBefore] = [await deployChecks('refused'), await deployChecks('refused_cached')]
    const wasm = wat(`(module (table ${MAX_TABLE_ENTRIES + 7} funcref) ${ok})`)
    const first = await submit(deployContract(alice, wasm, 'again', { version: '1' }))
    assert.equal(first.status, 400)
    assert.doesNotMatch(first.error, /refused before/)
    const second = await submit(deployContract(alice, wasm, 'again', { version: '2' }))
    assert.equal(second.status, 400)
    assert.match(second.error, /table entries: 1031, more than 1024 \(this code was refused before\)/)
    assert.deepEqual([await deployChecks('refused'), await deployChecks('refused_cached')], [refusedBefore + 1, cachedBefore + 1], 'validated once, answered once from the cache')
  })

  test(`a sender refused ${MAX_REFUSALS_PER_SENDER} times is turned away with 429 before validation; others are not`, async () => {
    for (let i = 0; i < MAX_REFUSALS_PER_SENDER; i++) {
      const res = await submit(deployContract(trudy, wat(`(module (table ${MAX_TABLE_ENTRIES + 100 + i} funcref) ${ok})`), 'refused'))
      assert.equal(res.status, 400, `refusal ${i}: ${res.error}`)
    }
    const limited = await submit(deployContract(trudy, wat(`(module ${ok})`), 'fine'))
    assert.equal(limited.status, 429, limited.error)
    assert.match(limited.error, /deploys from this sender were refused/)
    const other = await confirm(deployContract(alice, wat(`(module ${ok})`), 'fine'))
    assert.equal(typeof other.contract_id, 'string', 'another sender still deploys')
  })

  test('a module at the caps pays its instantiation at every call; blocks keep coming and /api/netstats answers meanwhile', async () => {
    const heavy = wat(`(module (memory 16 16) (table ${MAX_TABLE_ENTRIES} funcref) (func $f)
      (elem (i32.const 0) ${times(MAX_TABLE_ENTRIES, () => '$f')})
      ${times(MAX_GLOBALS - 1, (i) => `(global $g${i} (mut i64) (i64.const ${i}))`)}
      (data (i32.const 0) "${'x'.repeat(MAX_DATA_BYTES)}") ${ok})`)
    const deploy = deployContract(mallory, heavy, 'heavy')
    await confirm(deploy)
    const id = contractIdFor(deploy.id)
    const info = await get<ContractInfo>(`/api/contracts/${id}`)
    const per = GAS.instantiation
    assert.equal(info.call_base_gas, GAS.callBase + 16 * per.memoryPage + MAX_TABLE_ENTRIES * (per.tableEntry + per.elementEntry) +
      (MAX_GLOBALS - 1) * per.global + per.export + per.dataSegment + MAX_DATA_BYTES * per.dataByte)

    const start = (await get<{ height: number }>('/api/netstats')).height
    const calls = Array.from({ length: 30 }, () => callContract(mallory, id, 'run', [], { gasLimit: info.call_base_gas + 1000 }))
    for (const call of calls) assert.equal((await submit(call)).status, 200)
    // while the calls are being included, every read is answered (get asserts the 200)
    while ((await get<{ height: number }>('/api/netstats')).height < start + 2);
    const short = await confirm(callContract(mallory, id, 'run', [], { gasLimit: info.call_base_gas - 1 }))
    const shortResult = short.call_result as CallResult
    assert.deepEqual([shortResult.ok, shortResult.error, shortResult.gas_used], [false, 'out of gas', info.call_base_gas - 1], 'a call that cannot pay instantiation is never instantiated')
    for (const call of calls) {
      const detail = await node.client.waitForConfirmation(call.id, { timeoutMs: 20_000, intervalMs: 50 })
      const result = detail.call_result as CallResult
      assert.equal(result.ok, true, JSON.stringify(result))
      assert.ok(result.gas_used >= info.call_base_gas, 'the caller pays the instantiation')
    }
    assert.ok((await get<{ height: number }>('/api/netstats')).height > start + 2, 'the chain keeps committing')
  })

  test('a user contract cannot take the registry\'s name, and a user contract is never well-known', async () => {
    const lookalike = await submit(deployContract(mallory, wat(`(module ${ok})`), 'username_registry'))
    assert.equal(lookalike.status, 400)
    assert.match(lookalike.error, /belongs to a well-known contract deployed at genesis/)

    const deploy = deployContract(mallory, wat(`(module (func (export "owner_of")))`), 'username_registry_v2')
    await confirm(deploy)
    const known = await get<{ count: number, contracts: Record<string, { contract_id: string }> }>('/api/well-known-contracts')
    assert.deepEqual(Object.keys(known.contracts), ['username_registry'])
    assert.equal(known.contracts.username_registry?.contract_id, USERNAME_REGISTRY_ID)
    const list = await get<{ contracts: ContractInfo[] }>('/api/contracts?limit=200')
    for (const c of list.contracts) assert.equal(c.well_known, c.contract_id === USERNAME_REGISTRY_ID, c.name)
    assert.equal((await get<ContractInfo>(`/api/contracts/${contractIdFor(deploy.id)}`)).well_known, false)
  })
})
