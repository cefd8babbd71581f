/**
 * --max-cpu and --max-ram-mb observed from outside: the node's V8 heap limit, its image worker
 * processes and its libuv pool size, against a node started without them; and a relaunched node
 * stops when the process its operator started is killed with -9.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, readdirSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { startNode, stopAllNodes, waitFor, type NodeProcess } from '../helpers/node-process.js'

/** pid → parent pid of every process now. */
function parents (): Map<number, number> {
  const map = new Map<number, number>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      // the command name may hold spaces and parentheses: the fields after the last ')'
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      map.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
    } catch { /* exited meanwhile */ }
  }
  return map
}

function cmdline (pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')
  } catch {
    return ''
  }
}

/** Image-scrubbing worker processes started by `pid`. */
function imageWorkers (pid: number): number {
  const all = parents()
  return [...all].filter(([child, parent]) => parent === pid && cmdline(child).includes('image-worker.js')).length
}

function capsLine (node: NodeProcess): Record<string, unknown> {
  const line = node.logs.find((l) => l.msg === 'resource caps')
  assert.ok(line !== undefined, 'the node logs the caps it applied')
  return line
}

describe('--max-cpu and --max-ram-mb', () => {
  after(async () => { await stopAllNodes() })

  test('bound the heap, the image workers and the libuv pool of the running node', async () => {
    const plain = await startNode()
    const capped = await startNode({ args: ['--max-cpu', '1', '--max-ram-mb', '400'], relaunches: true })

    const plainHeap = Number(capsLine(plain).heapLimitMb)
    const cappedHeap = Number(capsLine(capped).heapLimitMb)
    // V8's limit counts the young generation too (3 × the 32 MiB semi-space bin/kith sets) beside the 240 MiB old space
    assert.ok(cappedHeap >= 240 && cappedHeap <= 400 + 100, `capped heap limit ${cappedHeap} MiB`)
    assert.ok(plainHeap > 1000, `uncapped heap limit ${plainHeap} MiB`)
    assert.equal(capsLine(capped).pid, capped.pid)

    await waitFor(() => imageWorkers(capped.pid) === 1 && imageWorkers(plain.pid) === Math.min(2, availableParallelism()), 20_000, {
      message: `image workers: capped ${imageWorkers(capped.pid)}, plain ${imageWorkers(plain.pid)}`
    })
    const environ = readFileSync(`/proc/${capped.pid}/environ`, 'utf8').split('\0')
    assert.ok(environ.includes('UV_THREADPOOL_SIZE=2'), 'the libuv pool is sized from --max-cpu')
    assert.equal(capsLine(capped).verifyWorkers, 1)
    assert.equal(capsLine(capped).viewPairs, 131_072, 'the feed view limiter sized to 5% of --max-ram-mb')

    // the node still serves
    assert.ok((await capped.client.netstats()).height >= 0)
  })

  test('a relaunched node stops when the process its operator started is killed with -9', async () => {
    const capped = await startNode({ args: ['--max-ram-mb', '300'], relaunches: true })
    const wrapper = parents().get(capped.pid)
    assert.ok(wrapper !== undefined && wrapper !== capped.pid && cmdline(wrapper).includes('kith'), 'bin/kith runs the node as its child')
    process.kill(wrapper, 'SIGKILL')
    await waitFor(() => !parents().has(capped.pid), 20_000, { message: 'the orphaned node stopped' })
    assert.ok(capped.logs.some((l) => l.msg === 'stopped' && l.pid === capped.pid), 'it stopped as on SIGTERM (a clean shutdown), not by a crash')
  })
})
