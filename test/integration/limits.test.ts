/** `--chain-disk-limit-mb` against a real node: advisory, so it warns and goes on committing blocks. */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { kithInit, startNode, stopAllNodes, waitFor, type LogLine } from '../helpers/node-process.js'

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
