/**
 * `--help` of every command and subcommand of bin/kith: exit status 0, a usage line naming the
 * command, and its description. The commands are discovered from the program bin/kith builds
 * (buildProgram), so a command added later is walked too. Each --help runs through that program
 * in this process (a bin/kith process costs seconds of start-up on a loaded machine, times 35);
 * `kith --help` and one subcommand's run as bin/kith processes, to see the real exit status.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { CommanderError, type Command } from 'commander'
import { buildProgram } from '../../src/cli/index.js'
import { KITH_BIN, REPO_ROOT, childEnv } from '../helpers/node-process.js'

const execFileP = promisify(execFile)

interface Walked { path: string[], description: string, subcommands: string[] }

/** every command below `command` (commander's implicit `help` command is not one of them) */
function walk (command: Command, path: string[] = []): Walked[] {
  return command.commands.flatMap((sub) => {
    const subPath = [...path, sub.name()]
    return [{ path: subPath, description: sub.description(), subcommands: sub.commands.map((c) => c.name()) }, ...walk(sub, subPath)]
  })
}

/** commander wraps long descriptions at 80 columns: compare with the white space folded */
const folded = (text: string): string => text.replace(/\s+/g, ' ')

/** `kith <path> --help` through a fresh program: what it printed and the exit status it asked for */
async function helpInProcess (path: string[]): Promise<{ out: string, code: number }> {
  const program = buildProgram()
  let out = ''
  const capture = (command: Command): void => {
    command.exitOverride().configureOutput({ writeOut: (text) => { out += text }, writeErr: (text) => { out += text } })
    for (const sub of command.commands) capture(sub)
  }
  capture(program)
  try {
    await program.parseAsync(['node', 'kith', ...path, '--help'])
  } catch (err) {
    if (err instanceof CommanderError) return { out, code: err.exitCode }
    throw err
  }
  return { out, code: 0 }
}

async function helpProcess (path: string[]): Promise<string> {
  const { stdout } = await execFileP(KITH_BIN, [...path, '--help'], { env: childEnv({}), cwd: REPO_ROOT, timeout: 60_000 })
  return stdout
}

test('kith --help and the --help of every command and subcommand: exit 0, a usage line, a description', async () => {
  const program = buildProgram()
  const commands = walk(program)
  assert.ok(commands.length >= 30, `only ${commands.length} commands found`)

  const main = await helpProcess([])
  assert.match(main, /^Usage: kith \[options\] \[command\]$/m)
  assert.ok(folded(main).includes(folded(program.description())))
  for (const top of program.commands) assert.match(main, new RegExp(`^  ${top.name()}\\b`, 'm'), `kith --help lists ${top.name()}`)
  assert.match(await helpProcess(['msg', 'send']), /^Usage: kith msg send \[options\] <to> <text>$/m)

  const failures: string[] = []
  for (const { path, description, subcommands } of commands) {
    const name = `kith ${path.join(' ')}`
    if (description.trim() === '') failures.push(`${name} has no description`)
    const { out, code } = await helpInProcess(path)
    if (code !== 0) failures.push(`${name} --help exits ${code}:\n${out}`)
    if (!new RegExp(`^Usage: ${name} `, 'm').test(out)) failures.push(`${name} --help has no usage line:\n${out}`)
    if (!folded(out).includes(folded(description))) failures.push(`${name} --help does not show its description:\n${out}`)
    for (const sub of subcommands) if (!new RegExp(`^  ${sub}\\b`, 'm').test(out)) failures.push(`${name} --help does not list ${sub}`)
  }
  assert.deepEqual(failures, [])
})

test('kith --version names the version and protocol; a command\'s own --version stays the command\'s', async () => {
  const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }
  const { stdout } = await execFileP(KITH_BIN, ['--version'], { env: childEnv({}), cwd: REPO_ROOT, timeout: 60_000 })
  assert.match(stdout, new RegExp(`^kith v${pkg.version.replace(/\./g, '\\.')}\\b.*, protocol \\d+\\n$`))
  // `contract deploy --version V` is the contract's version: kith's own options come only before a command
  const { out, code } = await helpInProcess(['contract', 'deploy', 'x.wasm', '--name', 'c', '--version', '2'])
  assert.equal(code, 0)
  assert.match(out, /^Usage: kith contract deploy /m)
})
