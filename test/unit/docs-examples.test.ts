/**
 * The documents quote their runnable examples from examples/ instead of carrying their own copy:
 * every fenced block labelled as code that runs (sh, js, ts) in README.md and docs/*.md is the
 * whole text of a file of examples/, and the text before the block names that file.
 * test/integration/examples.test.ts runs those files, so a quoted example cannot rot unseen.
 * Blocks that show formats, output or outlines are labelled text or json instead.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdir, readFile } from 'node:fs/promises'

const ROOT = new URL('../../../', import.meta.url)
const RUNNABLE = new Set(['sh', 'bash', 'js', 'mjs', 'ts'])
/** README's first screen: the commands CI itself runs (.ci/run), not a script to keep in examples/ */
const EXEMPT = new Set(['npm install && npm start     # a single-node dev network on http://localhost:8080, data in ./.kith\nnpm test                     # typecheck, lint, unit and integration tests (needs exiftool, ffmpeg and chromium: see Development)\n'])

interface Block { doc: string, lang: string, body: string, before: string }

function fencedBlocks (doc: string, text: string): Block[] {
  const blocks: Block[] = []
  const fence = /^```(\w*)\n([\s\S]*?)^```$/gm
  for (let m = fence.exec(text); m !== null; m = fence.exec(text)) {
    blocks.push({ doc, lang: m[1], body: m[2], before: text.slice(Math.max(0, m.index - 600), m.index) })
  }
  return blocks
}

async function documents (): Promise<Array<{ name: string, text: string }>> {
  const names = ['README.md', ...(await readdir(new URL('docs/', ROOT))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]
  return await Promise.all(names.map(async (name) => ({ name, text: await readFile(new URL(name, ROOT), 'utf8') })))
}

test('every runnable block of the README and docs/ is a file of examples/, named before it', async () => {
  const examples = new Map<string, string>()
  for (const file of await readdir(new URL('examples/', ROOT))) examples.set(await readFile(new URL(`examples/${file}`, ROOT), 'utf8'), file)
  const quoted = new Set<string>()
  for (const { name, text } of await documents()) {
    for (const block of fencedBlocks(name, text)) {
      if (!RUNNABLE.has(block.lang) || EXEMPT.has(block.body)) continue
      const file = examples.get(block.body)
      assert.ok(file !== undefined, `${name}: a ${block.lang} block is not the text of any file of examples/ (copy it there, or label it text if it is not code to run):\n${block.body.slice(0, 300)}`)
      assert.ok(block.before.includes(`examples/${file}`), `${name}: the block quoting examples/${file} must name the file before it`)
      quoted.add(file)
    }
  }
  for (const file of examples.values()) assert.ok(quoted.has(file), `examples/${file} is quoted by no document`)
})

test('no document points outside the repository', async () => {
  for (const { name, text } of await documents()) {
    assert.doesNotMatch(text, /\.\.\/shared|research\//, `${name} refers to a file outside the repository`)
  }
})
