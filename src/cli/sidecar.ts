/**
 * `kith sidecar --listen HOST:PORT`: runs the reference media sidecar (src/media, docs/media.md)
 * until SIGINT/SIGTERM. Nodes reach it through SVC_MEDIA_SIDECAR_URL=<the URL it logs>.
 */
import type { Command } from 'commander'
import { pino } from 'pino'
import { DEFAULT_FFMPEG_TIMEOUT_MS, DEFAULT_SIDECAR_MAX_BYTES, startSidecar } from '../media/index.js'
import { parseListenAddr } from '../node/index.js'
import { stopOnSignals } from './shutdown.js'

const SHUTDOWN_GRACE_MS = 10_000

interface SidecarFlags {
  listen: string
  maxBytes: string
  timeoutMs: string
  concurrency: string
  logLevel: string
}

function positiveInt (flag: string, raw: string): number {
  const n = Number(raw)
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${flag} expects a whole number above 0, got "${raw}"`)
  return n
}

async function runSidecar (flags: SidecarFlags): Promise<void> {
  const { host, port } = parseListenAddr(flags.listen)
  const logger = pino({ level: flags.logLevel, base: { pid: process.pid } })
  const sidecar = await startSidecar({
    host,
    port,
    logger,
    maxBytes: positiveInt('--max-bytes', flags.maxBytes),
    timeoutMs: positiveInt('--timeout-ms', flags.timeoutMs),
    concurrency: positiveInt('--concurrency', flags.concurrency)
  })
  stopOnSignals(logger, sidecar.close, SHUTDOWN_GRACE_MS)
}

/** Adds `sidecar` to the program. */
export function registerSidecarCommand (program: Command): void {
  program.command('sidecar')
    .description('run the media scrubbing sidecar (ffmpeg stream copy without metadata) until SIGINT/SIGTERM')
    .option('--listen <host:port>', 'HTTP listen address', '127.0.0.1:9400')
    .option('--max-bytes <n>', 'largest request body accepted', String(DEFAULT_SIDECAR_MAX_BYTES))
    .option('--timeout-ms <n>', 'longest one ffmpeg run may take', String(DEFAULT_FFMPEG_TIMEOUT_MS))
    .option('--concurrency <n>', 'ffmpeg processes at once', '2')
    .option('--log-level <level>', 'pino level', 'info')
    .action(runSidecar)
}
