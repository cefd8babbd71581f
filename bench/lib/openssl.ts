/** `openssl speed -seconds N ed25519`: the native Ed25519 sign/verify rate of one core. */
import { spawn } from 'node:child_process'

export interface OpensslSpeed {
  available: true
  version: string
  signPerSec: number
  verifyPerSec: number
}

export type OpensslResult = OpensslSpeed | { available: false, reason: string }

function run (cmd: string, args: string[]): Promise<{ code: number | null, stdout: string, stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
    child.on('error', (err) => resolve({ code: -1, stdout, stderr: stderr + String(err) }))
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/**
 * Parses the summary line of `openssl speed ed25519`:
 * ` 253 bits EdDSA (Ed25519)   0.0000s   0.0001s  24148.7   9075.8` (sign/s, verify/s last).
 */
export function parseOpensslSpeed (output: string): { signPerSec: number, verifyPerSec: number } | undefined {
  const m = /\(Ed25519\)\s+[\d.]+s\s+[\d.]+s\s+([\d.]+)\s+([\d.]+)/.exec(output)
  if (m === null) return undefined
  return { signPerSec: Number(m[1]), verifyPerSec: Number(m[2]) }
}

export async function opensslEd25519Speed (seconds = 3): Promise<OpensslResult> {
  const version = await run('openssl', ['version'])
  if (version.code !== 0) return { available: false, reason: `openssl not found (${version.stderr.trim() || `exit ${String(version.code)}`})` }
  const speed = await run('openssl', ['speed', '-seconds', String(seconds), 'ed25519'])
  const parsed = parseOpensslSpeed(speed.stdout + speed.stderr)
  if (speed.code !== 0 || parsed === undefined) {
    return { available: false, reason: `could not parse \`openssl speed ed25519\` (exit ${String(speed.code)})` }
  }
  return { available: true, version: version.stdout.trim(), ...parsed }
}
