/**
 * Limits against a real node: `--chain-disk-limit-mb` (advisory, so it warns and goes on committing
 * blocks), the mempool's bounds and per-sender share (503 with Retry-After), and a burst of
 * submissions with forged signatures among them.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { newAccount, transfer, type Account } from '../../src/client/index.js'
import { errorMessage, http, kithInit, startNode, stopAllNodes, waitFor, type HttpResult, type LogLine } from '../helpers/node-process.js'

const WARNING = 'the chain store is larger than --chain-disk-limit-mb; blocks are still accepted (the limit is advisory)'
const isWarning = (l: LogLine): boolean => l.msg === WARNING

describe('--chain-disk-limit-mb', () => {
  let dir: string | undefined
  after(async () => {
    await stopAllNodes()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  test('under the limit the node says nothing; over it, it warns at start and still commits blocks', async () => {
    dir = await mkdtemp(join(tmpdir(), 'kith-limits-'))
    const home = join(dir, 'home')
    await kithInit(home, {})
    const config = JSON.parse(await readFile(join(home, 'config.json'), 'utf8')) as Record<string, unknown>
    await writeFile(join(home, 'config.json'), JSON.stringify({ ...config, p2p_listen: ['/ip4/127.0.0.1/tcp/0'] }))
    const args = ['--chain-disk-limit-mb', '1']

    const small = await startNode({ home, blockIntervalMs: 100, args })
    await waitFor(async () => (await small.client.netstats()).height >= 3, 20_000, { message: 'blocks under the limit' })
    assert.ok(!small.logs.some(isWarning), 'a chain of a few blocks is under 1 MiB: no warning')
    await small.stop()

    // The store file grows past the limit: pages past lmdb's last one, which it never reads.
    await appendFile(join(home, 'data', 'data.mdb'), Buffer.alloc(2 * 1024 * 1024, 0xa5))
    const large = await startNode({ home, blockIntervalMs: 100, args })
    const warning = await waitFor(() => large.logs.find(isWarning), 10_000, { message: 'a warning once over the limit' })
    assert.equal(warning.limitMb, 1)
    assert.ok(typeof warning.chainMb === 'number' && warning.chainMb > 2, `chainMb ${String(warning.chainMb)}`)
    const height = (await large.client.netstats()).height
    await waitFor(async () => (await large.client.netstats()).height >= height + 3, 20_000, { message: 'blocks over the limit (advisory)' })
  })
})

describe('mempool bounds through HTTP', () => {
  let dir: string | undefined
  after(async () => {
    await stopAllNodes()
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  })

  test('a full mempool and a sender over its share answer 503 with Retry-After, before any signature work', async () => {
    const [alice, bob, carol] = [newAccount(), newAccount(), newAccount()]
    dir = await mkdtemp(join(tmpdir(), 'kith-mempool-'))
    const home = join(dir, 'home')
    await kithInit(home, { alloc: [alice, bob, carol].map((a) => ({ pub: a.pub, amountUt: 10_000_000 })) })
    const config = JSON.parse(await readFile(join(home, 'config.json'), 'utf8')) as Record<string, unknown>
    await writeFile(join(home, 'config.json'), JSON.stringify({ ...config, p2p_listen: ['/ip4/127.0.0.1/tcp/0'], mempool_max_txs: 5, mempool_max_per_sender: 3 }))
    // no block for ten minutes: everything accepted stays pending
    const node = await startNode({ home, blockIntervalMs: 600_000 })
    const to = newAccount().pub
    const submit = async (from: Account, tx = transfer(from, to, 1)): Promise<HttpResult> => await http(node.url, 'POST', '/api/tx', { body: tx })
    for (let i = 0; i < 3; i++) assert.equal((await submit(alice)).status, 200)
    const share = await submit(alice)
    assert.equal(share.status, 503)
    assert.equal(share.headers.get('retry-after'), '1')
    assert.match(errorMessage(share), /share of the mempool/)
    assert.equal((await submit(bob)).status, 200, 'another sender still gets in')
    assert.equal((await submit(bob)).status, 200)
    const full = await submit(carol)
    assert.equal(full.status, 503)
    assert.match(errorMessage(full), /mempool is full/)
    // a forged signature is not even looked at while the pool is full
    const forged = { ...transfer(carol, to, 1), signature: Buffer.alloc(64, 1).toString('base64') }
    assert.equal((await submit(carol, forged)).status, 503)
    assert.equal((await node.client.netstats() as unknown as { mempool_size: number }).mempool_size, 5)
  })
})

describe('a burst of submissions, forged signatures among them', () => {
  after(async () => { await stopAllNodes() })

  // Submissions are verified in batches of 32 (src/crypto/verify-pool.ts): a burst of 120 spans
  // several, and each answer must still be its own transaction's.
  test('each forged one is refused 400 naming the signature, every other one accepted, and the node goes on', async () => {
    const senders = Array.from({ length: 12 }, () => newAccount())
    const node = await startNode({ alloc: senders.map((a) => ({ pub: a.pub, amountUt: 10_000_000 })), env: { SVC_RATE_LIMIT_RPS: '0' } })
    const to = newAccount().pub
    const txs = Array.from({ length: 120 }, (_, i) => {
      const tx = transfer(senders[i % senders.length], to, 1 + i)
      return i % 3 === 1 ? { ...tx, signature: Buffer.alloc(64, i).toString('base64') } : tx
    })
    const answers = await Promise.all(txs.map(async (body) => await http(node.url, 'POST', '/api/tx', { body })))
    answers.forEach((answer, i) => {
      if (i % 3 === 1) {
        assert.equal(answer.status, 400, `forged ${i}`)
        assert.match(errorMessage(answer), /signature/)
      } else assert.equal(answer.status, 200, `genuine ${i}`)
    })
    assert.equal((await http(node.url, 'GET', '/api/netstats')).status, 200)
  })
})
