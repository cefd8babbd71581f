/**
 * WAN emulation with network namespaces, for the chaos tests (test/chaos/wan.test.ts) and the
 * benchmark (bench/wan.ts). Runs as root; `wanUnavailable()` says why it cannot run here.
 *
 * What it builds, for run id R (this process's pid in base 36) and N nodes:
 * - a bridge `kwR` in the root namespace holding 10.77.S.1/24, where S is a /24 of 10.77.0.0/16
 *   that no interface of the root namespace uses yet (the harness's own management address:
 *   the test process reaches the nodes' HTTP through it, undelayed and lossless);
 * - per node i a namespace `kith-wan-R-i` with lo and `eth0` = 10.77.S.(10+i)/24, the namespace
 *   end of a veth pair whose other end `kwR-i` is a port of the bridge;
 * - in each namespace, iptables (mangle PREROUTING) on packets *arriving from a peer node*
 *   (never from 10.77.S.1): DROP for a partition (chain KW-PART), DROP at random for loss
 *   (chain KW-LOSS, `-m statistic`), then NFQUEUE to test/netns/delayline.py for the delay.
 *   The kernel here has no sch_netem, so `tc netem` cannot be used; the delay line is that
 *   process (one per namespace, one queue per peer, FIFO, jitter without reordering).
 *
 * Each node's link has a round-trip share `rttMs`: a packet from i to j waits
 * (rtt_i + rtt_j) / 2 at j, so the RTT between i and j is rtt_i + rtt_j, the sum of both links.
 * Delaying on arrival rather than on departure keeps the sender's TCP stack out of it (a packet
 * held on the sender's own egress still counts against its socket: TCP small queues).
 *
 * Everything is removed by `destroy()`, by a process 'exit' hook and on SIGINT/SIGTERM; a new
 * WanNetwork first removes leftovers of runs whose process is gone (names kith-wan-R-*, kwR*).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const NS_PREFIX = 'kith-wan-'
const LINK_PREFIX = 'kw'

function repoRoot (): string {
  const here = dirname(fileURLToPath(import.meta.url))
  const up2 = resolve(here, '..', '..')
  return up2.endsWith('/dist') ? resolve(up2, '..') : up2
}
const DELAYLINE = join(repoRoot(), 'test', 'netns', 'delayline.py')

function sh (cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

function trySh (cmd: string, args: string[]): void {
  try { sh(cmd, args) } catch { /* already gone */ }
}

/** undefined when the harness can run here, else the reason it cannot (tests skip with it) */
export function wanUnavailable (): string | undefined {
  if (process.platform !== 'linux') return 'network namespaces need Linux'
  if (process.getuid?.() !== 0) return 'network namespaces need root'
  for (const tool of ['ip', 'iptables', 'python3']) {
    try { sh('sh', ['-c', `command -v ${tool}`]) } catch { return `${tool} is not installed` }
  }
  const probe = `${NS_PREFIX}probe-${process.pid.toString(36)}`
  try {
    sh('ip', ['netns', 'add', probe])
    sh('ip', ['netns', 'exec', probe, 'iptables', '-t', 'mangle', '-A', 'PREROUTING', '-s', '10.0.0.1', '-m', 'statistic', '--mode', 'random', '--probability', '0.5', '-j', 'DROP'])
    sh('ip', ['netns', 'exec', probe, 'iptables', '-t', 'mangle', '-A', 'PREROUTING', '-s', '10.0.0.2', '-j', 'NFQUEUE', '--queue-num', '1'])
  } catch (err) {
    return `ip netns / iptables refused: ${String((err as { stderr?: string }).stderr ?? err).trim().slice(0, 200)}`
  } finally {
    trySh('ip', ['netns', 'del', probe])
  }
  return undefined
}

function alive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Removes namespaces and links of earlier runs whose process no longer exists. */
export function removeLeftovers (): string[] {
  const removed: string[] = []
  const owner = (id: string): number => parseInt(id, 36)
  for (const line of sh('ip', ['netns', 'list']).split('\n')) {
    const name = line.split(' ')[0]
    // kith-wan-R-i of a network, kith-wan-probe-R of wanUnavailable()
    const m = /^kith-wan-([0-9a-z]+)-\d+$/.exec(name) ?? /^kith-wan-probe-([0-9a-z]+)$/.exec(name)
    if (m === null || alive(owner(m[1]))) continue
    killNamespace(name)
    removed.push(name)
  }
  // the veth ports went with their namespaces; the bridges are ours by name and type
  for (const line of sh('ip', ['-o', 'link', 'show', 'type', 'bridge']).split('\n')) {
    const m = /^\d+: (kw([0-9a-z]+)):/.exec(line)
    if (m === null || alive(owner(m[2]))) continue
    trySh('ip', ['link', 'del', m[1]])
    removed.push(m[1])
  }
  return removed
}

function killNamespace (name: string): void {
  // processes left in it keep the namespace alive
  try {
    for (const pid of sh('ip', ['netns', 'pids', name]).split('\n').map(Number).filter((p) => p > 0)) {
      try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
    }
  } catch { /* no such namespace */ }
  trySh('ip', ['netns', 'del', name])
}

/** the ports of a node in its own namespace: every node has the same ones */
export const WAN_HTTP_PORT = 8080
export const WAN_P2P_PORT = 4001

/**
 * Moves the homes of `bin/kith testnet` onto the namespaces' addresses: node i listens on
 * `wan.addr(i)` and dials the others there (the generated loopback addresses and peer
 * multiaddrs are rewritten in each config.json; keys and peer ids stay).
 */
export async function placeOnWan (members: Array<{ home: string, peerId: string }>, wan: WanNetwork): Promise<void> {
  await Promise.all(members.map(async (m, i) => {
    const file = join(m.home, 'config.json')
    const config = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>
    config.http_addr = `${wan.addr(i)}:${WAN_HTTP_PORT}`
    config.p2p_listen = [`/ip4/${wan.addr(i)}/tcp/${WAN_P2P_PORT}`]
    config.peers = members.flatMap((o, j) => j === i ? [] : [`/ip4/${wan.addr(j)}/tcp/${WAN_P2P_PORT}/p2p/${o.peerId}`])
    await writeFile(file, JSON.stringify(config, null, 2))
  }))
}

export interface LinkShape {
  /** this link's share of the round-trip time to any other node, ms */
  rttMs: number
  /** ± ms on each packet's delay (never reorders) */
  jitterMs: number
  /** share of packets from other nodes lost on arrival, 0..1 */
  loss: number
}

const live = new Set<WanNetwork>()
let hooked = false
function hookExit (): void {
  if (hooked) return
  hooked = true
  process.on('exit', () => { for (const w of live) w.destroy() })
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      for (const w of live) w.destroy()
      process.exit(signal === 'SIGINT' ? 130 : 143)
    })
  }
}

export class WanNetwork {
  readonly runId = process.pid.toString(36)
  readonly bridge: string
  /** 10.77.S */
  readonly subnet: string
  /** the root namespace's address on the bridge: where the test process talks from */
  readonly managementAddr: string
  private readonly shapes: LinkShape[]
  private readonly delaylines: ChildProcess[] = []
  private partitioned = false
  private destroyed = false

  private constructor (readonly size: number, subnet: string) {
    this.bridge = `${LINK_PREFIX}${this.runId}`
    this.subnet = subnet
    this.managementAddr = `${subnet}.1`
    this.shapes = Array.from({ length: size }, () => ({ rttMs: 0, jitterMs: 0, loss: 0 }))
  }

  static async create (size: number): Promise<WanNetwork> {
    removeLeftovers()
    const used = sh('ip', ['-4', '-o', 'addr', 'show'])
    let third = 0
    while (third < 256 && used.includes(` 10.77.${third}.`)) third++
    if (third === 256) throw new Error('no free /24 in 10.77.0.0/16')
    const w = new WanNetwork(size, `10.77.${third}`)
    live.add(w)
    hookExit()
    try {
      await w.build()
    } catch (err) {
      w.destroy()
      throw err
    }
    return w
  }

  ns (i: number): string {
    return `${NS_PREFIX}${this.runId}-${i}`
  }

  addr (i: number): string {
    return `${this.subnet}.${10 + i}`
  }

  /** argv prefix that runs a command inside node i's namespace */
  exec (i: number): string[] {
    return ['ip', 'netns', 'exec', this.ns(i)]
  }

  private ipt (i: number, args: string[]): void {
    sh('ip', ['netns', 'exec', this.ns(i), 'iptables', '-w', '-t', 'mangle', ...args])
  }

  private async build (): Promise<void> {
    sh('ip', ['link', 'add', this.bridge, 'type', 'bridge'])
    sh('ip', ['addr', 'add', `${this.managementAddr}/24`, 'dev', this.bridge])
    sh('ip', ['link', 'set', this.bridge, 'up'])
    for (let i = 0; i < this.size; i++) {
      const ns = this.ns(i)
      const port = `${this.bridge}-${i}`
      sh('ip', ['netns', 'add', ns])
      sh('ip', ['link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns])
      sh('ip', ['link', 'set', port, 'master', this.bridge, 'up'])
      sh('ip', ['-n', ns, 'addr', 'add', `${this.addr(i)}/24`, 'dev', 'eth0'])
      // one MTU-sized segment per packet, as on a real link: with segmentation offload a "packet"
      // is up to 64 KB and 1 % loss would hit a fortieth as many segments
      sh('ip', ['-n', ns, 'link', 'set', 'eth0', 'gso_max_segs', '1', 'up'])
      sh('ip', ['-n', ns, 'link', 'set', 'lo', 'up'])
      // KW-COUNT counts what arrives from peers (its second rule's counters): the traffic between nodes
      this.ipt(i, ['-N', 'KW-COUNT'])
      this.ipt(i, ['-A', 'KW-COUNT', '-s', this.managementAddr, '-j', 'RETURN'])
      this.ipt(i, ['-A', 'KW-COUNT', '-s', `${this.subnet}.0/24`, '-j', 'RETURN'])
      this.ipt(i, ['-A', 'PREROUTING', '-j', 'KW-COUNT'])
      for (const chain of ['KW-PART', 'KW-LOSS', 'KW-DELAY']) {
        this.ipt(i, ['-N', chain])
        this.ipt(i, ['-A', 'PREROUTING', '-j', chain])
      }
    }
    await Promise.all(Array.from({ length: this.size }, async (_, i) => await this.startDelayline(i)))
  }

  private async startDelayline (i: number): Promise<void> {
    if (!existsSync(DELAYLINE)) throw new Error(`${DELAYLINE} is missing`)
    const peers = Array.from({ length: this.size }, (_, j) => j).filter((j) => j !== i).map(String)
    const child = spawn('ip', ['netns', 'exec', this.ns(i), 'python3', DELAYLINE, ...peers], { stdio: ['pipe', 'pipe', 'pipe'] })
    this.delaylines[i] = child
    let err = ''
    child.stderr?.setEncoding('utf8').on('data', (d: string) => { err += d })
    await new Promise<void>((resolveReady, rejectReady) => {
      // a bound on a hung start, not a speed check: python starts in ~1 s on a machine shared with other builds
    const timer = setTimeout(() => rejectReady(new Error(`delay line in ${this.ns(i)} not ready: ${err}`)), 30_000)
      child.stdout?.setEncoding('utf8').once('data', (d: string) => {
        clearTimeout(timer)
        if (d.startsWith('ready')) resolveReady()
        else rejectReady(new Error(`delay line in ${this.ns(i)}: ${d}${err}`))
      })
      child.once('exit', (code) => { clearTimeout(timer); rejectReady(new Error(`delay line in ${this.ns(i)} exited (${String(code)}): ${err}`)) })
    })
    // a dead delay line holds every delayed packet forever: say so loudly
    child.once('exit', (code) => {
      if (!this.destroyed) process.stderr.write(`[wan] delay line of ${this.ns(i)} exited (code ${String(code)}): ${err}\n`)
    })
  }

  /** Sets node i's link; the delays of every queue that involves i are recomputed. */
  shape (i: number, s: Partial<LinkShape>): void {
    this.shapes[i] = { ...this.shapes[i], ...s }
    this.apply()
  }

  /** The same shape on every link. */
  shapeAll (s: Partial<LinkShape>): void {
    for (let i = 0; i < this.size; i++) this.shapes[i] = { ...this.shapes[i], ...s }
    this.apply()
  }

  private apply (): void {
    for (let j = 0; j < this.size; j++) {
      // loss on arrival at j: one loss stage per packet and direction
      this.ipt(j, ['-F', 'KW-LOSS'])
      this.ipt(j, ['-F', 'KW-DELAY'])
      const loss = this.shapes[j].loss
      for (let i = 0; i < this.size; i++) {
        if (i === j) continue
        if (loss > 0) this.ipt(j, ['-A', 'KW-LOSS', '-s', this.addr(i), '-m', 'statistic', '--mode', 'random', '--probability', String(loss), '-j', 'DROP'])
        const oneWay = (this.shapes[i].rttMs + this.shapes[j].rttMs) / 2
        const jitter = Math.max(this.shapes[i].jitterMs, this.shapes[j].jitterMs)
        this.delaylines[j]?.stdin?.write(`set ${i} ${oneWay} ${jitter}\n`)
        // undelayed pairs bypass the delay line: at 0 ms the figures are the kernel's alone
        if (oneWay > 0 || jitter > 0) this.ipt(j, ['-A', 'KW-DELAY', '-s', this.addr(i), '-j', 'NFQUEUE', '--queue-num', String(i)])
      }
    }
  }

  /** Drops every packet between nodes of different groups (on arrival, both ways). */
  partition (groups: number[][]): void {
    const groupOf = (i: number): number => groups.findIndex((g) => g.includes(i))
    for (let j = 0; j < this.size; j++) {
      this.ipt(j, ['-F', 'KW-PART'])
      for (let i = 0; i < this.size; i++) {
        if (i !== j && groupOf(i) !== groupOf(j)) this.ipt(j, ['-A', 'KW-PART', '-s', this.addr(i), '-j', 'DROP'])
      }
    }
    this.partitioned = true
  }

  heal (): void {
    for (let j = 0; j < this.size; j++) this.ipt(j, ['-F', 'KW-PART'])
    this.partitioned = false
  }

  /**
   * Traffic between the nodes so far, summed over the namespaces: bytes and packets that
   * arrived from peers (before loss), and TCP segments sent and retransmitted (/proc/net/snmp
   * of each namespace; HTTP from the management address is lossless and adds no retransmits).
   */
  traffic (): { peerBytes: number, peerPackets: number, tcpOutSegs: number, tcpRetransSegs: number } {
    const out = { peerBytes: 0, peerPackets: 0, tcpOutSegs: 0, tcpRetransSegs: 0 }
    for (let i = 0; i < this.size; i++) {
      const rules = sh('ip', ['netns', 'exec', this.ns(i), 'iptables', '-w', '-t', 'mangle', '-L', 'KW-COUNT', '-v', '-x', '-n']).split('\n')
        .filter((l) => /^\s*\d+\s+\d+\s+RETURN/.test(l))
      const fields = rules[1]?.trim().split(/\s+/) ?? []
      out.peerPackets += Number(fields[0] ?? 0)
      out.peerBytes += Number(fields[1] ?? 0)
      const snmp = sh('ip', ['netns', 'exec', this.ns(i), 'cat', '/proc/net/snmp']).split('\n').filter((l) => l.startsWith('Tcp:'))
      if (snmp.length === 2) {
        const names = snmp[0].split(/\s+/)
        const values = snmp[1].split(/\s+/).map(Number)
        out.tcpOutSegs += values[names.indexOf('OutSegs')] ?? 0
        out.tcpRetransSegs += values[names.indexOf('RetransSegs')] ?? 0
      }
    }
    return out
  }

  /** pids of the delay lines (`ip netns exec` execs in place: the pid is python's), for their CPU */
  get delaylinePids (): number[] {
    return this.delaylines.map((d) => d.pid ?? 0).filter((p) => p > 0)
  }

  get isPartitioned (): boolean {
    return this.partitioned
  }

  /** Kills what runs in the namespaces, removes them and the bridge. Synchronous: exit hooks call it. */
  destroy (): void {
    if (this.destroyed) return
    this.destroyed = true
    live.delete(this)
    for (const d of this.delaylines) {
      try { d.kill('SIGKILL') } catch { /* gone */ }
    }
    for (let i = 0; i < this.size; i++) killNamespace(this.ns(i))
    trySh('ip', ['link', 'del', this.bridge])
  }
}
