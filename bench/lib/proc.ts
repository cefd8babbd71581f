/** Process and machine facts for the benchmarks: CPU time of a pid, machine description. */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import os from 'node:os'

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ); 100 on every Linux we run on. */
function clockTicks (): number {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())
    return Number.isFinite(n) && n > 0 ? n : 100
  } catch {
    return 100
  }
}

const TICKS = clockTicks()

/**
 * User + system CPU seconds used so far by `pid` (all its threads), or by one thread of it
 * when `tid` is given (the main thread's tid is the pid); undefined if unreadable.
 */
export function processCpuSeconds (pid: number, tid?: number): number | undefined {
  try {
    const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8')
    // comm (field 2) may contain spaces; the fields after its closing parenthesis are fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // fields[0] is field 3 (state): utime is field 14, stime field 15.
    return (Number(fields[11]) + Number(fields[12])) / TICKS
  } catch {
    return undefined
  }
}

/** CPU seconds used so far by this process. */
export function selfCpuSeconds (): number {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
}

export interface MachineInfo {
  date: string
  cpuModel: string
  nproc: number
  memTotal: string
  node: string
  kernel: string
  loadavg: string
}

/** One line naming the machine and its load, for a benchmark's heading. */
export function describeMachine (m: MachineInfo): string {
  return `${m.cpuModel}, ${m.nproc} cores, ${m.memTotal}, ${m.kernel}, Node ${m.node}, ${m.date} (load ${m.loadavg})`
}

export function machineInfo (): MachineInfo {
  let cpuModel = os.cpus()[0]?.model ?? 'unknown'
  try {
    const m = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))
    if (m !== null) cpuModel = m[1].trim()
  } catch { /* not Linux */ }
  return {
    date: new Date().toISOString(),
    cpuModel,
    nproc: os.availableParallelism(),
    memTotal: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    node: process.version,
    kernel: `${os.type()} ${os.release()}`,
    loadavg: os.loadavg().map((x) => x.toFixed(2)).join(' ')
  }
}
