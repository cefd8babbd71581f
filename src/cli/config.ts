/** `kith config`: the effective configuration of a home, with where each value came from. */
import { resolve } from 'node:path'
import { Option, type Command } from 'commander'
import type { SettingSource } from '../app/index.js'
import { DEPRECATED_NAMES, NodeConfigSchema, loadHome, resolveConfigLayers } from '../node/index.js'
import { flagValues } from './flags.js'

export interface ConfigRow {
  /** the config.json key */
  name: string
  /** the environment variable, for settings that have one */
  env?: string
  value: unknown
  source: SettingSource
  doc?: string
}

const MASK = '********'

/** Rows of the node settings (flags over config.json over defaults) and the SVC_* settings (environment over config.json over defaults). */
export async function effectiveConfig (fileConfig: unknown, flags: Record<string, unknown>, env: NodeJS.ProcessEnv): Promise<ConfigRow[]> {
  // the settings' readers live in the subsystems, which load most of the node
  const { ENV_SETTINGS, layeredEnv, readServiceSettings } = await import('../app/index.js')
  const { config } = resolveConfigLayers(fileConfig, flags)
  const file = typeof fileConfig === 'object' && fileConfig !== null ? fileConfig as Record<string, unknown> : {}
  const inFile = (key: string): boolean => file[key] !== undefined || Object.entries(DEPRECATED_NAMES).some(([old, d]) => d.key === key && file[old] !== undefined)
  const flagged = (key: string): boolean => flags[key] !== undefined || Object.entries(DEPRECATED_NAMES).some(([old, d]) => d.key === key && flags[old] !== undefined)
  const rows: ConfigRow[] = Object.keys(NodeConfigSchema.shape).map((key) => ({
    name: key,
    value: config[key as keyof typeof config],
    source: flagged(key) ? 'flag' : inFile(key) ? 'config.json' : 'default'
  }))
  const layered = layeredEnv(fileConfig, env)
  const services = readServiceSettings(layered.env)
  for (const s of ENV_SETTINGS) {
    const value = s.read(services)
    rows.push({
      name: s.key,
      env: s.env,
      value: s.secret === true && value !== undefined ? MASK : value,
      source: layered.sources.get(s.env) ?? 'default',
      doc: s.doc
    })
  }
  return rows
}

function show (value: unknown): string {
  if (value === undefined) return '(unset)'
  return typeof value === 'string' ? value : JSON.stringify(value)
}

export function registerConfigCommand (program: Command, startCmd: Command): void {
  const cmd = program.command('config')
    .description('print the configuration `kith start` would run with: each setting, its value and where it came from (default, config.json, environment, flag); secrets masked')
    .option('--home <dir>', 'home directory (default ./.kith)')
    .option('--json', 'one JSON array of {name, env, value, source, doc}')
  // the start flags layer on top, as they would for `kith start`
  for (const option of startCmd.options) {
    if (['--home', '--dev', '--alloc'].includes(option.long ?? '') || option.hidden) continue
    cmd.addOption(new Option(option.flags, option.description))
  }
  cmd.action(async (opts: Record<string, unknown>) => {
    const home = resolve(typeof opts.home === 'string' ? opts.home : '.kith')
    const rows = await effectiveConfig((await loadHome(home)).fileConfig, flagValues(opts), process.env)
    if (opts.json === true) {
      console.log(JSON.stringify(rows, null, 2))
      return
    }
    const width = Math.max(...rows.map((r) => r.name.length))
    const valueWidth = Math.min(40, Math.max(...rows.map((r) => show(r.value).length)))
    console.log(`configuration of ${home} (default < config.json < environment < flag)`)
    for (const r of rows) {
      console.log(`${r.name.padEnd(width)}  ${show(r.value).padEnd(valueWidth)}  ${r.source.padEnd(11)}${r.env !== undefined ? `  ${r.env}` : ''}`)
    }
  })
}
