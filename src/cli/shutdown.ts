/**
 * SIGINT/SIGTERM handling for a long-running command: the first signal runs `stop` once, then
 * the process exits by itself with code 0; a stop that takes longer than `graceMs` (or fails)
 * ends it with code 1. `kith start` and `kith sidecar` use it.
 */
import type { Logger } from 'pino'

export function stopOnSignals (logger: Logger, stop: () => Promise<void>, graceMs: number): void {
  let stopping = false
  const shutdown = (signal: string): void => {
    if (stopping) return
    stopping = true
    logger.info({ signal }, 'shutting down')
    setTimeout(() => { logger.error('shutdown took too long; exiting'); process.exit(1) }, graceMs).unref()
    stop().then(() => {
      logger.info('stopped')
      logger.flush()
      process.exitCode = 0
    }, (err: unknown) => { logger.error({ err }, 'shutdown failed'); process.exit(1) })
  }
  process.on('SIGINT', () => shutdown('SIGINT'))
  process.on('SIGTERM', () => shutdown('SIGTERM'))
}
