import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { Redialer, type RedialTarget } from '../../../src/p2p/redialer.js'

/** a controlled clock and network: dials resolve or fail when the test says */
class FakeNet {
  now = 0
  connected = new Set<string>()
  denied = new Set<string>()
  dials: Array<{ at: number, peerId: string, settle: (ok: boolean) => void }> = []

  readonly port = {
    isConnected: (id: string) => this.connected.has(id),
    isDenied: (id: string) => this.denied.has(id),
    dial: async (t: RedialTarget) => await new Promise<void>((resolve, reject) => {
      this.dials.push({ at: this.now, peerId: t.peerId, settle: (ok) => { if (ok) { this.connected.add(t.peerId); resolve() } else reject(new Error('refused')) } })
    }),
    now: () => this.now,
    onDialError: () => {}
  }
}

const flush = async (): Promise<void> => { for (let i = 0; i < 5; i++) await Promise.resolve() }

/** advance in 50 ms ticks to `until`, failing every dial that starts */
async function failUntil (net: FakeNet, r: Redialer, until: number): Promise<void> {
  while (net.now < until) {
    net.now += 50
    r.tick()
    for (const d of net.dials.filter((x) => x.at === net.now)) d.settle(false)
    await flush()
  }
}

describe('Redialer', () => {
  test('dials at once, backs off 0.5 s doubling to 30 s, resets after connecting', async () => {
    const net = new FakeNet()
    const r = new Redialer([{ peerId: 'p', addr: '/x' }], net.port)
    r.tick()
    assert.equal(net.dials.length, 1)
    r.tick()
    assert.equal(net.dials.length, 1, 'one dial at a time')
    net.dials[0].settle(false)
    await flush()
    await failUntil(net, r, 100_000)
    const gaps = net.dials.slice(1).map((d, i) => d.at - net.dials[i].at)
    assert.deepEqual(gaps.slice(0, 8), [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000])
    assert.equal(r.backoffOf('p'), 30_000)

    net.now += 30_000
    r.tick()
    net.dials[net.dials.length - 1].settle(true)
    await flush()
    r.tick()
    net.now += 1000
    r.tick()
    assert.equal(r.backoffOf('p'), 30_000, 'not reset before the connection proves stable')
    net.now += 1000
    r.tick()
    assert.equal(r.backoffOf('p'), 500)
    // disconnected again: dialed on the next tick, not after the old backoff
    net.connected.clear()
    const before = net.dials.length
    r.tick()
    assert.equal(net.dials.length, before + 1)
  })

  test('a connection cut right after the dial counts as a failure', async () => {
    const net = new FakeNet()
    const r = new Redialer([{ peerId: 'p', addr: '/x' }], net.port)
    for (let i = 0; i < 200; i++) {
      net.now += 50
      r.tick()
      const d = net.dials.find((x) => x.at === net.now)
      if (d !== undefined) {
        d.settle(true)
        await flush()
        net.connected.clear() // the remote closes it at once
      }
    }
    const gaps = net.dials.slice(1).map((d, i) => d.at - net.dials[i].at)
    assert.deepEqual(gaps, [500, 1000, 2000, 4000])
  })

  test('a denied peer is not dialed and gains no backoff; connected peers are left alone', async () => {
    const net = new FakeNet()
    const r = new Redialer([{ peerId: 'd', addr: '/d' }, { peerId: 'c', addr: '/c' }], net.port)
    net.denied.add('d')
    net.connected.add('c')
    for (let i = 0; i < 10; i++) { net.now += 1000; r.tick() }
    assert.equal(net.dials.length, 0)
    net.denied.delete('d')
    r.tick()
    assert.deepEqual(net.dials.map((d) => d.peerId), ['d'])
    r.stop()
    net.connected.clear()
    r.tick()
    assert.equal(net.dials.length, 1)
  })
})
