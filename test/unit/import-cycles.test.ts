/**
 * The house plan's two lint rules (eslint/doors.js), run through ESLint on probe sources as
 * `npm run lint` runs them: an import past a folder's door and an import that closes a loop
 * between folders are refused. And the whole graph of src/'s folders (each folder, type-only
 * imports too) has no circle today.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ESLint } from 'eslint'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')

interface DoorsModule {
  folderGraph: (srcDir?: string) => Map<string, Set<string>>
  folderPath: (graph: Map<string, Set<string>>, from: string, to: string) => string[] | undefined
}

async function lintProbe (file: string, text: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: ROOT })
  const [result] = await eslint.lintText(text, { filePath: join(ROOT, file) })
  return result.messages.map((m) => `${m.ruleId ?? ''}: ${m.message}`)
}

describe('house plan', () => {
  test('the folders of src/ import one another without a circle', async () => {
    const { folderGraph, folderPath } = await import(join(ROOT, 'eslint', 'doors.js')) as DoorsModule
    const graph = folderGraph(join(ROOT, 'src'))
    assert.ok(graph.size > 10, 'the import graph was read')
    const circles: string[] = []
    for (const [from, tos] of graph) {
      for (const to of tos) {
        const back = folderPath(graph, to, from)
        if (back !== undefined) circles.push([from, ...back].join(' → '))
      }
    }
    assert.deepEqual(circles, [])
  })

  test('lint refuses an import that closes a loop between folders', async () => {
    // the API reads the node; the node importing the API would close a loop
    const messages = await lintProbe('src/node/probe.ts', "import type { ApiServer } from '../api/index.js'\nexport type Probe = ApiServer\n")
    assert.ok(messages.some((m) => m.startsWith('doors/no-folder-loop: importing src/api from src/node closes a loop')), messages.join('\n'))
    const inward = await lintProbe('src/api/probe.ts', "import type { ChainView } from '../node/index.js'\nexport type Probe = ChainView\n")
    assert.deepEqual(inward.filter((m) => m.startsWith('doors/')), [], 'an import pointing inward is fine')
  })

  test('lint refuses an import past a folder\'s door', async () => {
    const messages = await lintProbe('src/api/probe.ts', "import type { Submission } from '../node/submission.js'\nexport type Probe = Submission\n")
    assert.ok(messages.some((m) => m.startsWith("doors/through-the-door: '../node/submission.js' goes past the door of src/node")), messages.join('\n'))
  })
})
