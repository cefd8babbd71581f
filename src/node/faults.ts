/**
 * Fault injection for crash and partition tests, off unless the test environment turns it on.
 * KITH_CRASH_AT=<point>[:<n>] kills the process with SIGKILL the n-th time (default 1st) it
 * reaches <point>, exactly as a power cut or `kill -9` would. KITH_DENY_PEERS_FILE names a JSON
 * file holding an array of peer ids this node must not talk to (a partition the test can move).
 */
import { readFileSync } from 'node:fs'

export type CrashPoint =
  | 'after-persist' // consensus record synced, vote or proposal not yet sent
  | 'before-commit' // block decided, nothing written
  | 'after-commit' // block written, next height not started
  | 'after-sync-commit' // a synced block written

const [crashPoint, crashCount] = (process.env.KITH_CRASH_AT ?? '').split(':')
let crashHits = 0

export function crashIfAt (point: CrashPoint): void {
  if (crashPoint !== point) return
  crashHits += 1
  if (crashHits >= Number(crashCount ?? 1)) process.kill(process.pid, 'SIGKILL')
}

/** A deny list read from KITH_DENY_PEERS_FILE at most every 250 ms; undefined when unset. */
export function denyListFromEnv (): (() => Set<string>) | undefined {
  const file = process.env.KITH_DENY_PEERS_FILE
  if (file === undefined || file === '') return undefined
  let cached = new Set<string>()
  let readAt = 0
  return () => {
    const now = Date.now()
    if (now - readAt >= 250) {
      readAt = now
      try {
        const value: unknown = JSON.parse(readFileSync(file, 'utf8'))
        cached = new Set(Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [])
      } catch {
        cached = new Set()
      }
    }
    return cached
  }
}
