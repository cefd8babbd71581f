/**
 * Contract VM fuzzing (issue 25): random valid modules (test/unit/contracts/fuzz-modules.ts) run
 * through the instrumented path (prepare + the VM, with gas) and the uninstrumented one (the
 * original module on a plain instance, the same host semantics) must give the same result, trap
 * and storage writes until gas runs out; with less gas, a call either equals the plain run or
 * ends out of gas having used exactly its limit. 60 modules here (a few seconds);
 * KITH_FUZZ_RUNS=<n> runs more and KITH_FUZZ_SEED=<n> starts elsewhere (the chaos run). A failure
 * names its seed and module. The time each gas unit costs is searched by bench/contracts-fuzz.ts.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { createInlineVm, MAX_GAS_LIMIT, type CallOutcome, type ContractVm, type PreparedModule } from '../../../src/contracts/vm/index.js'
import { MapStorage, invoke } from './helpers.js'
import { randomModule, rng, runPlain, type PlainOutcome } from './fuzz-modules.js'

const RUNS = Number(process.env.KITH_FUZZ_RUNS ?? 60)
const SEED = Number(process.env.KITH_FUZZ_SEED ?? 25)

let vm: ContractVm
before(async () => { vm = await createInlineVm() })
after(async () => { await vm.close() })

/** The VM's outcome in the plain run's terms. */
function comparable (out: CallOutcome): PlainOutcome | { ok: false, error: string } {
  if (!out.ok) return { ok: false, error: out.error }
  return { ok: true, writes: [...out.writes].map(([k, v]) => [k, Buffer.from(v ?? []).toString('hex')]), returnHex: Buffer.from(out.returnData).toString('hex') }
}

test(`instrumented and plain runs of ${RUNS} random modules agree until gas runs out (seeds ${SEED}..${SEED + RUNS - 1})`, (t) => {
  const tally = { ok: 0, trap: 0, outOfGas: 0 }
  for (let seed = SEED; seed < SEED + RUNS; seed++) {
    const { text, wasm } = randomModule(seed)
    const where = `seed ${seed} (KITH_FUZZ_SEED=${seed} KITH_FUZZ_RUNS=1):\n${text}`
    let prepared: PreparedModule
    try {
      prepared = vm.prepare(wasm)
    } catch (err) {
      assert.fail(`prepare refused a valid module, ${where}\n${(err as Error).message}`)
    }
    const plain = runPlain(wasm)
    // the largest gas limit, then less: the plain run's outcome, or out of gas at exactly the limit
    // (a module may need more than the largest limit: calls fan out, each with its own loops)
    const r = rng(seed)
    const limits = [MAX_GAS_LIMIT, ...Array.from({ length: 3 }, () => prepared.callBaseGas + Math.floor(r() * 20_000))]
    for (const limit of limits) {
      const out = invoke(vm, prepared, new MapStorage(), 'run', { gasLimit: limit })
      if (!out.ok && out.error === 'out of gas') {
        assert.equal(out.gasUsed, limit, where)
        tally.outOfGas++
      } else {
        assert.deepEqual(comparable(out), plain, `with gas limit ${limit}, ${where}`)
        assert.ok(out.gasUsed <= limit, where)
        if (plain.ok) tally.ok++
        else tally.trap++
      }
    }
  }
  t.diagnostic(`endings: ${JSON.stringify(tally)}`)
  // the generator must exercise all three endings, or the comparison proves little
  assert.ok(tally.ok > 0 && tally.trap > 0 && tally.outOfGas > 0, JSON.stringify(tally))
})
