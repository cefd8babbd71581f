/**
 * Processes the HTTP benchmarks start: a `kith init` home, a `bin/kith start` node on a free
 * port, a bare Koa app (the machine's floor), and this benchmark file itself in a child process
 * for work whose GC pauses or CPU must not be counted as the node's latency.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { REPO_ROOT, freePort, nodeBinary, request, sleep, stopChild } from './harness.js'
import { closedLoop, type LoadRequest } from './load.js'

const execFileP = promisify(execFile)

export const STARTUP_TIMEOUT_MS = 60_000

/** The environment of a `bin/kith` child: the pinned Node's bin first on PATH. */
export function kithEnv (extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${path.join(REPO_ROOT, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH ?? ''}`, ...extra }
}

/** Polls `GET urlPath` until it answers 200; throws (and kills the child) if it exits or `timeoutMs` passes. */
export async function waitForHttp (child: ChildProcess, port: number, urlPath: string, output: () => string, timeoutMs = STARTUP_TIMEOUT_MS): Promise<void> {
  const agent = new http.Agent({ keepAlive: false })
  const deadline = Date.now() + timeoutMs
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`process exited during startup (code ${child.exitCode}):\n${output()}`)
      try {
        const res = await request(agent, port, 'GET', urlPath)
        if (res.status === 200) return
      } catch { /* not listening yet */ }
      if (Date.now() > deadline) { child.kill('SIGKILL'); throw new Error(`no answer on port ${port} within ${timeoutMs} ms:\n${output()}`) }
      await sleep(50)
    }
  } finally {
    agent.destroy()
  }
}

export interface Rss {
  total: number
  /** private memory: the JS heap, malloc, thread stacks */
  anon: number
  /** pages of mapped files (lmdb maps its stores): the kernel may drop them under memory pressure */
  file: number
}

/** VmRSS of `pid` and its anonymous and file-backed parts, bytes (NaN when unreadable). */
export function rssOf (pid: number): Rss {
  let status = ''
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8')
  } catch { /* gone */ }
  const field = (name: string): number => {
    const kb = new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1]
    return kb === undefined ? NaN : Number(kb) * 1024
  }
  return { total: field('VmRSS'), anon: field('RssAnon'), file: field('RssFile') }
}

/** VmRSS of `pid`, bytes (NaN when unreadable). */
export function rssBytes (pid: number): number {
  return rssOf(pid).total
}

/** `bin/kith init --home <home> [...args]`; the error carries kith's stderr. */
export async function kithInit (home: string, args: string[] = []): Promise<void> {
  try {
    await execFileP(nodeBinary(), [path.join(REPO_ROOT, 'bin', 'kith'), 'init', '--home', home, ...args], { env: kithEnv(), maxBuffer: 1 << 20, timeout: STARTUP_TIMEOUT_MS })
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? ''
    throw new Error(`\`kith init\` failed: ${stderr.trim() || String(err).slice(0, 300)}`, { cause: err })
  }
}

export interface KithProcess {
  child: ChildProcess
  pid: number
  port: number
  /** ms from spawn to the first 200 of the ready path */
  startMs: number
  /** the last 20,000 characters the node wrote (stdout and stderr) */
  output: () => string
  /** lines the node has written so far */
  lines: () => number
  /** SIGINT, then SIGKILL after 20 s; resolves once it has exited */
  stop: () => Promise<void>
}

/**
 * `bin/kith start --home <home>` on a free loopback port (libp2p on a free port too), waiting
 * until `GET /api/well-known-version` answers. `nodeArgs` go to node itself (--cpu-prof,
 * --trace-gc); `onOutput` sees everything the node writes; `log` hears of an exit before `stop`.
 */
export async function startKith (opts: {
  home: string
  args?: string[]
  env?: Record<string, string>
  nodeArgs?: string[]
  logLevel?: string
  /** libp2p's listener; any free loopback port when absent */
  p2pListen?: string
  timeoutMs?: number
  onOutput?: (text: string) => void
  log?: (line: string) => void
}): Promise<KithProcess> {
  const port = await freePort()
  let out = ''
  let lines = 0
  let stopping = false
  const t0 = performance.now()
  // KITH_BENCH_HTTP_WORKERS=N runs the benchmark's nodes behind N HTTP edge threads (--http-workers)
  const edges = process.env.KITH_BENCH_HTTP_WORKERS
  const edgeArgs = edges !== undefined && edges !== '' && !(opts.args ?? []).includes('--http-workers') ? ['--http-workers', edges] : []
  const child = spawn(nodeBinary(), [...(opts.nodeArgs ?? []), path.join(REPO_ROOT, 'bin', 'kith'), 'start', '--home', opts.home,
    '--http-addr', `127.0.0.1:${port}`, '--p2p-listen', opts.p2pListen ?? '/ip4/127.0.0.1/tcp/0', '--log-level', opts.logLevel ?? 'warn', ...edgeArgs, ...(opts.args ?? [])], {
    env: kithEnv(opts.env),
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const onData = (d: Buffer): void => {
    const text = d.toString()
    lines += text.split('\n').filter((l) => l.trim() !== '').length
    out = (out + text).slice(-20_000)
    opts.onOutput?.(text)
  }
  child.stdout?.on('data', onData)
  child.stderr?.on('data', onData)
  child.once('exit', (code, signal) => { if (!stopping) opts.log?.(`the node exited during the run (code ${String(code)}, signal ${String(signal)}); its output:\n${out.slice(-4000)}`) })
  await waitForHttp(child, port, '/api/well-known-version', () => out, opts.timeoutMs)
  return {
    child,
    pid: child.pid as number,
    port,
    startMs: performance.now() - t0,
    output: () => out,
    lines: () => lines,
    stop: async () => {
      stopping = true
      await stopChild(child)
    }
  }
}

export interface BareApp { port: number, pid: number, child: ChildProcess }

const KOA_APP = `
const Koa = require(process.env.KOA_PATH)
const app = new Koa()
app.use((ctx) => { ctx.body = { ok: true, name: 'kith', version: '0.0.0' } })
app.listen(Number(process.env.PORT), '127.0.0.1')
`

/** The same, answering every request with the JSON text of the file PAGE_FILE (a page a node served). */
const KOA_PAGE_APP = `
const Koa = require(process.env.KOA_PATH)
const page = require('node:fs').readFileSync(process.env.PAGE_FILE, 'latin1')
const app = new Koa()
app.use((ctx) => { ctx.type = 'application/json'; ctx.body = page })
app.listen(Number(process.env.PORT), '127.0.0.1')
`

export const bareGet = (): LoadRequest => ({ method: 'GET', path: '/' })

/**
 * The least a server must do for a POST of a JSON body on one HTTP stack, on `THREADS` threads of
 * one process sharing the port (SO_REUSEPORT): read the body, JSON.parse it, answer a small JSON.
 * GETs are answered without a body. Its own source comes in FLOOR_SRC, for the worker threads.
 */
const FLOOR_APP = `
const { Worker, isMainThread } = require('node:worker_threads')
const answer = (body) => JSON.stringify(body === undefined ? { ok: true } : { id: String(body.envelope && body.envelope.nonce).slice(0, 8), status: 'stored' })
const listen = { port: Number(process.env.PORT), host: '127.0.0.1', reusePort: true }
if (process.env.STACK === 'koa') {
  const Koa = require(process.env.KOA_PATH)
  const app = new Koa()
  app.use(async (ctx) => {
    let body
    if (ctx.method === 'POST') {
      const chunks = []
      for await (const chunk of ctx.req) chunks.push(chunk)
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    }
    ctx.type = 'application/json'
    ctx.body = answer(body)
  })
  app.listen(listen)
} else {
  require('node:http').createServer((req, res) => {
    const chunks = []
    req.on('data', (chunk) => chunks.push(chunk))
    req.on('end', () => {
      const text = answer(req.method === 'POST' ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined)
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) })
      res.end(text)
    })
  }).listen(listen)
}
if (isMainThread) for (let i = 1; i < Number(process.env.THREADS); i++) new Worker(process.env.FLOOR_SRC, { eval: true })
`

/**
 * A floor for a write route: a bare app (Koa, or node:http alone) on `threads` threads of one
 * process (so /proc/<pid> counts all of them) that reads and JSON-parses every POST body and does
 * nothing else. A node that also checks, stores and gossips what it is sent cannot answer more
 * of the same POSTs on the same cores. Warmed up for 1 s with GETs; idle until measured.
 */
export async function startBareFloor (opts: { warmupConcurrency: number, threads: number, stack: 'koa' | 'node:http' }): Promise<BareApp> {
  return await startBareApp(FLOOR_APP, { STACK: opts.stack, THREADS: String(opts.threads), FLOOR_SRC: FLOOR_APP }, opts.warmupConcurrency)
}

/**
 * A minimal Koa app in its own process (one middleware answering a small JSON body, or the text
 * of `pageFile` when given), warmed up for 1 s at `warmupConcurrency`; idle until measured.
 */
export async function startBareKoa (opts: { warmupConcurrency: number, pageFile?: string }): Promise<BareApp> {
  return opts.pageFile === undefined
    ? await startBareApp(KOA_APP, {}, opts.warmupConcurrency)
    : await startBareApp(KOA_PAGE_APP, { PAGE_FILE: opts.pageFile }, opts.warmupConcurrency)
}

/** Runs `script` (node -e) with PORT and KOA_PATH besides `env`, waits for its first answer, then warms it up with GETs for 1 s. */
async function startBareApp (script: string, env: Record<string, string>, warmupConcurrency: number): Promise<BareApp> {
  const port = await freePort()
  let out = ''
  const child = spawn(nodeBinary(), ['-e', script], {
    env: { ...process.env, PORT: String(port), KOA_PATH: path.join(REPO_ROOT, 'node_modules', 'koa'), ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  child.stdout?.on('data', (d: Buffer) => { out += d.toString() })
  child.stderr?.on('data', (d: Buffer) => { out += d.toString() })
  try {
    await waitForHttp(child, port, '/', () => out)
    const pid = child.pid as number
    await closedLoop({ port, pid, concurrency: warmupConcurrency, durationMs: 1000, next: bareGet })
    return { port, pid, child }
  } catch (err) {
    await stopChild(child)
    throw err
  }
}

/**
 * Runs the benchmark file `scriptUrl` with `mode` in a child process and parses the JSON it
 * writes to stdout (see `runChildMode`); each line of its stderr goes to `log` when given.
 * `onSpawn` gets the child (to end it early by closing its stdin, for modes that read it).
 */
export async function inChild<T> (scriptUrl: string, mode: string, args: string[], log?: (l: string) => void, onSpawn?: (child: ChildProcess) => void): Promise<T> {
  const child = spawn(nodeBinary(), [fileURLToPath(scriptUrl), mode, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
  onSpawn?.(child)
  let out = ''
  let err = ''
  child.stdout.on('data', (d: Buffer) => { out += d.toString() })
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString()
    if (log === undefined) return
    for (let nl = err.indexOf('\n'); nl >= 0; nl = err.indexOf('\n')) {
      log(err.slice(0, nl))
      err = err.slice(nl + 1)
    }
  })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  if (code !== 0) throw new Error(`the ${mode} child exited with ${String(code)}: ${err.slice(-2000)}`)
  return JSON.parse(out) as T
}

/**
 * When `scriptUrl` is the script this process was started with and its first argument names one
 * of `modes`, runs that mode, writes its result as JSON to stdout and answers true.
 */
export function runChildMode (scriptUrl: string, modes: Record<string, (args: string[]) => Promise<unknown>>): boolean {
  if (process.argv[1] === undefined || scriptUrl !== pathToFileURL(process.argv[1]).href) return false
  const mode = process.argv[2] !== undefined ? modes[process.argv[2]] : undefined
  if (mode === undefined) return false
  mode(process.argv.slice(3)).then((r) => {
    process.stdout.write(JSON.stringify(r))
  }, (err: unknown) => {
    console.error(err)
    process.exitCode = 1
  })
  return true
}
