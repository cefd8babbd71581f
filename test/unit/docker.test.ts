/**
 * What can be checked without an engine (test/docker/testnet.test.ts runs the real thing,
 * `npm run test:docker`): the compose file parses and describes the layout that
 * `kith testnet --compose` writes, and the Dockerfile ships what genesis and start need.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { parse } from 'yaml'
import { COMPOSE_HTTP_PORT, COMPOSE_P2P_PORT } from '../../src/cli/testnet.js'

interface Service {
  image?: string
  build?: { dockerfile?: string, target?: string }
  network_mode?: string
  networks?: string[]
  command?: string[]
  entrypoint?: string[]
  ports?: string[]
  volumes?: string[]
  profiles?: string[]
  healthcheck?: { test: string[] }
  depends_on?: Record<string, { condition: string }> | string[]
}

const root = new URL('../../../', import.meta.url)

test('docker/compose.yml: four validators on a bridge network, each with its own volume, node0 published', async () => {
  const compose = parse(await readFile(new URL('docker/compose.yml', root), 'utf8'), { merge: true }) as { services: Record<string, Service>, volumes: Record<string, unknown>, networks: Record<string, unknown> }
  const init = compose.services.init
  assert.equal(init.build?.dockerfile, 'docker/Dockerfile')
  const script = init.entrypoint?.join(' ') ?? ''
  assert.match(script, /kith testnet --validators 4 --output \/net --compose/)
  assert.ok(Object.keys(compose.networks).length === 1)
  for (let i = 0; i < 4; i++) {
    const node = compose.services[`node${i}`]
    assert.ok(node !== undefined, `service node${i}`)
    // the service name is the DNS name the written peers use: /dns4/node<i>/tcp/4001
    assert.deepEqual(node.command?.slice(0, 3), ['start', '--home', '/data'])
    assert.equal(node.network_mode, undefined, 'not the host network')
    assert.deepEqual(node.networks, Object.keys(compose.networks))
    assert.deepEqual(node.volumes, [`node${i}:/data`])
    assert.ok(init.volumes?.includes(`node${i}:/net/node${i}`), `init writes node${i}'s home into its volume`)
    assert.ok(`node${i}` in compose.volumes)
    assert.match(node.healthcheck?.test.join(' ') ?? '', /\/api\/netstats/)
    assert.deepEqual(node.depends_on, { init: { condition: 'service_completed_successfully' } })
    assert.equal(node.ports !== undefined, i === 0, 'only node0 is published')
  }
  assert.deepEqual(compose.services.node0.ports, [`\${KITH_HTTP_PORT:-${COMPOSE_HTTP_PORT}}:${COMPOSE_HTTP_PORT}`])
  assert.equal(compose.services.sidecar.build?.target, 'sidecar')
  const joiner = compose.services.node4
  assert.deepEqual(joiner.profiles, ['join'])
  assert.match(joiner.entrypoint?.join(' ') ?? '', /kith init --home \/data --genesis \/genesis\/genesis.json/)
  assert.match(joiner.entrypoint?.join(' ') ?? '', /--peer "\$\$KITH_PEER"/)
  assert.equal(COMPOSE_P2P_PORT, 4001)
})

test('docker/Dockerfile: multi-stage, non-root, /data a volume, tini, the contract wasm genesis loads', async () => {
  const dockerfile = await readFile(new URL('docker/Dockerfile', root), 'utf8')
  assert.match(dockerfile, /^ARG BASE=node:24-bookworm-slim$/m, 'the official image stays the default')
  assert.match(dockerfile, /^FROM \$\{BASE\} AS build$/m)
  assert.match(dockerfile, /^FROM \$\{BASE\} AS runtime$/m)
  assert.match(dockerfile, /^FROM runtime AS sidecar$/m)
  assert.match(dockerfile, /npm ci /)
  assert.match(dockerfile, /npm prune --omit=dev/)
  assert.match(dockerfile, /cp -a contracts\/build \/out\/contracts\//)
  assert.match(dockerfile, /^USER kith$/m)
  assert.match(dockerfile, /^VOLUME \/data$/m)
  assert.match(dockerfile, /^ENTRYPOINT \["\/usr\/bin\/tini", "--", "\/kith\/bin\/kith"\]$/m)
  assert.match(dockerfile, /install -y --no-install-recommends ffmpeg/)
  const ignore = (await readFile(new URL('.dockerignore', root), 'utf8')).split('\n')
  for (const entry of ['node_modules', 'dist', '.git']) assert.ok(ignore.includes(entry), `.dockerignore has ${entry}`)
})
