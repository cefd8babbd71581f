/**
 * The node's assembly has one lifecycle: start in order, stop in reverse, each part once; a start
 * that fails (a port in use) or is aborted releases what it started. A part left running would
 * keep this test file's process alive (workers, sockets, timers), so the run would not end.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { createNode, type NodeAppConfig } from '../../../src/app/index.js'
import { readPendingLimits } from '../../../src/feed/index.js'
import { readMediaEnv } from '../../../src/media/index.js'
import { initHome, loadHome, readEnv, resolveConfigLayers } from '../../../src/node/index.js'
import { readRealtimeEnv } from '../../../src/realtime/index.js'
import { readRelayEnv } from '../../../src/relay/index.js'
import { silent, withTempDir } from '../relay/helpers.js'

async function appConfig (dir: string, httpAddr: string): Promise<NodeAppConfig> {
  await initHome(join(dir, 'home'), {})
  const home = await loadHome(join(dir, 'home'))
  const { config } = resolveConfigLayers(home.fileConfig, { http_addr: httpAddr, p2p_listen: ['/ip4/127.0.0.1/tcp/0'] })
  const env = readEnv({})
  return {
    home, config, env,
    caps: { verifyWorkers: 1, imageWorkers: 1, viewPairs: undefined },
    relay: readRelayEnv({}), media: readMediaEnv({}), realtime: readRealtimeEnv({}), pendingLimits: readPendingLimits({}), denyPeers: undefined
  }
}

test('start, then stop (twice at once, then again); a second start is refused', async () => {
  await withTempDir(async (dir) => {
    const node = createNode(await appConfig(dir, '127.0.0.1:0'), { logger: silent })
    await node.start()
    await assert.rejects(node.start(), /already been started/)
    await Promise.all([node.stop(), node.stop()])
    await node.stop()
  })
})

test('a port in use: start rejects and releases every part it started; the home then starts again', async () => {
  await withTempDir(async (dir) => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = taken.address() as AddressInfo
      const config = await appConfig(dir, `127.0.0.1:${port}`)
      const node = createNode(config, { logger: silent })
      await assert.rejects(node.start(), /EADDRINUSE/)
      await node.stop()
      const again = createNode({ ...config, config: { ...config.config, http_addr: '127.0.0.1:0' } }, { logger: silent })
      await again.start()
      await again.stop()
    } finally {
      taken.close()
    }
  })
})

test('an aborted signal, or a stop while starting, ends start with nothing left running', async () => {
  await withTempDir(async (dir) => {
    const config = await appConfig(dir, '127.0.0.1:0')
    const aborted = createNode(config, { logger: silent })
    await assert.rejects(aborted.start(AbortSignal.abort(new Error('called off'))), /called off/)
    const stopped = createNode(config, { logger: silent })
    const starting = stopped.start()
    const stopping = stopped.stop()
    await assert.rejects(starting, /stopping/)
    await stopping
  })
})
