/** POST /api/onboarding/claim against real nodes: funding, limits per key and IP, and 503s. */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { newAccount } from '../../src/client/index.js'
import { seedOf, toHex } from '../../src/crypto/index.js'
import { http, kithInit, startNode, stopAllNodes, type NodeProcess } from '../helpers/node-process.js'

async function nodeWithFaucet (faucetUt: number, onboarding: Record<string, unknown>): Promise<{ node: NodeProcess, dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'kith-onboarding-'))
  const home = join(dir, 'home')
  const faucet = newAccount()
  await kithInit(home, { alloc: faucetUt > 0 ? [{ pub: faucet.pub, amountUt: faucetUt }] : [] })
  await writeFile(join(home, 'faucet.json'), JSON.stringify({ pub_key: faucet.pub, seed: toHex(seedOf(faucet.keyPair)) }))
  const config = JSON.parse(await readFile(join(home, 'config.json'), 'utf8')) as Record<string, unknown>
  await writeFile(join(home, 'config.json'), JSON.stringify({ ...config, p2p_listen: ['/ip4/127.0.0.1/tcp/0'], onboarding: { key_file: 'faucet.json', ...onboarding } }))
  return { node: await startNode({ home, blockIntervalMs: 100 }), dir }
}

describe('onboarding', () => {
  const dirs: string[] = []
  after(async () => {
    await stopAllNodes()
    for (const dir of dirs) await rm(dir, { recursive: true, force: true })
  })

  test('a new key gets just enough to register, once per key and per IP', async () => {
    const { node, dir } = await nodeWithFaucet(1_000_000, { enabled: true, amount_ut: 20_000, per_ip_interval_s: 3600, per_key_interval_s: 86_400 })
    dirs.push(dir)
    // bad bodies are refused at the edge (400 naming what is wrong), before any claim is counted
    const badBodies: Array<{ body?: unknown, rawBody?: string, names: RegExp }> = [
      { body: {}, names: /pub_key/ },
      { body: { pub_key: 5 }, names: /pub_key/ },
      { body: { pub_key: null }, names: /pub_key/ },
      { body: { pub_key: 'a'.repeat(129) }, names: /pub_key/ },
      { body: { pub_key: '' }, names: /pub_key/ },
      { body: [], names: /object/ },
      { body: null, names: /object/ },
      { body: 'pub_key', names: /object/ },
      { rawBody: '', names: /request body/ },
      { rawBody: '{"pub_key":', names: /JSON/ },
      { rawBody: '{"__proto__": {"pub_key": "x"}}', names: /pub_key/ },
      { rawBody: '{"constructor": "x"}', names: /pub_key/ }
    ]
    for (const bad of badBodies) {
      const res = await http(node.url, 'POST', '/api/onboarding/claim', bad)
      assert.equal(res.status, 400, `${JSON.stringify(bad)}: ${res.text}`)
      assert.match((res.json as { error: string }).error, bad.names, JSON.stringify(bad))
    }
    const user = newAccount()
    const claim = await http(node.url, 'POST', '/api/onboarding/claim', { body: { pub_key: user.address } })
    assert.equal(claim.status, 200, claim.text)
    const grant = claim.json as { pub_key: string, amount_ut: number, tx_id: string }
    assert.equal(grant.pub_key, user.pub)
    assert.equal(grant.amount_ut, 20_000)
    await node.client.waitForConfirmation(grant.tx_id)
    assert.equal((await node.client.address(user.pub)).balance_ut, 20_000)
    const again = await http(node.url, 'POST', '/api/onboarding/claim', { body: { pub_key: user.pub } })
    assert.equal(again.status, 400, 'an already funded key is refused')
    const sameIp = await http(node.url, 'POST', '/api/onboarding/claim', { body: { pub_key: newAccount().pub } })
    assert.equal(sameIp.status, 429)
    assert.match((sameIp.json as { error: string }).error, /per client address/)
    const bad = await http(node.url, 'POST', '/api/onboarding/claim', { body: { pub_key: 'zz' } })
    assert.equal(bad.status, 400)
  })

  test('503 with a clear error when the operator turned it off or the account is empty', async () => {
    const off = await nodeWithFaucet(1_000_000, { enabled: false })
    dirs.push(off.dir)
    const res = await http(off.node.url, 'POST', '/api/onboarding/claim', { body: { pub_key: newAccount().pub } })
    assert.equal(res.status, 503)
    assert.match((res.json as { error: string }).error, /turned off/)
    const empty = await nodeWithFaucet(0, { enabled: true, per_ip_interval_s: 0 })
    dirs.push(empty.dir)
    const dry = await http(empty.node.url, 'POST', '/api/onboarding/claim', { body: { pub_key: newAccount().pub } })
    assert.equal(dry.status, 503)
    assert.match((dry.json as { error: string }).error, /empty/)
  })
})
