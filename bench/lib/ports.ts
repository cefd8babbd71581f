/**
 * Free port ranges for testnets started by benchmarks and tests. A base lies below the kernel's
 * ephemeral range: a random base inside it once lost a port to some process's outgoing connection
 * (EADDRINUSE in CI), and a benchmark's thousands of client sockets (and their TIME_WAITs) fill it.
 */
import { readFileSync } from 'node:fs'
import net from 'node:net'

export async function portsFree (ports: number[]): Promise<boolean> {
  for (const port of ports) {
    const ok = await new Promise<boolean>((resolve) => {
      const server = net.createServer()
      server.once('error', () => resolve(false))
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
    })
    if (!ok) return false
  }
  return true
}

/** The first port of the kernel's ephemeral range (outgoing connections take their ports from it). */
function ephemeralStart (): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768
  } catch {
    return 32768
  }
}

/** A base port P for `kith testnet --base-port` with `validators` nodes (HTTP on P+2i, libp2p on P+2i+1), all free now. */
export async function pickBasePort (validators: number): Promise<number> {
  const slots = Math.floor((ephemeralStart() - 10_000 - 2 * validators) / 20)
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 10_000 + Math.floor(Math.random() * slots) * 20
    if (await portsFree(Array.from({ length: 2 * validators }, (_, i) => base + i))) return base
  }
  throw new Error('no free port range for the testnet')
}
