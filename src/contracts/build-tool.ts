/**
 * `npm run contract:build`: compiles every AssemblyScript contract under contracts/ into
 * contracts/build/<name>.wasm (committed: genesis deploys the registry's bytes). Dev-time only:
 * it imports the AssemblyScript compiler, which the node never loads.
 *
 * The flags make asc emit what the VM accepts: the stub runtime (no GC), no float-to-int
 * conversions, a declared 16-page memory maximum, and AssemblyScript's start function exported
 * as `_initialize` (the VM refuses a start section and runs `_initialize` before each call).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { MAX_MEMORY_PAGES } from './vm/index.js'

/** The package root: this file is dist/src/contracts/build-tool.js once compiled. */
export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')

/** Contract sources (relative to the package root) and their output names. */
export const CONTRACT_SOURCES: Readonly<Record<string, string>> = {
  'username-registry': 'contracts/username-registry.ts',
  counter: 'contracts/examples/counter.ts',
  token: 'contracts/examples/token.ts'
}

export const ASC_FLAGS = [
  '--runtime', 'stub',
  '--optimizeLevel', '3', '--shrinkLevel', '0',
  '--disable', 'nontrapping-f2i',
  '--maximumMemory', String(MAX_MEMORY_PAGES),
  '--exportStart', '_initialize',
  '--noColors'
]

/** Compiles one contract source (path relative to the package root) to wasm bytes. */
export async function compileContract (source: string): Promise<Uint8Array> {
  const { default: asc } = await import('assemblyscript/asc')
  let binary: Uint8Array | undefined
  const errors: string[] = []
  const { error } = await asc.main([source, '--outFile', 'out.wasm', ...ASC_FLAGS], {
    readFile: async (name, baseDir) => {
      try {
        return await readFile(path.resolve(PACKAGE_ROOT, baseDir, name), 'utf8')
      } catch {
        return null
      }
    },
    writeFile: (name, contents) => {
      if (name.endsWith('.wasm') && typeof contents !== 'string') binary = contents
    },
    listFiles: () => [],
    stdout: { write: () => true } as never,
    stderr: { write: (chunk: string | Uint8Array) => { errors.push(String(chunk)); return true } } as never
  })
  if (error !== null || binary === undefined) throw new Error(`asc failed on ${source}: ${error?.message ?? 'no output'}\n${errors.join('')}`)
  return binary
}

export async function buildAll (log: (line: string) => void = console.log): Promise<void> {
  const outDir = path.join(PACKAGE_ROOT, 'contracts', 'build')
  await mkdir(outDir, { recursive: true })
  for (const [name, source] of Object.entries(CONTRACT_SOURCES)) {
    const wasm = await compileContract(source)
    await writeFile(path.join(outDir, `${name}.wasm`), wasm)
    log(`${source} -> contracts/build/${name}.wasm (${wasm.length} bytes)`)
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  buildAll().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err)
    process.exitCode = 1
  })
}
