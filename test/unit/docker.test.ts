/**
 * No Docker engine runs here, so this checks what can be checked: the compose file parses and
 * describes the same 4-validator layout as `kith testnet --validators 4 --base-port 26000`.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { parse } from 'yaml'

interface Service { image?: string, build?: { dockerfile?: string }, network_mode?: string, command?: string[], entrypoint?: string[], depends_on?: Record<string, { condition: string }> }

test('docker/compose.yml runs the 4-node testnet layout', async () => {
  const root = new URL('../../../', import.meta.url)
  const compose = parse(await readFile(new URL('docker/compose.yml', root), 'utf8')) as { services: Record<string, Service> }
  const init = compose.services.init
  assert.equal(init.build?.dockerfile, 'docker/Dockerfile')
  const script = init.entrypoint?.join(' ') ?? ''
  assert.match(script, /kith testnet --validators 4 --output \/net --base-port 26000/)
  for (let i = 0; i < 4; i++) {
    const node = compose.services[`node${i}`]
    assert.ok(node !== undefined, `service node${i}`)
    assert.deepEqual(node.command, ['start', '--home', `/net/node${i}`])
    assert.equal(node.network_mode, 'host', 'the testnet homes name 127.0.0.1 addresses')
    assert.equal(node.depends_on?.init.condition, 'service_completed_successfully')
  }
  assert.equal(Object.keys(compose.services).filter((s) => s.startsWith('node')).length, 4)
  const dockerfile = await readFile(new URL('docker/Dockerfile', root), 'utf8')
  assert.match(dockerfile, /ENTRYPOINT \["\/kith\/bin\/kith"\]/)
  assert.match(dockerfile, /npm install/)
})
