/**
 * A local release source for tests: an HTTP server on 127.0.0.1 whose answers a test sets per
 * path (a feed, an artifact, garbage, an error status, or no answer at all), and real release
 * tarballs made with tar, with their real sha256.
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const execFileP = promisify(execFile)

export type Answer =
  | { json: unknown }
  | { body: Buffer | string, contentType?: string }
  | { status: number }
  /** accept the request and never answer (a source that hangs) */
  | { hang: true }

export class ReleaseSource {
  readonly answers = new Map<string, Answer>()
  /** requests seen, by path */
  readonly hits = new Map<string, number>()
  private readonly hanging = new Set<ServerResponse>()
  private server: Server | undefined
  url = ''

  async start (): Promise<void> {
    const server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1)
      const answer = this.answers.get(path) ?? { status: 404 }
      if ('hang' in answer) { this.hanging.add(res); return }
      if ('status' in answer) { res.writeHead(answer.status).end(); return }
      if ('json' in answer) { res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer.json)); return }
      res.writeHead(200, { 'content-type': answer.contentType ?? 'application/octet-stream' }).end(answer.body)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    this.server = server
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }

  async stop (): Promise<void> {
    for (const res of this.hanging) res.destroy()
    this.server?.closeAllConnections()
    await new Promise<void>((resolve) => this.server === undefined ? resolve() : this.server.close(() => resolve()))
  }
}

export interface BuiltRelease {
  version: string
  tarball: Buffer
  sha256: string
}

/** A .tar.gz holding kith-<version>/ with a package.json and a marker file, made by tar. */
export async function buildReleaseTarball (version: string): Promise<BuiltRelease> {
  const dir = await mkdtemp(join(tmpdir(), 'kith-release-'))
  try {
    const root = join(dir, `kith-${version}`)
    await mkdir(join(root, 'bin'), { recursive: true })
    await writeFile(join(root, 'package.json'), JSON.stringify({ name: 'kith', version }) + '\n')
    await writeFile(join(root, 'bin', 'RELEASE'), `kith ${version}\n`)
    const file = join(dir, 'release.tar.gz')
    await execFileP('tar', ['-czf', file, '-C', dir, `kith-${version}`])
    const tarball = await readFile(file)
    return { version, tarball, sha256: createHash('sha256').update(tarball).digest('hex') }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** A feed entry for `release` whose artifact is served at `path` (relative to the feed). */
export function feedEntry (release: BuiltRelease, path: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { version: release.version, published_at: '2026-01-02T03:04:05Z', url: path, sha256: release.sha256, notes: `kith ${release.version}`, ...extra }
}
