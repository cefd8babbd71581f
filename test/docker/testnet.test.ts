/**
 * `npm run test:docker`: the Docker testnet on a real engine (not part of `npm test`).
 * Starts a private dockerd when none answers (root, vfs, no iptables, state in a temporary
 * folder), builds a Debian bookworm base locally (no image registry is reachable: debootstrap +
 * `docker import`, plus this machine's Node 24 and npm), builds the node and sidecar images from
 * docker/Dockerfile on it, brings docker/compose.yml up and checks: four validators commit, a
 * stopped container drains (exit 0) and catches up when started again, every node has the same
 * block hash at a common height, and a fifth node joins given only a peer multiaddr.
 * Everything it made is removed at the end, also when a step fails.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { copyFile, cp, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { REPO_ROOT, waitFor } from '../helpers/node-process.js'

const CACHE_DIR = process.env.KITH_DOCKER_CACHE ?? '/var/cache/kith-docker-test'
const DEBIAN_MIRROR = process.env.KITH_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian'
const PROJECT = `kithtest${process.pid}`
const BLOCK_MS = 500
const BASE_IMAGE = 'kith-test-base:bookworm'
const DEBIAN_IMAGE = 'kith-test-debian:bookworm'
const IMAGES = ['kith:local', 'kith-sidecar:local', BASE_IMAGE, DEBIAN_IMAGE]

interface Run { stdout: string, stderr: string }

/** Runs a command; a failure names the command and carries its stderr. */
async function run (cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv, timeoutMs?: number, input?: string } = {}): Promise<Run> {
  return await new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { env: opts.env ?? env, timeout: opts.timeoutMs ?? 120_000, maxBuffer: 64 * 2 ** 20 }, (err, stdout, stderr) => {
      if (err !== null) reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${stderr.slice(-4000)}`))
      else resolve({ stdout, stderr })
    })
    if (opts.input !== undefined) child.stdin?.end(opts.input)
  })
}

let env: NodeJS.ProcessEnv = { ...process.env }
const timings: Record<string, number> = {}
async function timed<T> (name: string, fn: () => Promise<T>): Promise<T> {
  const t0 = Date.now()
  try {
    return await fn()
  } finally {
    timings[name] = (Date.now() - t0) / 1000
    console.log(`# ${name}: ${timings[name].toFixed(1)} s`)
  }
}

async function daemonAnswers (): Promise<boolean> {
  try {
    await run('docker', ['version', '--format', '{{.Server.Version}}'], { timeoutMs: 10_000 })
    return true
  } catch {
    return false
  }
}

/**
 * overlay2 when this kernel and file system mount an overlay (vfs copies every layer whole: a
 * build took 7.5 min with it against 2 min with overlay2 here); vfs works everywhere.
 */
async function overlayWorks (dir: string): Promise<boolean> {
  const probe = join(dir, 'overlay-probe')
  for (const d of ['lower', 'upper', 'work', 'merged']) await mkdir(join(probe, d), { recursive: true })
  try {
    await run('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${probe}/lower,upperdir=${probe}/upper,workdir=${probe}/work`, `${probe}/merged`], { timeoutMs: 10_000 })
    await run('umount', [`${probe}/merged`], { timeoutMs: 10_000 })
    return true
  } catch {
    return false
  } finally {
    await rm(probe, { recursive: true, force: true })
  }
}

/** dockerd leaves its network namespace bind mounts (exec-root/netns) mounted: they would stop the rm */
async function unmountUnder (dir: string): Promise<void> {
  const mounts = (await readFile('/proc/self/mounts', 'utf8')).split('\n').map((l) => l.split(' ')[1]).filter((m) => m !== undefined && m.startsWith(dir + '/'))
  for (const m of mounts.sort().reverse()) await run('umount', ['-l', m], { timeoutMs: 10_000 }).catch(() => {})
}

async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')))
    })
  })
}

/** `docker compose` (v2) where the plugin exists, else Debian's `docker-compose` 1.29 */
async function composeCommand (): Promise<string[]> {
  try {
    await run('docker', ['compose', 'version'], { timeoutMs: 10_000 })
    return ['docker', 'compose']
  } catch {
    await run('docker-compose', ['version'], { timeoutMs: 10_000 }).catch(() => {
      throw new Error('neither `docker compose` nor `docker-compose` runs: apt-get install docker-compose')
    })
    return ['docker-compose']
  }
}

describe('the Docker testnet on a real engine', { timeout: 30 * 60_000 }, () => {
  let work: string
  let daemon: ChildProcess | undefined
  let compose: string[]
  let httpPort: number
  const containers = new Map<string, string>()
  const t0 = Date.now()
  const STEPS = 4
  /** steps that reached their end: each test counts itself as its last line */
  let passed = 0

  /** the compose command; `join` adds the joiner's profile (with it, a plain `up` would start node4 too) */
  const dc = async (args: string[], timeoutMs = 300_000, withJoiner = false): Promise<Run> =>
    await run(compose[0], [...compose.slice(1), '-f', join(REPO_ROOT, 'docker', 'compose.yml'), ...(withJoiner ? ['--profile', 'join'] : []), ...args], { timeoutMs })

  async function container (service: string): Promise<string> {
    const known = containers.get(service)
    if (known !== undefined) return known
    const id = (await dc(['ps', '-q', service], 60_000, service === 'node4')).stdout.trim()
    assert.ok(id !== '', `no container for ${service}`)
    containers.set(service, id)
    return id
  }

  /** GET from inside the service's container (its own loopback), as JSON */
  async function api<T> (service: string, path: string): Promise<T> {
    if (service === 'node0') {
      const res = await fetch(`http://127.0.0.1:${httpPort}${path}`, { signal: AbortSignal.timeout(5000) })
      if (!res.ok) throw new Error(`node0 ${path}: ${res.status}`)
      return await res.json() as T
    }
    const script = `fetch('http://127.0.0.1:8080${path}').then(async (r) => { if (!r.ok) process.exit(3); process.stdout.write(await r.text()) }, () => process.exit(4))`
    const { stdout } = await run('docker', ['exec', await container(service), 'node', '-e', script], { timeoutMs: 15_000 })
    return JSON.parse(stdout) as T
  }
  const height = async (service: string): Promise<number> => (await api<{ height: number }>(service, '/api/netstats')).height
  const heightOrZero = async (service: string): Promise<number> => await height(service).catch(() => 0)
  const hashAt = async (service: string, h: number): Promise<string> => (await api<{ hash: string }>(service, `/api/blocks/${h}`)).hash

  async function sameHashEverywhere (services: string[]): Promise<number> {
    const common = Math.min(...await Promise.all(services.map(height)))
    assert.ok(common >= 1, 'every node has committed a block')
    const hashes = await Promise.all(services.map(async (s) => await hashAt(s, common)))
    assert.equal(new Set(hashes).size, 1, `one block hash at height ${common}: ${services.map((s, i) => `${s}=${hashes[i]}`).join(' ')}`)
    return common
  }

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'kith-docker-'))
    await run('docker', ['--version'], { timeoutMs: 10_000 }).catch(() => { throw new Error('no docker CLI: apt-get install docker.io') })
    if (!await daemonAnswers()) {
      // no engine: start a private one whose state all lives in `work`
      if (process.getuid?.() !== 0) throw new Error('no Docker daemon answers, and starting one needs root')
      const dockerd = ['/usr/sbin/dockerd', '/usr/bin/dockerd'].find((p) => existsSync(p))
      if (dockerd === undefined) throw new Error('no Docker daemon answers and there is no dockerd: apt-get install docker.io')
      const sock = join(work, 'docker.sock')
      env = { ...process.env, DOCKER_HOST: `unix://${sock}` }
      await mkdir(join(work, 'exec'))
      const driver = process.env.KITH_DOCKER_STORAGE_DRIVER ?? (await overlayWorks(work) ? 'overlay2' : 'vfs')
      // no iptables (no NAT: builds use the host network) and no default bridge
      daemon = spawn(dockerd, [
        '--storage-driver', driver, '--iptables=false', '--ip6tables=false', '--bridge=none',
        '--data-root', join(work, 'data'), '--exec-root', join(work, 'exec'), '--pidfile', join(work, 'docker.pid'),
        '--host', `unix://${sock}`
      ], { stdio: ['ignore', 'ignore', 'pipe'] })
      let log = ''
      daemon.stderr?.on('data', (chunk: Buffer) => { log = (log + chunk.toString()).slice(-8000) })
      await waitFor(daemonAnswers, 60_000, { intervalMs: 500, message: 'dockerd did not answer within 60 s' }).catch((err: Error) => {
        throw new Error(`${err.message}\n${log}`)
      })
      console.log(`# started dockerd (pid ${String(daemon.pid)}, ${driver}) with its state in ${work}`)
    }
    compose = await composeCommand()
    httpPort = await freePort()
    env = { ...env, COMPOSE_PROJECT_NAME: PROJECT, KITH_HTTP_PORT: `127.0.0.1:${httpPort}`, KITH_BLOCK_INTERVAL_MS: String(BLOCK_MS),
      // a block every interval: the test times catch-up and joining by the chain's steady growth
      KITH_EMPTY_BLOCKS: 'true' }
  })

  after(async () => {
    // best effort, each step on its own: one failing must not leave the rest behind
    const quiet = async (fn: () => Promise<unknown>): Promise<void> => { await fn().catch((err: Error) => console.log(`# teardown: ${err.message.split('\n')[0]}`)) }
    if (compose !== undefined) {
      // the services' last words, only when a step failed
      if (passed < STEPS) await quiet(async () => { console.log((await dc(['logs', '--no-color', '--tail', '30'], 60_000, true)).stdout) })
      await quiet(async () => await dc(['down', '--volumes', '--remove-orphans', '--timeout', '15'], 120_000, true))
    }
    if (daemon !== undefined) {
      daemon.kill('SIGTERM')
      const exited = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 30_000)
        daemon?.once('exit', () => { clearTimeout(timer); resolve(true) })
      })
      if (!exited) daemon.kill('SIGKILL')
      await quiet(async () => { await unmountUnder(work) })
    } else {
      await quiet(async () => await run('docker', ['rmi', '-f', ...IMAGES], { timeoutMs: 120_000 }))
    }
    if (work !== undefined) await quiet(async () => await rm(work, { recursive: true, force: true, maxRetries: 3 }))
    console.log(`# total: ${((Date.now() - t0) / 1000).toFixed(1)} s; timings ${JSON.stringify(timings)}`)
  })

  test('builds a Debian base, the node image and the sidecar image', async () => {
    const tarball = join(CACHE_DIR, 'bookworm-minbase.tar')
    await timed('base image (debootstrap or cache, import, node + npm)', async () => {
      if (!existsSync(tarball)) {
        const root = join(work, 'rootfs')
        // passwd: the Dockerfile's useradd, as in the official node image
        await run('debootstrap', ['--variant=minbase', '--include=passwd', 'bookworm', root, DEBIAN_MIRROR], { timeoutMs: 900_000 })
          .catch((err: Error) => { throw new Error(`debootstrap failed (apt-get install debootstrap; mirror ${DEBIAN_MIRROR}): ${err.message}`) })
        await mkdir(CACHE_DIR, { recursive: true })
        await run('tar', ['-C', root, '-cf', `${tarball}.part`, '.'], { timeoutMs: 300_000 })
        await run('mv', [`${tarball}.part`, tarball])
        await rm(root, { recursive: true, force: true })
      }
      await run('docker', ['import', tarball, DEBIAN_IMAGE], { timeoutMs: 300_000 })
      // The base stands in for the official node:24-bookworm-slim: Node 24 and npm where that image
      // has them, from this machine (the pinned `node` package and the npm running this test), and
      // this machine's CA bundle (npm ci in the build must trust what npm here trusts).
      const ctx = join(work, 'base')
      await mkdir(ctx)
      await copyFile(await realpath(join(REPO_ROOT, 'node_modules', 'node', 'bin', 'node')), join(ctx, 'node'))
      const npmCli = process.env.npm_execpath ?? join((await run('npm', ['root', '-g'])).stdout.trim(), 'npm', 'bin', 'npm-cli.js')
      await cp(dirname(dirname(await realpath(npmCli))), join(ctx, 'npm'), { recursive: true })
      const ca = '/etc/ssl/certs/ca-certificates.crt'
      const hasCa = existsSync(ca)
      if (hasCa) await copyFile(ca, join(ctx, 'ca.crt'))
      await writeFile(join(ctx, 'Dockerfile'), [
        `FROM ${DEBIAN_IMAGE}`,
        'COPY node /usr/local/bin/node',
        'COPY npm /usr/local/lib/node_modules/npm',
        ...(hasCa ? ['COPY ca.crt /etc/ssl/certs/ca-certificates.crt', 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt'] : []),
        'RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && node --version && npm --version'
      ].join('\n') + '\n')
      await run('docker', ['build', '-q', '-t', BASE_IMAGE, ctx], { timeoutMs: 300_000 })
    })
    const commit = (await run('git', ['-C', REPO_ROOT, 'rev-parse', 'HEAD']).catch(() => ({ stdout: '' }))).stdout.trim()
    const build = async (target: string, tag: string): Promise<void> => {
      // --network host: the bridge has no NAT here, and npm ci and apt-get need their registries
      await run('docker', ['build', '--network', 'host', '--build-arg', `BASE=${BASE_IMAGE}`, '--build-arg', `KITH_BUILD_COMMIT=${commit}`,
        '--target', target, '-t', tag, '-f', join(REPO_ROOT, 'docker', 'Dockerfile'), REPO_ROOT], { timeoutMs: 1_200_000 })
    }
    await timed('node image build', async () => { await build('runtime', 'kith:local') })
    await timed('sidecar image build', async () => { await build('sidecar', 'kith-sidecar:local') })
    const size = (await run('docker', ['image', 'inspect', '-f', '{{.Size}}', 'kith:local'])).stdout.trim()
    console.log(`# kith:local is ${(Number(size) / 2 ** 20).toFixed(0)} MiB (base ${(Number((await run('docker', ['image', 'inspect', '-f', '{{.Size}}', BASE_IMAGE])).stdout.trim()) / 2 ** 20).toFixed(0)} MiB)`)
    const user = (await run('docker', ['image', 'inspect', '-f', '{{.Config.User}}', 'kith:local'])).stdout.trim()
    assert.equal(user, 'kith', 'the node runs as a non-root user')
    const version = (await run('docker', ['run', '--rm', '--entrypoint', 'node', 'kith:local', '--version'])).stdout.trim()
    assert.match(version, /^v24\./)
    // the runtime stage has no dev dependencies, and the pinned second Node was left out
    const listing = (await run('docker', ['run', '--rm', '--entrypoint', 'ls', 'kith:local', '/kith/node_modules'])).stdout.split('\n')
    for (const dev of ['typescript', 'eslint', 'node']) assert.ok(!listing.includes(dev), `${dev} is not in the runtime image`)
    passed += 1
  })

  test('four validators in their own containers commit, with healthy health checks', async () => {
    await timed('bring-up (compose up to height 2 on all four)', async () => {
      await dc(['up', '-d', '--no-build'], 600_000)
      await waitFor(async () => (await Promise.all(['node0', 'node1', 'node2', 'node3'].map(heightOrZero))).every((h) => h >= 2), 180_000,
        { intervalMs: 1000, message: 'the four validators did not all reach height 2 within 180 s' })
    })
    const ips = new Set<string>()
    for (const s of ['node0', 'node1', 'node2', 'node3']) {
      const ip = (await run('docker', ['inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', await container(s)])).stdout.trim()
      assert.match(ip, /^\d+\.\d+\.\d+\.\d+$/, `${s} has an address of its own`)
      ips.add(ip)
    }
    assert.equal(ips.size, 4, 'four containers, four addresses')
    const health = async (): Promise<string[]> => await Promise.all(['node0', 'node1', 'node2', 'node3', 'sidecar'].map(async (s) =>
      (await run('docker', ['inspect', '-f', '{{.State.Health.Status}}', await container(s)])).stdout.trim()))
    await waitFor(async () => (await health()).every((h) => h === 'healthy'), 90_000, { intervalMs: 1000, message: 'not every service became healthy' })
      .catch(async (err: Error) => { throw new Error(`${err.message}: ${(await health()).join(' ')}`) })
    // the nodes reach the sidecar by its service name, as SVC_MEDIA_SIDECAR_URL says
    const sidecar = await run('docker', ['exec', await container('node1'), 'node', '-e',
      'fetch(process.env.SVC_MEDIA_SIDECAR_URL + "/v1/health").then(async (r) => process.stdout.write(r.status + " " + await r.text()), () => process.exit(4))'])
    assert.match(sidecar.stdout, /^200 /, `the sidecar from node1: ${sidecar.stdout}`)
    await sameHashEverywhere(['node0', 'node1', 'node2', 'node3'])
    passed += 1
  })

  test('a validator stopped for 10 s drains, exits 0, and catches up once started again', async () => {
    const id = await container('node2')
    const stopMs = await timed('docker stop node2', async () => {
      const t = Date.now()
      await run('docker', ['stop', id], { timeoutMs: 60_000 })
      return Date.now() - t
    })
    const state = JSON.parse((await run('docker', ['inspect', '-f', '{{json .State}}', id])).stdout) as { ExitCode: number, OOMKilled: boolean }
    assert.equal(state.ExitCode, 0, 'SIGTERM reached the node and its drain ended the process with 0')
    assert.ok(stopMs < 10_000, `docker stop took ${stopMs} ms: the node did not stop on SIGTERM`)
    const logs = await run('docker', ['logs', '--tail', '20', id])
    assert.match(logs.stdout + logs.stderr, /"msg":"shutting down"[\s\S]*"msg":"stopped"/, 'the drain was logged')
    const before = await height('node0')
    await new Promise((resolve) => setTimeout(resolve, 10_000))
    const during = await height('node0')
    assert.ok(during > before, `three of four validators go on committing (${before} -> ${during})`)
    await run('docker', ['start', id])
    const target = await height('node0')
    await timed('catch-up after restart', async () => {
      await waitFor(async () => await heightOrZero('node2') >= target, 120_000, { intervalMs: 500, message: `node2 did not reach height ${target} within 120 s` })
    })
    // and goes on with the others
    await waitFor(async () => await heightOrZero('node2') >= target + 2, 60_000, { intervalMs: 500, message: 'node2 does not follow new blocks' })
    await sameHashEverywhere(['node0', 'node1', 'node2', 'node3'])
    passed += 1
  })

  test('a fifth node joins given only a peer multiaddr and follows the chain', async () => {
    const info = await api<{ node_id: string }>('node0', '/api/network-info')
    assert.match(info.node_id, /^12D3Koo/)
    env = { ...env, KITH_PEER: `/dns4/node0/tcp/4001/p2p/${info.node_id}` }
    await dc(['up', '-d', '--no-build', '--no-deps', 'node4'], 300_000, true)
    const target = await height('node0')
    await timed('join (node4 up to node0\'s height)', async () => {
      await waitFor(async () => await heightOrZero('node4') >= target, 120_000, { intervalMs: 500, message: `node4 did not reach height ${target} within 120 s` })
    })
    await sameHashEverywhere(['node0', 'node1', 'node2', 'node3', 'node4'])
    const stats = await api<{ validator_count: number }>('node4', '/api/netstats')
    assert.equal(stats.validator_count, 4, 'the joiner follows; it is not a validator')
    passed += 1
  })

})
