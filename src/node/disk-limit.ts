/**
 * `--chain-disk-limit-mb`: advisory (spec "Limits"). While the chain store is larger than the
 * limit the node logs a warning, at start and then once a minute, and goes on accepting blocks:
 * refusing them would stall this node behind the network, not shrink the chain.
 */
import { statSync } from 'node:fs'
import type { Logger } from 'pino'

export const CHAIN_DISK_CHECK_MS = 60_000

/** Bytes the file occupies on disk (lmdb's data file is sparse: its length overstates it); 0 when it is missing. */
export function allocatedBytes (file: string): number {
  try {
    return statSync(file).blocks * 512
  } catch {
    return 0
  }
}

/** Checks `file` against `limitMb` now and every `intervalMs`; stop() ends it. */
export function watchChainDisk (opts: { file: string, limitMb: number, logger: Logger, intervalMs?: number }): { stop: () => void } {
  const limitBytes = opts.limitMb * 1024 * 1024
  const check = (): void => {
    const bytes = allocatedBytes(opts.file)
    if (bytes <= limitBytes) return
    opts.logger.warn({ chainMb: Math.round(bytes / 1024 / 1024 * 10) / 10, limitMb: opts.limitMb, file: opts.file },
      'the chain store is larger than --chain-disk-limit-mb; blocks are still accepted (the limit is advisory)')
  }
  check()
  const timer = setInterval(check, opts.intervalMs ?? CHAIN_DISK_CHECK_MS)
  timer.unref()
  return { stop: () => clearInterval(timer) }
}
