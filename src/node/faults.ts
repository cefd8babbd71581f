/**
 * Fault injection for crash and partition tests, off unless the test environment turns it on.
 * KITH_CRASH_AT=<point>[:<n>] kills the process with SIGKILL the n-th time (default 1st) it
 * reaches <point>, exactly as a power cut or `kill -9` would. KITH_DENY_PEERS_FILE names a JSON
 * file holding an array of peer ids this node must not talk to (a partition the test can move).
 * KITH_SNAPSHOT_LIE=chunk|manifest makes this node a lying snapshot server: every chunk, or every
 * manifest, it serves has one byte changed. KITH_SNAPSHOT_CHUNK_BYTES and KITH_RESTORE_GUARD_MS:
 * see below.
 */
import { readFileSync } from 'node:fs'

export type CrashPoint =
  | 'after-persist' // consensus record synced, vote or proposal not yet sent
  | 'before-commit' // block decided, nothing written
  | 'after-commit' // block written, next height not started
  | 'after-sync-commit' // a synced block written
  | 'state-sync-chunk' // a snapshot chunk written into the store being built aside

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

const snapshotLie = process.env.KITH_SNAPSHOT_LIE

/**
 * KITH_SNAPSHOT_CHUNK_BYTES: a smaller chunk target for snapshots, so a test's small state still
 * comes in many chunks (every node of the test sets the same, or their chunks differ).
 */
export function snapshotChunkBytesFromEnv (): number | undefined {
  const value = Number(process.env.KITH_SNAPSHOT_CHUNK_BYTES ?? '')
  return Number.isInteger(value) && value > 0 ? value : undefined
}

/**
 * KITH_RESTORE_GUARD_MS: how long past its start a restored validator waits before it signs,
 * instead of the block-time drift (60 s), so a test sees the guard end in seconds.
 */
export function restoreGuardMsFromEnv (): number | undefined {
  const text = process.env.KITH_RESTORE_GUARD_MS ?? ''
  const value = Number(text)
  return text !== '' && Number.isInteger(value) && value >= 0 ? value : undefined
}

/** A snapshot answer as a lying peer would send it (KITH_SNAPSHOT_LIE); unchanged otherwise. */
export function snapshotAnswerAsLiar (request: unknown, answer: Uint8Array): Uint8Array {
  const type = (request as { type?: unknown } | null)?.type
  if (snapshotLie === undefined || snapshotLie === '' || type !== `snapshot_${snapshotLie}`) return answer
  const lie = Buffer.from(answer)
  if (snapshotLie === 'manifest') {
    // one lane character changed: still a well-formed manifest, but its lanes no longer add up
    const at = lie.indexOf('"lanes":"') + 9
    lie[at] = lie[at] === 0x41 ? 0x42 : 0x41
  } else {
    // one digit changed in the middle: still JSON, but not the entries the lanes cover
    let at = lie.length >> 1
    while (at < lie.length && (lie[at] < 0x30 || lie[at] > 0x39)) at++
    if (at < lie.length) lie[at] = lie[at] === 0x31 ? 0x32 : 0x31
  }
  return lie
}
