/** The `start` flags as config settings, for `start` and `config` alike. */
import { DEPRECATED_NAMES, START_FLAGS } from '../node/index.js'

/** Commander's parsed options → config keys (deprecated names kept, for the config loader to rename and warn about). */
export function flagValues (opts: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [old, { flag }] of Object.entries(DEPRECATED_NAMES)) {
    const name = flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())
    if (opts[name] !== undefined) out[old] = opts[name]
  }
  for (const def of START_FLAGS) {
    const name = def.flag.slice(2).split(' ')[0].replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())
    const raw = opts[name]
    if (raw === undefined) continue
    if (def.kind === 'int' || def.kind === 'number') {
      const n = Number(raw)
      if (!Number.isFinite(n)) throw new Error(`${def.flag.split(' ')[0]} expects a number, got "${String(raw)}"`)
      out[def.key] = n
    } else if (def.kind === 'bool') {
      // a bare optional-value flag (--state-sync) is true
      if (raw === true) {
        out[def.key] = true
        continue
      }
      if (raw !== 'true' && raw !== 'false') throw new Error(`${def.flag.split(' ')[0]} expects true or false, got "${String(raw)}"`)
      out[def.key] = raw === 'true'
    } else {
      out[def.key] = raw
    }
  }
  return out
}
