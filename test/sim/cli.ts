/**
 * `npm run sim -- --seeds N [--seed S]`: runs N seeded simulations starting at S (default 1)
 * and prints any failing seed; `--seed S --seeds 1` replays one seed exactly.
 */
import { optionsForSeed, simulate } from './simulator.js'

function arg (name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`)
  if (i < 0) return fallback
  const value = Number(process.argv[i + 1])
  if (!Number.isInteger(value)) throw new Error(`--${name} expects an integer`)
  return value
}

const first = arg('seed', 1)
const count = arg('seeds', 1000)
let failed = 0
const started = Date.now()
for (let seed = first; seed < first + count; seed++) {
  const opts = optionsForSeed(seed)
  const result = simulate(opts)
  if (!result.ok) {
    failed += 1
    console.log(`seed ${seed} FAILED: ${result.violation}\n  options ${JSON.stringify(opts)}\n  heights ${result.heights.join(',')} after ${result.events} events, ${result.virtualMs} virtual ms`)
  } else if (count === 1) {
    console.log(`seed ${seed} ok: heights ${result.heights.join(',')}, ${result.events} events, ${result.virtualMs} virtual ms, options ${JSON.stringify(opts)}`)
  }
}
console.log(`${count - failed} passed, ${failed} failed`)
console.log(`(${count} seeds from ${first} in ${((Date.now() - started) / 1000).toFixed(1)} s)`)
process.exitCode = failed === 0 ? 0 : 1
