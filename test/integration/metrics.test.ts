/**
 * GET /metrics from a running node under a little load, parsed by a real exposition parser
 * (parse-prometheus-text-format): the node's chain, consensus, mempool, HTTP and storage figures,
 * libp2p's and the process's; route templates as labels, never raw paths; the token rules.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import parsePrometheusTextFormat, { type Family } from 'parse-prometheus-text-format'
import { callContract, newAccount, transfer } from '../../src/client/index.js'
import { USERNAME_FEE_UT, USERNAME_REGISTRY_ID } from '../../src/contracts/wellknown.js'
import { http, startNode, stopAllNodes, waitFor, type NodeProcess } from '../helpers/node-process.js'

async function scrape (node: NodeProcess, headers: Record<string, string> = {}): Promise<Map<string, Family>> {
  const res = await http(node.url, 'GET', '/metrics', { headers })
  assert.equal(res.status, 200, res.text)
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/)
  return new Map(parsePrometheusTextFormat(res.text).map((f) => [f.name, f]))
}

function single (families: Map<string, Family>, name: string): number {
  const family = families.get(name)
  assert.ok(family !== undefined, `${name} is exposed`)
  return Number(family.metrics[0].value)
}

describe('GET /metrics', () => {
  after(async () => { await stopAllNodes() })

  test('chain, mempool, HTTP by route template and status, mailbox, feed, libp2p and process figures', async () => {
    const alice = newAccount()
    const bob = newAccount()
    const node = await startNode({ alloc: [{ pub: alice.pub, amountUt: 10_000_000 }] })
    const tx = transfer(alice, bob.pub, 5)
    assert.equal((await http(node.url, 'POST', '/api/tx', { body: tx })).status, 200)
    await waitFor(async () => (await http(node.url, 'GET', `/api/tx/${tx.id}`)).json !== undefined && ((await http(node.url, 'GET', `/api/tx/${tx.id}`)).json as { status: string }).status === 'confirmed', 20_000, { message: 'the transfer confirmed' })
    const call = callContract(alice, USERNAME_REGISTRY_ID, 'register', ['metrics_1'], { amount: USERNAME_FEE_UT })
    await node.client.submitAndWait(call, { timeoutMs: 20_000 })
    assert.equal((await http(node.url, 'POST', '/api/tx', { rawBody: '{"id":' })).status, 400)
    assert.equal((await http(node.url, 'GET', '/no/such/route')).status, 404)

    const families = await scrape(node)
    assert.ok(single(families, 'kith_chain_height') >= 1)
    assert.equal(families.get('kith_chain_height')?.type, 'GAUGE')
    assert.ok(single(families, 'kith_chain_transactions_total') >= 1)
    assert.equal(single(families, 'kith_mempool_transactions'), 0)
    for (const name of ['kith_consensus_round', 'kith_mempool_bytes', 'kith_p2p_peers', 'kith_mailbox_envelopes', 'kith_mailbox_disk_bytes', 'kith_feed_disk_bytes', 'kith_feed_posts', 'kith_contracts', 'kith_contract_gas_price']) {
      assert.ok(Number.isFinite(single(families, name)), name)
    }
    assert.ok(single(families, 'kith_mailbox_disk_bytes') > 0, 'the mailbox store has files on disk')
    assert.ok(single(families, 'kith_contracts') >= 1, 'the registry, deployed at genesis')
    assert.deepEqual(families.get('kith_contract_calls_total')?.metrics.map((m) => [m.labels?.result, Number(m.value)]), [['ok', 1]])
    assert.ok(single(families, 'kith_contract_gas_used_total') > 0)

    const requests = families.get('kith_http_requests_total')
    assert.equal(requests?.type, 'COUNTER')
    const count = (method: string, route: string, status: string): number =>
      requests?.metrics.filter((m) => m.labels?.method === method && m.labels?.route === route && m.labels?.status === status).reduce((sum, m) => sum + Number(m.value), 0) ?? 0
    assert.ok(count('POST', '/api/tx', '200') >= 1)
    assert.ok(count('POST', '/api/tx', '400') >= 1, 'a refused request is counted with its status')
    assert.ok(count('GET', '/api/tx/{id}', '200') >= 1, 'a parameterised path is counted under its template')
    assert.ok(count('GET', 'unmatched', '404') >= 1)
    const routes = new Set(requests?.metrics.map((m) => m.labels?.route))
    assert.ok(![...routes].some((r) => r?.includes(tx.id) === true), 'no raw path becomes a label value')

    // this parser folds a labelled histogram's series into one (it keys samples on `le` only),
    // so the labelled one is checked for its buckets, an unlabelled one for its count
    const duration = families.get('kith_http_request_duration_seconds')
    assert.equal(duration?.type, 'HISTOGRAM')
    assert.ok(Number(duration?.metrics[0].buckets?.['+Inf']) >= 1)
    assert.equal(families.get('kith_block_interval_seconds')?.type, 'HISTOGRAM')
    assert.ok(Number(families.get('kith_consensus_rounds_per_height')?.metrics[0].count) >= 1)

    assert.ok([...families.keys()].some((n) => n.startsWith('libp2p_')), 'libp2p metrics are wired in')
    assert.ok(families.has('process_cpu_seconds_total') && families.has('nodejs_heap_size_used_bytes'), 'process figures')
  })

  test('fully private mode: /metrics needs the token like every route', async () => {
    const node = await startNode({ env: { SVC_API_TOKEN: 'metrics-secret', SVC_API_PRIVATE: 'true' }, token: 'metrics-secret' })
    const refused = await http(node.url, 'GET', '/metrics')
    assert.equal(refused.status, 401)
    assert.equal(typeof (refused.json as { error?: unknown }).error, 'string')
    const families = await scrape(node, { authorization: 'Bearer metrics-secret' })
    assert.ok(families.has('kith_chain_height'))
  })
})
