/**
 * The rule `doors/through-the-door`: each folder under src/ has one door, its index.ts. A file in
 * src/ or bench/ may import another folder's files only through that door (`../chain/index.js`),
 * or through a sub-door listed in SUB_DOORS; imports within one folder (and its subfolders) are
 * free. A real exception is
 * written where it stands, with `// eslint-disable-next-line doors/through-the-door -- why`.
 */
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

export default { rules: { 'through-the-door': throughTheDoor } }
