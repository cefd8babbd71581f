/**
 * Two rules that keep the house plan (docs/architecture.md). The rule `doors/through-the-door`: each folder under src/ has one door, its index.ts. A file in
 * src/ or bench/ may import another folder's files only through that door (`../chain/index.js`),
 * or through a sub-door listed in SUB_DOORS; imports within one folder (and its subfolders) are
 * free. A real exception is
 * written where it stands, with `// eslint-disable-next-line doors/through-the-door -- why`.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const SRC = path.join(ROOT, 'src')
/** Subfolders whose own index.ts is a public door too, as paths under src/. */
const SUB_DOORS = new Set(['contracts/vm/index.js'])

/** The folder under src/ a path lies in ('chain'), or undefined for src/'s top-level files and paths outside src/. */
function srcFolder (file) {
  const rel = path.relative(SRC, file)
  if (rel.startsWith('..') || path.isAbsolute(rel)) return undefined
  const parts = rel.split(path.sep)
  return parts.length > 1 ? parts[0] : undefined
}

const throughTheDoor = {
  meta: {
    type: 'problem',
    docs: { description: "import another folder of src/ only through its door, the folder's index.js" },
    messages: { pastDoor: "'{{spec}}' goes past the door of src/{{folder}}: import it from src/{{folder}}/index.js (and export it there if other folders need it)" },
    schema: []
  },
  create (context) {
    const from = context.filename
    const here = path.relative(ROOT, from).split(path.sep)[0] === 'bench' ? 'bench' : srcFolder(from)
    function check (node) {
      const source = node.source
      if (source == null || source.type !== 'Literal' || typeof source.value !== 'string') return
      const spec = source.value
      if (!spec.startsWith('.')) return
      const target = path.resolve(path.dirname(from), spec)
      const folder = srcFolder(target)
      if (folder === undefined || folder === here) return
      const inSrc = path.relative(SRC, target).split(path.sep).join('/')
      if (inSrc === `${folder}/index.js` || SUB_DOORS.has(inSrc)) return
      context.report({ node: source, messageId: 'pastDoor', data: { spec, folder } })
    }
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check
    }
  }
}

/**
 * The folders of src/ as a graph: folder -> the folders its files import (relative imports,
 * type-only ones too, read as text). Built once per lint run; `test/unit/import-cycles.test.ts`
 * checks the whole graph with the same function.
 */
export function folderGraph (srcDir = SRC) {
  const edges = new Map()
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name)
      if (entry.isDirectory()) { walk(file); continue }
      if (!file.endsWith('.ts')) continue
      const from = path.relative(srcDir, file).split(path.sep)[0].replace(/\.[jt]s$/, '')
      for (const m of readFileSync(file, 'utf8').matchAll(/\bfrom\s*['"](\.[^'"]+)['"]|\bimport\s*\(\s*['"](\.[^'"]+)['"]/g)) {
        const target = path.relative(srcDir, path.resolve(path.dirname(file), m[1] ?? m[2]))
        if (target.startsWith('..')) continue
        const to = target.split(path.sep)[0].replace(/\.[jt]s$/, '')
        if (to === from) continue
        if (!edges.has(from)) edges.set(from, new Set())
        edges.get(from).add(to)
      }
    }
  }
  walk(srcDir)
  return edges
}

/** A path of folders from `from` to `to` in `graph`, or undefined when there is none. */
export function folderPath (graph, from, to) {
  const seen = new Set([from])
  const queue = [[from]]
  while (queue.length > 0) {
    const trail = queue.shift()
    for (const next of graph.get(trail[trail.length - 1]) ?? []) {
      if (next === to) return [...trail, next]
      if (!seen.has(next)) { seen.add(next); queue.push([...trail, next]) }
    }
  }
  return undefined
}

let graphOfThisRun

/**
 * The rule `doors/no-folder-loop`: an import of another folder of src/ is refused when that
 * folder already reaches back to the importing one, which would close a loop between folders
 * (dependencies point inward; a loop means neither side can be read or tested alone).
 */
const noFolderLoop = {
  meta: {
    type: 'problem',
    docs: { description: 'no import that closes a loop between folders of src/' },
    messages: { loop: "importing src/{{to}} from src/{{from}} closes a loop between folders: {{trail}}" },
    schema: []
  },
  create (context) {
    const from = srcFolder(context.filename)
    if (from === undefined) return {}
    function check (node) {
      const source = node.source
      if (source == null || source.type !== 'Literal' || typeof source.value !== 'string' || !source.value.startsWith('.')) return
      const to = srcFolder(path.resolve(path.dirname(context.filename), source.value))
      if (to === undefined || to === from) return
      graphOfThisRun ??= folderGraph()
      const back = folderPath(graphOfThisRun, to, from)
      if (back !== undefined) context.report({ node: source, messageId: 'loop', data: { from, to, trail: [from, ...back].join(' → ') } })
    }
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check }
  }
}

export default { rules: { 'through-the-door': throughTheDoor, 'no-folder-loop': noFolderLoop } }
