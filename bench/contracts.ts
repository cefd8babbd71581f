/**
 * Contracts benchmark, on a node: username registrations confirmed per second on one real node
 * (a `bin/kith start` child process). Every registration is a CALL_CONTRACT of the registry's
 * `register` by its own funded account (10,000 µT attached), signed before the timed phase and
 * posted by C keep-alive clients; the rate is confirmed calls over the time from the first post
 * until the last one is in a block. A sample is read back to check the calls succeeded.
 * Beside it, the same node's rate for plain TRANSFERs over the same window shape, so the cost of
 * running the VM shows against the chain's own per-transaction cost.
 *
 * Run alone: node dist/bench/contracts.js [--quick]. The VM alone (metering overhead) is bench/contracts-vm.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { accountFrom, callContract, transfer } from '../src/client/index.js'
import { USERNAME_FEE_UT, USERNAME_REGISTRY_ID } from '../src/contracts/index.js'
import { generateKeyPair } from '../src/crypto/index.js'
import { request, sleep } from './lib/harness.js'
import { closedLoop } from './lib/load.js'
import { kithInit, startKith } from './lib/processes.js'

export interface RegistryBenchConfig {
  calls: number
  concurrency: number
}

export const DEFAULT_REGISTRY_CONFIG: RegistryBenchConfig = { calls: 12000, concurrency: 64 }
export const QUICK_REGISTRY_CONFIG: RegistryBenchConfig = { calls: 500, concurrency: 32 }

export interface RateResult {
  kind: string
  calls: number
  accepted: number
  confirmed: number
  seconds: number
  perSecond: number
  /** of a sample read back: calls whose call_result is ok (registrations only) */
  sampledOk?: string
}

const log = (line: string): void => { console.error(line) }

async function netstats (agent: http.Agent, port: number): Promise<{ total_txs: number, height: number }> {
  const res = await request(agent, port, 'GET', '/api/netstats')
  return JSON.parse(res.body) as { total_txs: number, height: number }
}

async function runOnce (kind: 'register' | 'transfer', cfg: RegistryBenchConfig): Promise<RateResult> {
  const accounts = Array.from({ length: cfg.calls }, () => accountFrom(generateKeyPair()))
  const time = Date.now() + 60_000
  const bodies = accounts.map((a, i) => Buffer.from(JSON.stringify(kind === 'register'
    ? callContract(a, USERNAME_REGISTRY_ID, 'register', [`user_${String(i).padStart(6, '0')}`], { amount: USERNAME_FEE_UT, id: `reg-${i}`, time })
    : transfer(a, accounts[(i + 1) % accounts.length].pub, 1, { id: `xfer-${i}`, time }))))
  const home = mkdtempSync(path.join(os.tmpdir(), 'kith-bench-contracts-'))
  try {
    await kithInit(home, ['--chain-id', 'bench-contracts', ...accounts.flatMap((a) => ['--alloc', `${a.pub}=1000000000`])])
    const node = await startKith({ home, log, env: { SVC_RATE_LIMIT_RPS: '0' } })
    const agent = new http.Agent({ keepAlive: true })
    try {
      const base = (await netstats(agent, node.port)).total_txs
      // refused posts (503 while the node is busy) are posted again until every one is accepted
      const ids = bodies.map((b) => (JSON.parse(b.toString()) as { id: string }).id)
      const acceptedIds = new Set<string>()
      const t0 = performance.now()
      for (let pass = 0; pass < 20 && acceptedIds.size < bodies.length; pass++) {
        const queue = bodies.filter((_, i) => !acceptedIds.has(ids[i]))
        let next = 0
        const phase = await closedLoop({
          port: node.port,
          pid: node.pid,
          concurrency: cfg.concurrency,
          durationMs: 120_000,
          next: () => next < queue.length ? { method: 'POST', path: '/api/tx', body: queue[next++] } : undefined,
          onOk: (body) => { acceptedIds.add((JSON.parse(body) as { id: string }).id) }
        })
        if (acceptedIds.size < bodies.length) {
          log(`contracts: ${bodies.length - acceptedIds.size} ${kind} posts refused, posted again: ${JSON.stringify(phase.errors)}`)
          await sleep(200)
        }
      }
      const accepted = acceptedIds.size
      let confirmed = 0
      const deadline = performance.now() + 120_000
      while (performance.now() < deadline) {
        confirmed = (await netstats(agent, node.port)).total_txs - base
        if (confirmed >= accepted) break
        await sleep(20)
      }
      const seconds = (performance.now() - t0) / 1000
      const result: RateResult = { kind, calls: cfg.calls, accepted, confirmed, seconds, perSecond: confirmed / seconds }
      if (kind === 'register') {
        let ok = 0
        const sample = Array.from({ length: 20 }, (_, i) => Math.floor(i * cfg.calls / 20))
        for (const i of sample) {
          const detail = JSON.parse((await request(agent, node.port, 'GET', `/api/tx/reg-${i}`)).body) as { call_result?: { ok: boolean } }
          if (detail.call_result?.ok === true) ok++
        }
        result.sampledOk = `${ok}/${sample.length}`
      }
      return result
    } finally {
      agent.destroy()
      await node.stop()
    }
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}

export async function runRegistryBench (cfg: RegistryBenchConfig = DEFAULT_REGISTRY_CONFIG): Promise<RateResult[]> {
  const results: RateResult[] = []
  for (const kind of ['register', 'transfer'] as const) {
    log(`contracts: ${cfg.calls} ${kind} transactions at C=${cfg.concurrency}…`)
    results.push(await runOnce(kind, cfg))
  }
  return results
}

export function formatRegistryBench (results: RateResult[]): string {
  const lines = [
    '| transactions | posted | accepted | confirmed | seconds | confirmed/s | sample ok |',
    '|---|---:|---:|---:|---:|---:|---|'
  ]
  for (const r of results) {
    lines.push(`| ${r.kind === 'register' ? 'registry `register` calls' : 'TRANSFERs (same node, for scale)'} | ${r.calls} | ${r.accepted} | ${r.confirmed} | ${r.seconds.toFixed(1)} | ${r.perSecond.toFixed(0)} | ${r.sampledOk ?? ''} |`)
  }
  return lines.join('\n')
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const quick = process.argv.includes('--quick')
  const results = await runRegistryBench(quick ? QUICK_REGISTRY_CONFIG : DEFAULT_REGISTRY_CONFIG)
  console.log(formatRegistryBench(results))
}
