/**
 * Summarises a V8 .cpuprofile (as written by `node --cpu-prof`): self time per function, self
 * time per component (our code by module, koa, zod, lmdb, node internals, GC...) and the
 * inclusive time of a few functions on the submit and block paths.
 */
import { readFileSync } from 'node:fs'

interface CallFrame {
  functionName: string
  url: string
  lineNumber: number
  columnNumber: number
}

interface ProfileNode {
  id: number
  callFrame: CallFrame
  hitCount?: number
  children?: number[]
}

interface CpuProfile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples: number[]
  timeDeltas: number[]
}

export interface ProfileRow {
  name: string
  ms: number
  /** share of busy (non-idle) time, 0..1 */
  share: number
}

export interface ProfileSummary {
  totalMs: number
  idleMs: number
  busyMs: number
  topFunctions: ProfileRow[]
  components: ProfileRow[]
  /** inclusive time of the named functions (outermost occurrence on a stack only) */
  inclusive: ProfileRow[]
}

/** A short, stable location: path from the package or from dist/, with the 1-based line. */
export function shortUrl (url: string): string {
  if (url === '') return ''
  let u = url.replace(/^file:\/\//, '')
  const nm = u.lastIndexOf('/node_modules/')
  if (nm >= 0) u = u.slice(nm + '/node_modules/'.length)
  else {
    const dist = u.indexOf('/dist/')
    if (dist >= 0) u = u.slice(dist + '/dist/'.length)
  }
  return u
}

/** Which part of the stack a frame belongs to. */
export function componentOf (frame: CallFrame): string {
  const { functionName: fn, url } = frame
  if (fn === '(garbage collector)') return 'V8 garbage collector'
  if (fn === '(program)') return 'V8/native (program: outside JS, e.g. libuv, parser, compiler)'
  if (fn === '(idle)') return '(idle)'
  if (url === '') return `native builtins (${fn === '' ? 'anonymous' : fn} & co.)`
  const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)
  if (m !== null) return m[1] === 'node' ? 'node' : `npm: ${m[1]}`
  if (url.startsWith('node:')) {
    if (/node:internal\/(http|_http|streams?|net|stream_base|js_stream)|node:_http|node:http|node:net|node:stream/.test(url)) return 'node: http/net/streams'
    return 'node: other internals'
  }
  const d = /\/dist\/(src\/[^/]+)\//.exec(url)
  if (d !== null) return `kith ${d[1]}`
  return url
}

const NATIVE_COMPONENT_GROUP = /^native builtins/

/** `skipMs` / `untilMs`: only the samples from `skipMs` to `untilMs` after the profile's start (leave out a process's start-up, or keep only it). */
export function summariseProfile (path: string, opts: { top?: number, inclusive?: string[], skipMs?: number, untilMs?: number } = {}): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile
  const byId = new Map<number, ProfileNode>()
  for (const node of profile.nodes) byId.set(node.id, node)
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)

  // Self time per node from the sample stream (timeDeltas[i] precedes samples[i]; the delta
  // that follows a sample is the time it stood for).
  const selfUs = new Map<number, number>()
  const skipUs = (opts.skipMs ?? 0) * 1000
  const untilUs = (opts.untilMs ?? Infinity) * 1000
  let elapsedUs = 0
  for (let i = 0; i < profile.samples.length; i++) {
    elapsedUs += profile.timeDeltas[i] ?? 0
    if (elapsedUs < skipUs || elapsedUs > untilUs) continue
    const dt = profile.timeDeltas[i + 1] ?? 0
    const id = profile.samples[i]
    selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, dt))
  }

  let totalUs = 0
  let idleUs = 0
  const fnTotals = new Map<string, number>()
  const compTotals = new Map<string, number>()
  for (const [id, us] of selfUs) {
    const frame = (byId.get(id) as ProfileNode).callFrame
    totalUs += us
    if (frame.functionName === '(idle)') { idleUs += us; continue }
    const where = shortUrl(frame.url)
    const key = `${frame.functionName === '' ? '(anonymous)' : frame.functionName}${where === '' ? '' : ` ${where}:${frame.lineNumber + 1}`}`
    fnTotals.set(key, (fnTotals.get(key) ?? 0) + us)
    let comp = componentOf(frame)
    // Native builtins (JSON.parse, RegExp, napi calls...) are charged to the first JS caller's component.
    if (NATIVE_COMPONENT_GROUP.test(comp)) {
      let p = parent.get(id)
      while (p !== undefined && (byId.get(p) as ProfileNode).callFrame.url === '' && !(byId.get(p) as ProfileNode).callFrame.functionName.startsWith('(')) p = parent.get(p)
      const caller = p === undefined ? undefined : (byId.get(p) as ProfileNode).callFrame
      comp = caller === undefined || caller.url === '' ? 'native builtins (no JS caller)' : `${componentOf(caller)} (native calls)`
    }
    compTotals.set(comp, (compTotals.get(comp) ?? 0) + us)
  }
  const busyUs = totalUs - idleUs
  const rows = (m: Map<string, number>, n: number): ProfileRow[] => [...m.entries()]
    .sort((a, b) => b[1] - a[1]).slice(0, n)
    .map(([name, us]) => ({ name, ms: us / 1000, share: busyUs > 0 ? us / busyUs : 0 }))

  // Inclusive time: for every sampled node, walk to the root and charge each named function
  // once per stack (outermost occurrence), so recursion is not double counted.
  const wanted = new Set(opts.inclusive ?? [])
  const incl = new Map<string, number>()
  if (wanted.size > 0) {
    for (const [id, us] of selfUs) {
      const seen = new Set<string>()
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const fn = (byId.get(cur) as ProfileNode).callFrame.functionName
        if (wanted.has(fn) && !seen.has(fn)) { seen.add(fn); incl.set(fn, (incl.get(fn) ?? 0) + us) }
      }
    }
  }
  return {
    totalMs: totalUs / 1000,
    idleMs: idleUs / 1000,
    busyMs: busyUs / 1000,
    topFunctions: rows(fnTotals, opts.top ?? 25),
    components: rows(compTotals, 30),
    inclusive: [...wanted].map((name) => ({ name, ms: (incl.get(name) ?? 0) / 1000, share: busyUs > 0 ? (incl.get(name) ?? 0) / busyUs : 0 }))
      .sort((a, b) => b.ms - a.ms)
  }
}
