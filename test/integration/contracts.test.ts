/**
 * Contracts through the HTTP interface of a real node: the username registry deployed at genesis
 * (each of its rules), state reads in every format, DEPLOY_CONTRACT and CALL_CONTRACT of the
 * example counter, gas_used in the transaction detail, failed calls that charge only fee and gas,
 * logs, and the 4xx answers for calls that cannot be decided.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { callContract, deployContract, newAccount, type Account, type Transaction } from '../../src/client/index.js'
import { contractIdFor } from '../../src/chain/index.js'
import { USERNAME_REGISTRY_ID } from '../../src/contracts/wellknown.js'
import { IMPORTS, wat } from '../unit/contracts/helpers.js'
import { errorMessage, http, REPO_ROOT, startNode, stopAllNodes, type NodeProcess } from '../helpers/node-process.js'

const T = 1_000_000
const FEE = 10_000

interface StateValue { contract_id: string, key: string, value_b64: string | null, value_hex: string | null, value_u64?: number }
interface CallResult { ok: boolean, gas_used: number, gas_cost_ut: number, error?: string }

after(async () => { await stopAllNodes() })

describe('contracts over HTTP', () => {
  let node: NodeProcess
  const alice = newAccount()
  const bob = newAccount()
  const carol = newAccount()
  const dave = newAccount()

  before(async () => {
    node = await startNode({ chainId: 'kith-contracts-test', alloc: [alice, bob, carol, dave].map((a) => ({ pub: a.pub, amountUt: 1000 * T })), blockIntervalMs: 150 })
  })

  async function get<R> (path: string): Promise<R> {
    const res = await http(node.url, 'GET', path)
    assert.equal(res.status, 200, `GET ${path}: ${res.status} ${res.text}`)
    return res.json as R
  }

  async function confirm (tx: Transaction): Promise<Record<string, unknown>> {
    const res = await http(node.url, 'POST', '/api/tx', { body: tx })
    assert.equal(res.status, 200, `submit ${tx.id}: ${res.status} ${res.text}`)
    return await node.client.waitForConfirmation(tx.id, { timeoutMs: 20_000, intervalMs: 50 })
  }

  async function register (who: Account, name: string, amount = FEE): Promise<CallResult> {
    const detail = await confirm(callContract(who, USERNAME_REGISTRY_ID, 'register', [name], { amount }))
    assert.equal(typeof detail.gas_used, 'number')
    const result = detail.call_result as CallResult
    assert.equal(result.gas_used, detail.gas_used)
    return result
  }

  async function registryValue (key: string): Promise<StateValue> {
    return await get<StateValue>(`/api/contracts/${USERNAME_REGISTRY_ID}/state/${encodeURIComponent(key)}`)
  }

  async function text (key: string): Promise<string | null> {
    const value = await registryValue(key)
    return value.value_b64 === null ? null : Buffer.from(value.value_b64, 'base64').toString('utf8')
  }

  async function balance (who: Account): Promise<number> {
    return (await get<{ balance_ut: number }>(`/api/address/${who.pub}`)).balance_ut
  }

  test('the username registry is well known from genesis, in network-info too', async () => {
    const known = await get<{ count: number, contracts: Record<string, { contract_id: string, name: string, version?: string, deployed_at: number }> }>('/api/well-known-contracts')
    assert.equal(known.count, 1)
    const registry = known.contracts.username_registry
    assert.equal(registry?.contract_id, USERNAME_REGISTRY_ID)
    assert.equal(registry.name, 'username_registry')
    assert.equal(typeof registry.deployed_at, 'number')
    const info = await get<{ contracts: Record<string, unknown>, gas_price: number }>('/api/network-info')
    assert.deepEqual(info.contracts, known.contracts)
    assert.equal(info.gas_price, 1)
    const contract = await get<{ methods: string[], well_known: boolean, deployer: string }>(`/api/contracts/${USERNAME_REGISTRY_ID}`)
    assert.ok(contract.methods.includes('register'), contract.methods.join(','))
    assert.equal(contract.well_known, true)
    assert.equal(contract.deployer, '')
  })

  test('alice registers alice_01 with exactly 10,000 µT: both keys readable as text', async () => {
    const before = await balance(alice)
    const result = await register(alice, 'alice_01')
    assert.equal(result.ok, true, result.error)
    assert.ok(result.gas_used > 0)
    assert.equal(await balance(alice), before - FEE - 1000 - result.gas_cost_ut, 'attached amount, fee and gas')
    const name = await registryValue('name:alice_01')
    assert.equal(name.value_b64, Buffer.from(alice.pub).toString('base64'))
    assert.equal(name.value_hex, Buffer.from(alice.pub, 'utf8').toString('hex'), 'value_hex is the hex of the UTF-8 text')
    assert.equal(await text(`addr:${alice.pub}`), 'alice_01')
    const registry = await get<{ balance_ut: number }>(`/api/contracts/${USERNAME_REGISTRY_ID}`)
    assert.ok(registry.balance_ut >= FEE)
  })

  test('a missing key answers 200 with null values', async () => {
    const missing = await registryValue('name:nobody_here')
    assert.deepEqual(missing, { contract_id: USERNAME_REGISTRY_ID, key: 'name:nobody_here', value_b64: null, value_hex: null })
  })

  test('the registry refuses a wrong amount, bad names, a taken name and a second name; failed calls charge only fee and gas', async () => {
    const before = await balance(bob)
    const wrong = await register(bob, 'bob_name', FEE - 1)
    assert.equal(wrong.ok, false)
    assert.equal(await balance(bob), before - 1000 - wrong.gas_cost_ut, 'the attached amount came back')
    assert.equal(await text('name:bob_name'), null)
    for (const bad of ['abc', 'x'.repeat(33), 'bad-name', 'émile_1', 'with space']) {
      assert.equal((await register(bob, bad)).ok, false, `"${bad}" refused`)
    }
    assert.equal((await register(bob, 'alice_01')).ok, false, 'one owner per name')
    assert.equal((await register(alice, 'alice_02')).ok, false, 'one name per address')
    assert.equal(await text('name:alice_02'), null)
    assert.equal((await register(bob, 'x'.repeat(32))).ok, true, '32 characters is the longest')
  })

  test('uppercase is folded: Carol_Smith registers carol_smith, and CAROL_SMITH is then taken', async () => {
    assert.equal((await register(carol, 'Carol_Smith')).ok, true)
    assert.equal(await text('name:carol_smith'), carol.pub)
    assert.equal(await text(`addr:${carol.pub}`), 'carol_smith')
    assert.equal((await register(dave, 'CAROL_SMITH')).ok, false)
  })

  test('release frees the name; transfer hands it to a key without one', async () => {
    const released = await confirm(callContract(carol, USERNAME_REGISTRY_ID, 'release'))
    assert.equal((released.call_result as CallResult).ok, true)
    assert.equal(await text('name:carol_smith'), null)
    assert.equal(await text(`addr:${carol.pub}`), null)
    assert.equal((await register(dave, 'carol_smith')).ok, true, 'a released name can be taken again')
    const moved = await confirm(callContract(dave, USERNAME_REGISTRY_ID, 'transfer', [carol.pub]))
    assert.equal((moved.call_result as CallResult).ok, true)
    assert.equal(await text('name:carol_smith'), carol.pub)
    assert.equal(await text(`addr:${carol.pub}`), 'carol_smith')
    assert.equal(await text(`addr:${dave.pub}`), null)
  })

  test('out of gas: the call fails, gas_used is the limit, the state is unchanged', async () => {
    const detail = await confirm(callContract(dave, USERNAME_REGISTRY_ID, 'register', ['dave_oog'], { amount: FEE, gasLimit: 50 }))
    const result = detail.call_result as CallResult
    assert.equal(result.ok, false)
    assert.equal(result.error, 'out of gas')
    assert.equal(detail.gas_used, 50)
    assert.equal(await text('name:dave_oog'), null)
  })

  test('calls that cannot be decided get a 400 that says why, and the node keeps serving', async () => {
    const cases: Array<[Transaction, RegExp]> = [
      [callContract(alice, contractIdFor('nothing'), 'register', ['x']), /unknown contract/],
      [callContract(alice, USERNAME_REGISTRY_ID, 'no_such_method'), /no method no_such_method/],
      [callContract(alice, USERNAME_REGISTRY_ID, 'register', [], { gasLimit: 10_000_001 }), /gas_limit/],
      [callContract(newAccount(), USERNAME_REGISTRY_ID, 'register', ['poor_one'], { amount: FEE }), /insufficient funds/]
    ]
    for (const [tx, mentions] of cases) {
      const res = await http(node.url, 'POST', '/api/tx', { body: tx })
      assert.equal(res.status, 400, `${tx.id}: ${res.text}`)
      assert.match(errorMessage(res), mentions)
    }
    const notArray = callContract(alice, USERNAME_REGISTRY_ID, 'register')
    const res = await http(node.url, 'GET', `/api/contracts/${'z'.repeat(40)}`)
    assert.equal(res.status, 400)
    assert.equal((await http(node.url, 'GET', `/api/contracts/${contractIdFor('nothing')}`)).status, 404)
    assert.equal((await http(node.url, 'GET', `/api/contracts/${contractIdFor('nothing')}/state/k`)).status, 404)
    assert.equal((await http(node.url, 'POST', '/api/tx', { body: notArray })).status, 200, 'no args is fine at submission')
  })

  async function deploy (code: string | Uint8Array, name: string, version: string): Promise<string> {
    const wasm = typeof code === 'string' ? await readFile(join(REPO_ROOT, 'contracts', 'build', code)) : code
    const tx = deployContract(alice, wasm, name, { version })
    const detail = await confirm(tx)
    assert.equal(detail.contract_id, contractIdFor(tx.id), 'the deploy\'s detail names the contract it created')
    return contractIdFor(tx.id)
  }

  test('a developer deploys the example counter, calls it and reads value_u64 and its info', async () => {
    const id = await deploy('counter.wasm', 'counter', '1.0.0')
    const info = await get<{ name: string, version: string, deployer: string, methods: string[], well_known: boolean, code_size: number, call_base_gas: number }>(`/api/contracts/${id}`)
    assert.equal(info.name, 'counter')
    assert.equal(info.version, '1.0.0')
    assert.equal(info.deployer, alice.pub)
    assert.deepEqual(info.methods, ['get', 'increment'])
    assert.equal(info.well_known, false, 'only contracts deployed at genesis are well-known')
    assert.ok(info.call_base_gas > 10_000, 'each call pays for instantiating its memory, globals, exports and data')
    for (let i = 1; i <= 2; i++) {
      const detail = await confirm(callContract(bob, id, 'increment'))
      const result = detail.call_result as CallResult & { return_b64?: string }
      assert.equal(result.ok, true, JSON.stringify(result))
      assert.equal(Buffer.from(result.return_b64 ?? '', 'base64').toString(), String(i), 'increment returns the new count')
    }
    const value = await get<StateValue>(`/api/contracts/${id}/state/count`)
    assert.equal(value.value_u64, 2)
    assert.equal(value.value_hex, '0200000000000000')
    const list = await get<{ total: number, contracts: Array<{ contract_id: string }> }>('/api/contracts?limit=1')
    assert.equal(list.total, 2)
    assert.equal(list.contracts[0]?.contract_id, id, 'newest first')
  })

  test('the example token: its logs are paged newest first, and a failed transfer leaves no log', async () => {
    const id = await deploy('token.wasm', 'token', '0.1.0')
    for (const [who, method, args] of [[alice, 'init', []], [alice, 'mint', [bob.pub, 500]], [bob, 'transfer', [carol.pub, 200]]] as Array<[Account, string, unknown[]]>) {
      const detail = await confirm(callContract(who, id, method, args))
      assert.equal((detail.call_result as CallResult).ok, true, `${method}: ${JSON.stringify(detail.call_result)}`)
    }
    const refused = await confirm(callContract(carol, id, 'transfer', [dave.pub, 201]))
    assert.equal((refused.call_result as CallResult).ok, false, 'more than carol holds')
    const balanceOf = async (who: Account): Promise<number | undefined> => (await get<StateValue>(`/api/contracts/${id}/state/bal:${who.pub}`)).value_u64
    assert.deepEqual([await balanceOf(bob), await balanceOf(carol), await balanceOf(dave)], [300, 200, undefined])
    const logs = await get<{ total: number, logs: Array<{ seq: number, text?: string }>, next_cursor: number | null }>(`/api/contracts/${id}/logs?limit=2`)
    assert.equal(logs.total, 3)
    assert.deepEqual(logs.logs.map((l) => l.seq), [3, 2])
    assert.equal(logs.logs[0]?.text, `transfer ${bob.pub} ${carol.pub} 200`)
    assert.equal(logs.next_cursor, 2)
    const older = await get<{ logs: Array<{ seq: number, text?: string }>, next_cursor: number | null }>(`/api/contracts/${id}/logs?limit=2&before=2`)
    assert.deepEqual(older.logs.map((l) => l.text), [`init ${alice.pub}`])
    assert.equal(older.next_cursor, null)
  })

  test('an infinite loop, a deep recursion, a memory bomb and a huge log end as failed calls; the node keeps committing', async () => {
    const hostile = wat(`(module ${IMPORTS}
      (memory (export "memory") 1 1)
      (func (export "spin") (loop $l (br $l)))
      (func $recurse (export "recurse") (call $recurse))
      (func (export "bomb") (loop $l (memory.fill (i32.const 0) (i32.const 0) (i32.const 65536)) (drop (memory.grow (i32.const 1))) (br $l)))
      (func (export "shout") (call $emit_log (i32.const 0) (i32.const 60000))))`)
    const id = await deploy(hostile, 'hostile', '0')
    const expected: Record<string, string> = { spin: 'out of gas', recurse: 'call depth exceeded', bomb: 'out of gas', shout: 'log too large' }
    for (const [method, error] of Object.entries(expected)) {
      const detail = await confirm(callContract(dave, id, method, [], { gasLimit: 10_000_000 }))
      const result = detail.call_result as CallResult
      assert.deepEqual([result.ok, result.error], [false, error], method)
      assert.ok(result.gas_used <= 10_000_000)
    }
    const before = (await get<{ height: number }>('/api/netstats')).height
    const after = await confirm(callContract(alice, USERNAME_REGISTRY_ID, 'owner_of', ['alice_01']))
    assert.ok((after.block_index as number) > before, 'blocks keep coming')
  })

  test('a module using floats is refused at submission', async () => {
    const res = await http(node.url, 'POST', '/api/tx', { body: deployContract(alice, FLOAT_MODULE, 'floaty') })
    assert.equal(res.status, 400, res.text)
    assert.match(errorMessage(res), /float/i)
  })
})

/** (module (memory (export "memory") 1 1) (func (export "f") (drop (f64.add (f64.const 1.5) (f64.const 2.5))))): NaN bit patterns make floats non-deterministic. */
const FLOAT_MODULE = Buffer.from('0061736d0100000001040160000003020100050401010101070e02066d656d6f72790200016600000a1801160044000000000000f83f440000000000000440a01a0b', 'hex')
