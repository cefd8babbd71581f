/**
 * No circle among the folders of src/: with each folder (and each top-level file) of src/ as one
 * node and every relative import (type-only ones too) as an edge, the graph has no cycle. The
 * project has no import-cycle lint plugin, so this reads the sources as text; the doors rule
 * (eslint/doors.js) keeps the edges going through each folder's index.ts.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'src')

function sources (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    return e.isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : []
  })
}

/** The node a path belongs to: its folder under src/, or the top-level file's name without extension. */
const nodeOf = (file: string): string => relative(SRC, file).split(sep)[0].replace(/\.[jt]s$/, '')

test('the folders of src/ import one another without a circle', () => {
  const edges = new Map<string, Set<string>>()
  for (const file of sources(SRC)) {
    const text = readFileSync(file, 'utf8')
    for (const m of text.matchAll(/\bfrom\s*['"](\.[^'"]+)['"]|\bimport\s*\(\s*['"](\.[^'"]+)['"]/g)) {
      const from = nodeOf(file)
      const to = nodeOf(resolve(dirname(file), m[1] ?? m[2]))
      if (from === to) continue
      if (!edges.has(from)) edges.set(from, new Set())
      edges.get(from)?.add(to)
    }
  }
  const circles: string[] = []
  const state = new Map<string, 'open' | 'done'>()
  const visit = (node: string, path: string[]): void => {
    state.set(node, 'open')
    for (const next of edges.get(node) ?? []) {
      if (state.get(next) === 'open') circles.push([...path.slice(path.indexOf(next)), node, next].join(' → '))
      else if (!state.has(next)) visit(next, [...path, node])
    }
    state.set(node, 'done')
  }
  for (const node of edges.keys()) if (!state.has(node)) visit(node, [])
  assert.ok(edges.size > 10, 'the import graph was read')
  assert.deepEqual(circles, [])
})
