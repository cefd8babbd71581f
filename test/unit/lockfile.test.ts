/**
 * `npm ci` installs exactly what package-lock.json lists, so the lockfile must name every
 * platform's prebuilt native packages (sharp, lmdb, msgpackr) and not only this machine's; a
 * lockfile regenerated on one platform with a pruned tree would make `npm ci` fail elsewhere.
 * `.ci/run` also fails when `npm install` changes the lockfile (it must be committed in sync).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'

const PLATFORMS = ['darwin-arm64', 'darwin-x64', 'linux-arm64', 'linux-x64', 'win32-x64']

test('package-lock.json holds every platform\'s optional native packages', async () => {
  const root = new URL('../../../', import.meta.url)
  const lock = JSON.parse(await readFile(new URL('package-lock.json', root), 'utf8')) as { lockfileVersion: number, packages: Record<string, { version?: string, optional?: boolean }> }
  assert.ok(lock.lockfileVersion >= 3)
  const pkg = JSON.parse(await readFile(new URL('package.json', root), 'utf8')) as { dependencies: Record<string, string>, devDependencies: Record<string, string> }
  for (const [name, version] of Object.entries({ ...pkg.dependencies, ...pkg.devDependencies })) {
    assert.equal(lock.packages[`node_modules/${name}`]?.version, version, `${name} is locked at the version package.json pins`)
  }
  for (const platform of PLATFORMS) {
    for (const name of [`@img/sharp-${platform}`, `@lmdb/lmdb-${platform}`, `@msgpackr-extract/msgpackr-extract-${platform}`]) {
      const entry = lock.packages[`node_modules/${name}`]
      assert.ok(entry?.version !== undefined, `${name} is in the lockfile`)
      assert.equal(entry.optional, true, `${name} is optional`)
    }
  }
  assert.ok(lock.packages['node_modules/@img/sharp-libvips-linuxmusl-x64'] !== undefined, 'musl builds too')
})

/** true for the simple `>=N[.x.y]` ranges with N above `major`, the form every such dependency uses */
function excludesMajor (range: string, major: number): boolean {
  const lower = /^>=\s*(\d+)(?:\.\d+){0,2}$/.exec(range.trim())
  return lower !== null && Number(lower[1]) > major
}

test('the README names every installed package whose engines refuse Node 20 (the EBADENGINE warnings npm prints there)', async () => {
  const root = new URL('../../../', import.meta.url)
  const lock = JSON.parse(await readFile(new URL('package-lock.json', root), 'utf8')) as { packages: Record<string, { dev?: boolean, optional?: boolean, engines?: { node?: string } }> }
  const readme = await readFile(new URL('README.md', root), 'utf8')
  const refusing = Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && entry.dev !== true && entry.optional !== true && excludesMajor(entry.engines?.node ?? '', 20))
    .map(([path]) => path.replace(/^.*node_modules\//, ''))
  const named = /EBADENGINE[^.]*dependencies that need Node >= 22 \(([^)]*)\)/.exec(readme.replace(/\s+/g, ' '))?.[1]
  assert.ok(named !== undefined, 'the README\'s Runtime section names the dependencies npm warns about')
  assert.deepEqual(named.split(', ').sort(), refusing.sort())
})
