/**
 * `kith testnet`'s two layouts: loopback (one host, a port pair per node) and `--compose`
 * (docker/compose.yml: one container per node, found by DNS name, the same ports in each).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { COMPOSE_HTTP_PORT, COMPOSE_P2P_PORT, createTestnet } from '../../../src/cli/testnet.js'
import { peerIdFromSeed } from '../../../src/p2p/index.js'

interface Config { http_addr: string, p2p_listen: string[], peers: string[] }

async function written (dir: string, i: number): Promise<{ config: Config, genesis: string, peerId: string }> {
  const home = join(dir, `node${i}`)
  const key = JSON.parse(await readFile(join(home, 'node_key.json'), 'utf8')) as { seed: string }
  return {
    config: JSON.parse(await readFile(join(home, 'config.json'), 'utf8')) as Config,
    genesis: await readFile(join(home, 'genesis.json'), 'utf8'),
    peerId: await peerIdFromSeed(Buffer.from(key.seed, 'hex'))
  }
}

test('--compose: node i listens on every interface at the image ports and dials /dns4/node<j>', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kith-layout-'))
  try {
    const nodes = await createTestnet({ validators: 4, output: dir, basePort: 26000, chainId: 'layout', alloc: [], compose: true })
    const homes = await Promise.all([0, 1, 2, 3].map(async (i) => await written(dir, i)))
    assert.equal(new Set(homes.map((h) => h.genesis)).size, 1, 'one genesis')
    for (const [i, home] of homes.entries()) {
      assert.equal(home.config.http_addr, `0.0.0.0:${COMPOSE_HTTP_PORT}`)
      assert.deepEqual(home.config.p2p_listen, [`/ip4/0.0.0.0/tcp/${COMPOSE_P2P_PORT}`])
      const expected = homes.flatMap((other, j) => j === i ? [] : [`/dns4/node${j}/tcp/${COMPOSE_P2P_PORT}/p2p/${other.peerId}`])
      assert.deepEqual(home.config.peers, expected, `node${i} names the other three by DNS name and their own peer ids`)
      assert.equal(nodes[i].multiaddr, `/dns4/node${i}/tcp/${COMPOSE_P2P_PORT}/p2p/${home.peerId}`)
      assert.equal(nodes[i].httpPort, COMPOSE_HTTP_PORT)
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('the loopback layout is unchanged: HTTP on P+2i, libp2p on P+2i+1 of 127.0.0.1', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kith-layout-'))
  try {
    await createTestnet({ validators: 3, output: dir, basePort: 31000, chainId: 'layout', alloc: [] })
    const homes = await Promise.all([0, 1, 2].map(async (i) => await written(dir, i)))
    for (const [i, home] of homes.entries()) {
      assert.equal(home.config.http_addr, `127.0.0.1:${31000 + 2 * i}`)
      assert.deepEqual(home.config.p2p_listen, [`/ip4/127.0.0.1/tcp/${31000 + 2 * i + 1}`])
      assert.deepEqual(home.config.peers, homes.flatMap((other, j) => j === i ? [] : [`/ip4/127.0.0.1/tcp/${31000 + 2 * j + 1}/p2p/${other.peerId}`]))
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
