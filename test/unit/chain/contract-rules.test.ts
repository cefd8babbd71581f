/**
 * DEPLOY_CONTRACT and CALL_CONTRACT in the state transition, with the real inline VM: the
 * registry at genesis, a call's writes and gas billing, rollback of a failed call, a contract
 * paying out more than it holds, the block gas bound (proposer defers, validator refuses), and
 * the same writes and state root from the inline and the worker VM.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import {
  COMPILE_GAS_PER_BYTE, ContractKeys, Contracts, GenesisSchema, MAX_BLOCK_GAS, nextGasPrice, StateKeys, checkStateless, contractIdFor, executeBlock, genesisState, selectBlockTxs,
  txRoot, type Block, type BlockContext, type CheckedTx, type MemoryState
} from '../../../src/chain/index.js'
import { callContract, deployContract, accountFrom } from '../../../src/client/index.js'
import { engineOver, genesisContracts, USERNAME_FEE_UT, USERNAME_REGISTRY_ID, type ContractEngine } from '../../../src/contracts/index.js'
import { createInlineVm, createWorkerVm } from '../../../src/contracts/vm/index.js'
import { aliceKey, bobKey, VALIDATOR } from '../../helpers/fixtures.js'
import { IMPORTS, wat } from '../contracts/helpers.js'

const alice = accountFrom(aliceKey)
const bob = accountFrom(bobKey)
const T0 = Date.parse('2026-03-01T00:00:00Z')

/** spin: loops until the gas runs out; pay: sends 1,000 µT to bob from the contract's balance. */
const SPENDER = wat(`(module ${IMPORTS}
  (memory (export "memory") 1 1)
  (data (i32.const 0) "${bob.pub}")
  (func (export "spin") (loop $l (br $l)))
  (func (export "pay") (call $transfer (i32.const 0) (i32.const 64) (i64.const 1000))))`)

/** `wasm` with a custom section of `bytes` appended: valid, ignored by the VM, counted as code size. */
function withCustomSection (wasm: Uint8Array, bytes: number): Uint8Array {
  const name = Buffer.from('pad')
  const body = Buffer.concat([Buffer.from([name.length]), name, Buffer.alloc(bytes)])
  const size: number[] = []
  for (let n = body.length; ; n >>>= 7) {
    if (n < 0x80) { size.push(n); break }
    size.push((n & 0x7f) | 0x80)
  }
  return Buffer.concat([wasm, Buffer.from([0, ...size]), body])
}

function chain (engine: ContractEngine): { state: MemoryState, root: string } {
  const genesis = GenesisSchema.parse({
    chain_id: 'kith-rules', genesis_time: '2026-03-01T00:00:00Z', validators: [{ pub_key: VALIDATOR, power: 1 }],
    alloc: [{ pub_key: alice.pub, amount_ut: 1_000_000_000 }, { pub_key: bob.pub, amount_ut: 1_000_000_000 }]
  })
  const { state, stateRoot } = genesisState(genesis, genesisContracts(engine))
  return { state, root: stateRoot }
}

function ctx (engine: ContractEngine, height = 1): BlockContext {
  return { height, time: T0 + height * 1000, proposer: VALIDATOR, params: { block_reward_ut: 0, max_block_txs: 100, gas_price: 1 }, contracts: engine }
}

/** Applies `txs` as one block on `state` and returns it with the included transactions. */
function block (engine: ContractEngine, state: MemoryState, root: string, txs: CheckedTx[], height = 1): { included: number, root: string } {
  const selection = selectBlockTxs(state, txs, ctx(engine, height), root)
  state.apply(selection.writes)
  return { included: selection.included.length, root: selection.stateRoot }
}

const checked = (tx: Parameters<typeof checkStateless>[0]): CheckedTx => checkStateless(tx)

describe('contract rules with the inline VM', () => {
  let engine: ContractEngine

  before(async () => { engine = engineOver(await createInlineVm()) })
  after(async () => { await engine.close() })

  test('genesis holds the registry as the well-known username_registry, and the gas price', () => {
    const { state } = chain(engine)
    assert.equal(Contracts.wellKnown(state, 'username_registry'), USERNAME_REGISTRY_ID)
    assert.ok(Contracts.get(state, USERNAME_REGISTRY_ID)?.methods.includes('register'))
    assert.equal(Contracts.gasPrice(state), 1)
  })

  test('no deploy can take a genesis contract\'s id, whatever its transaction id', () => {
    const { state, root } = chain(engine)
    const sneaky = deployContract(alice, SPENDER, 'username_registry', { id: 'genesis:username_registry', time: T0 })
    block(engine, state, root, [checked(sneaky)])
    assert.notEqual(contractIdFor(sneaky.id), USERNAME_REGISTRY_ID)
    assert.equal(Contracts.get(state, USERNAME_REGISTRY_ID)?.deployer, '', 'the registry is untouched')
    assert.equal(Contracts.wellKnown(state, 'username_registry'), USERNAME_REGISTRY_ID, 'and stays the well-known one')
  })

  test('a register call: storage written, amount to the contract, fee and gas to the proposer, the outcome recorded', () => {
    const { state, root } = chain(engine)
    const tx = callContract(alice, USERNAME_REGISTRY_ID, 'register', ['alice_01'], { amount: USERNAME_FEE_UT, time: T0 })
    assert.equal(block(engine, state, root, [checked(tx)]).included, 1)
    const record = Contracts.call(state, tx.id)
    assert.ok(record?.ok === true, JSON.stringify(record))
    assert.equal(Buffer.from(Contracts.storage(state, USERNAME_REGISTRY_ID, 'name:alice_01') ?? []).toString(), alice.pub)
    assert.equal(state.get(StateKeys.balance(USERNAME_REGISTRY_ID)), USERNAME_FEE_UT)
    assert.equal(state.get(StateKeys.balance(VALIDATOR)), 1000 + record.gas_cost_ut)
    assert.equal(state.get(StateKeys.balance(alice.pub)), 1_000_000_000 - USERNAME_FEE_UT - 1000 - record.gas_cost_ut)
  })

  test('a failed call keeps nothing but the fee and the gas; paying out more than the contract holds fails', () => {
    const { state, root } = chain(engine)
    const deploy = deployContract(alice, SPENDER, 'spender', { time: T0 })
    let r = block(engine, state, root, [checked(deploy)])
    const id = contractIdFor(deploy.id)
    const broke = callContract(bob, id, 'pay', [], { amount: 999, time: T0 })
    r = block(engine, state, r.root, [checked(broke)], 2)
    const failed = Contracts.call(state, broke.id)
    assert.equal(failed?.ok, false)
    assert.match(failed.error ?? '', /transfer exceeds contract balance/)
    assert.equal(state.get(StateKeys.balance(id)), undefined, 'the attached 999 µT went back')
    assert.equal(state.get(StateKeys.balance(bob.pub)), 1_000_000_000 - 1000 - failed.gas_cost_ut)
    const paid = callContract(bob, id, 'pay', [], { amount: 1000, time: T0 })
    block(engine, state, r.root, [checked(paid)], 3)
    assert.equal(Contracts.call(state, paid.id)?.ok, true)
    assert.equal(state.get(StateKeys.balance(id)), 0)
  })

  test(`a block's calls use at most ${MAX_BLOCK_GAS} gas: the proposer leaves the rest for the next block, a validator refuses a block over it`, () => {
    const { state, root } = chain(engine)
    const deploy = deployContract(alice, SPENDER, 'spender', { time: T0 })
    const first = block(engine, state, root, [checked(deploy)])
    const id = contractIdFor(deploy.id)
    // the first call also counts compiling the code
    const compiling = (Contracts.code(state, Contracts.get(state, id)?.code_hash ?? '')?.length ?? NaN) * COMPILE_GAS_PER_BYTE
    const fit = Math.floor((MAX_BLOCK_GAS - compiling) / 10_000_000)
    const spins = Array.from({ length: fit + 1 }, (_, i) => callContract(bob, id, 'spin', [], { gasLimit: 10_000_000, id: `spin-${i}`, time: T0 }))
    const selection = selectBlockTxs(state, spins.map(checked), ctx(engine, 2), first.root)
    assert.deepEqual(selection.included.map((tx) => tx.id), spins.slice(0, fit).map((tx) => tx.id), 'the last one waits')
    assert.deepEqual(selection.rejected, [], 'and is not dropped')
    assert.equal(selection.writes.get(ContractKeys.gasPrice), 2, 'a block over half the bound raises the gas price')
    const header = { chain_id: 'kith-rules', height: 2, time: T0 + 2000, prev_hash: 'p', tx_root: txRoot(spins), state_root: '', proposer: VALIDATOR, last_commit_hash: '' }
    const over: Block = { header, txs: spins, last_commit: null }
    assert.throws(() => executeBlock(state, over, { params: ctx(engine).params, chainId: 'kith-rules', prevHash: 'p', prevStateRoot: first.root, contracts: engine }),
      (err: Error & { code?: string }) => err.code === 'TX_BLOCK_FULL')
  })

  test('the live gas price: up by at most an eighth above half the block bound, back down to the genesis floor below it, capped', () => {
    const half = MAX_BLOCK_GAS / 2
    assert.equal(nextGasPrice(1, half, 1), 1, 'at the target it stays')
    assert.equal(nextGasPrice(1, half + 1, 1), 2, 'moving, it moves by at least 1')
    assert.equal(nextGasPrice(800, MAX_BLOCK_GAS, 1), 900, 'a full block: +1/8')
    assert.equal(nextGasPrice(800, 0, 1), 700, 'an empty block: -1/8')
    assert.equal(nextGasPrice(2, 0, 2), 2, 'never below the genesis price')
    assert.equal(nextGasPrice(5, 0, 0), 4)
    assert.equal(nextGasPrice(1_000_000_000, MAX_BLOCK_GAS, 1), 1_000_000_000, 'capped')
  })

  test('deploys count 700 gas per byte of code against the same bound: two of the largest fit in a block, the third waits', () => {
    const { state, root } = chain(engine)
    const big = withCustomSection(SPENDER, 120 * 1024)
    const deploys = [0, 1, 2].map((i) => deployContract(alice, big, `big${i}`, { id: `deploy-${i}`, time: T0 }))
    const selection = selectBlockTxs(state, deploys.map(checked), ctx(engine), root)
    assert.deepEqual(selection.included.map((tx) => tx.id), ['deploy-0', 'deploy-1'])
    assert.deepEqual(selection.rejected, [])
  })

  test(`the first call of each contract in a block counts ${COMPILE_GAS_PER_BYTE} gas per byte of its code against the bound, later calls of the same code nothing`, () => {
    const { state, root } = chain(engine)
    // 60 KB of data makes ~60 KB of stored code; each contract's differs, so each is its own code
    const contracts = Array.from({ length: 20 }, (_, i) => wat(`(module (memory 1 1) (data (i32.const 0) "${String.fromCharCode(65 + i).repeat(60_000)}") (func (export "noop")))`))
    let at = root
    let height = 1
    const ids: string[] = []
    for (let i = 0; i < contracts.length; i += 2) {
      const deploys = [i, i + 1].map((k) => deployContract(alice, contracts[k], `big${k}`, { id: `deploy-${k}`, time: T0 }))
      const made = block(engine, state, at, deploys.map(checked), height++)
      assert.equal(made.included, 2)
      at = made.root
      ids.push(...deploys.map((d) => contractIdFor(d.id)))
    }
    const codeBytes = Contracts.code(state, Contracts.get(state, ids[0])?.code_hash ?? '')?.length ?? NaN
    assert.ok(codeBytes > 60_000, `stored code is ${codeBytes} bytes`)
    // each first call: its compile, its instantiation (callBaseGas) and a few gas of code
    const fit = Math.floor(MAX_BLOCK_GAS / (codeBytes * COMPILE_GAS_PER_BYTE + (Contracts.get(state, ids[0])?.call_base_gas ?? NaN) + 100))
    assert.ok(fit < ids.length, 'the test needs more contracts than fit')
    const calls = ids.map((id, i) => callContract(bob, id, 'noop', [], { gasLimit: 100_000, id: `call-${i}`, time: T0 }))
    const selection = selectBlockTxs(state, calls.map(checked), ctx(engine, height), at)
    assert.deepEqual(selection.included.map((tx) => tx.id), calls.slice(0, fit).map((tx) => tx.id), 'the rest wait for the next block')
    assert.deepEqual(selection.rejected, [])
    const again = Array.from({ length: 60 }, (_, i) => callContract(bob, ids[0], 'noop', [], { gasLimit: 100_000, id: `again-${i}`, time: T0 }))
    assert.equal(selectBlockTxs(state, again.map(checked), ctx(engine, height), at).included.length, 60, 'one contract called 60 times compiles once')
  })

  test('the worker VM computes the same writes and state root as the inline VM', async () => {
    const worker = engineOver(await createWorkerVm())
    try {
      const txs = ['alice_01', 'Bob_2024', 'no'].map((name, i) => callContract(i === 1 ? bob : alice, USERNAME_REGISTRY_ID, 'register', [name], { amount: USERNAME_FEE_UT, id: `reg-${i}`, time: T0 }))
      const a = chain(engine)
      const b = chain(worker)
      assert.equal(a.root, b.root, 'one genesis')
      const ra = selectBlockTxs(a.state, txs.map(checked), ctx(engine), a.root)
      const rb = selectBlockTxs(b.state, txs.map(checked), ctx(worker), b.root)
      assert.equal(ra.stateRoot, rb.stateRoot)
      assert.deepEqual([...ra.writes.entries()], [...rb.writes.entries()])
      assert.deepEqual(ra.included.map((t) => t.id), ['reg-0', 'reg-1', 'reg-2'])
      assert.equal((ra.writes.get(ContractKeys.call('reg-2')) as { ok: boolean }).ok, false, 'a two-letter name is refused')
    } finally {
      await worker.close()
    }
  })
})
