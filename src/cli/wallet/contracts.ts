/**
 * The contract commands of `kith`: deploy a wasm module, call a method, read state, logs and the
 * list (docs/contracts.md). A contract is named by its id or by the ABI name of a well-known one
 * (`username_registry`). Reference: docs/cli.md.
 */
import { readFile } from 'node:fs/promises'
import { resolve as resolvePath } from 'node:path'
import type { Command } from 'commander'
import { ApiError, callContract, deployContract, type ContractInfo } from '../../client/index.js'
import { contractIdFor, CONTRACT_ID_RE, DEFAULT_GAS_LIMIT, MAX_GAS_LIMIT } from '../../chain/index.js'
import { parseAmount, showAmount } from './amount.js'
import { run, withGlobals, type Context } from './context.js'
import { CliError } from './errors.js'
import { parseCount } from './feed.js'

const UTF8 = new TextDecoder('utf-8', { fatal: true })

/** C0 controls and DEL, but tab and newline */
function isControl (char: string): boolean {
  const code = char.charCodeAt(0)
  return (code < 0x20 && char !== '\t' && char !== '\n') || code === 0x7f
}

/** The bytes as text when they are UTF-8 without control characters (a u64 is not text). */
function asText (bytes: Buffer): string | undefined {
  try {
    const text = UTF8.decode(bytes)
    return [...text].some(isControl) ? undefined : text
  } catch {
    return undefined
  }
}

/** A contract id, or the ABI name of a well-known contract. */
async function contractId (ctx: Context, name: string): Promise<string> {
  if (CONTRACT_ID_RE.test(name)) return name
  const { contracts } = await ctx.api(async (c) => await c.wellKnownContracts())
  // own members only: `constructor` or `toString` is not a contract the node listed
  const known = Object.hasOwn(contracts, name) ? contracts[name] : undefined
  if (known === undefined) throw new CliError('UNKNOWN_CONTRACT', `"${name}" is neither a contract id (40 hex) nor the ABI name of a well-known contract on ${ctx.nodeUrl}; \`kith contract list\` shows them`)
  return known.contract_id
}

async function info (ctx: Context, id: string): Promise<ContractInfo> {
  return await ctx.api(async (c) => await c.contract(id)).catch((err: unknown) => {
    if (err instanceof ApiError && err.status === 404) throw new CliError('UNKNOWN_CONTRACT', `no contract ${id} on ${ctx.nodeUrl}; \`kith contract list\` shows them`)
    throw err
  })
}

function parseArgs (text: string | undefined): unknown[] {
  if (text === undefined || text === '') return []
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  if (!Array.isArray(parsed)) throw new CliError('BAD_ARGS', `the arguments must be a JSON array, like '["alice_01"]' or '[1, "x"]'; got ${text}`)
  return parsed
}

export function registerContractCommands (program: Command): void {
  const contract = program.command('contract').description('WebAssembly contracts: deploy, call, read state and logs (docs/contracts.md)')

  withGlobals(contract.command('deploy').argument('<file>', 'the wasm module (npm run contract:build writes contracts/build/*.wasm)')
    .description('DEPLOY_CONTRACT the module under an ABI name (fee 1000 + 1 µT per byte) and wait for the block'))
    .requiredOption('--name <abi>', 'ABI name: a lowercase letter, then up to 63 of a-z 0-9 _')
    .option('--version <v>', 'version text (at most 32 characters)')
    .action(run(async (ctx, [file], opts) => {
      const path = resolvePath(file)
      const wasm = await readFile(path).catch(() => { throw new CliError('BAD_FILE', `cannot read ${path}; build contracts with \`npm run contract:build\``) })
      const key = await ctx.unlock()
      const tx = deployContract(key.account, wasm, String(opts.name), typeof opts.version === 'string' ? { version: opts.version } : {})
      const detail = await ctx.submitAndWait(tx, `deploy of ${path} (${wasm.length} bytes)`)
      const id = contractIdFor(tx.id)
      const deployed = await info(ctx, id)
      ctx.print({ id: tx.id, status: 'confirmed', block_index: detail.block_index, contract_id: id, methods: deployed.methods, fee_ut: tx.fee },
        [`deployed ${deployed.name} as ${id} in block ${String(detail.block_index)}; methods: ${deployed.methods.join(', ')}`])
    }))

  withGlobals(contract.command('call').argument('<contract>', 'contract id, or the ABI name of a well-known contract').argument('<method>', 'method name')
    .argument('[args]', 'arguments as a JSON array, e.g. \'["alice_01"]\'').description('CALL_CONTRACT and wait for the block; shows the outcome, gas and return data'))
    .option('--amount <amount>', 'attach this much to the call (T with decimals, or µT with a ut suffix)')
    .option('--gas <n>', `gas limit (default ${DEFAULT_GAS_LIMIT}, at most ${MAX_GAS_LIMIT})`)
    .action(run(async (ctx, positional, opts) => {
      const [name, method, argsText] = positional as [string, string, string | undefined]
      const args = parseArgs(argsText)
      const amount = typeof opts.amount === 'string' ? parseAmount(opts.amount) : 0
      const gasLimit = parseCount(opts.gas, '--gas', 1, MAX_GAS_LIMIT) ?? DEFAULT_GAS_LIMIT
      const id = await contractId(ctx, name)
      const target = await info(ctx, id)
      if (!target.methods.includes(method)) throw new CliError('UNKNOWN_METHOD', `${target.name} (${id}) has no method ${method}; it has ${target.methods.join(', ')}`)
      const key = await ctx.unlock()
      const tx = callContract(key.account, id, method, args, { amount, gasLimit })
      const detail = await ctx.submitAndWait(tx, `call of ${target.name}.${method}`)
      const result = detail.call_result as { ok: boolean, gas_used: number, gas_cost_ut: number, error?: string, return_b64?: string }
      const returned = result.return_b64 === undefined ? undefined : Buffer.from(result.return_b64, 'base64')
      const returnText = returned === undefined ? undefined : asText(returned)
      ctx.print({ id: tx.id, status: 'confirmed', block_index: detail.block_index, contract_id: id, method, ...result, ...(returnText !== undefined ? { return_text: returnText } : {}) }, [
        result.ok ? `${target.name}.${method} succeeded in block ${String(detail.block_index)}` : `${target.name}.${method} failed in block ${String(detail.block_index)}: ${result.error ?? ''} (only the fee and the gas were charged${amount > 0 ? `; the ${showAmount(amount)} came back` : ''})`,
        `gas used ${result.gas_used} of ${gasLimit}, costing ${result.gas_cost_ut} µT beside the ${tx.fee} µT fee`,
        ...(returned !== undefined ? [`returned ${returnText ?? `0x${returned.toString('hex')}`}`] : [])
      ])
      if (!result.ok) process.exitCode = 1
    }))

  withGlobals(contract.command('state').argument('<contract>', 'contract id, or the ABI name of a well-known contract').argument('<key>', 'storage key, e.g. name:alice_01')
    .description('one value of the contract\'s state: as text, hex and u64'))
    .action(run(async (ctx, [name, stateKey]) => {
      const id = await contractId(ctx, name)
      await info(ctx, id)
      const value = await ctx.api(async (c) => await c.contractState(id, stateKey))
      const bytes = value.value_b64 === null ? undefined : Buffer.from(value.value_b64, 'base64')
      const text = bytes === undefined ? undefined : asText(bytes)
      ctx.print({ ...value, ...(text !== undefined ? { value_text: text } : {}) }, bytes === undefined
        ? [`${stateKey}: not set`]
        : [`${stateKey}: ${text !== undefined ? JSON.stringify(text) : `0x${value.value_hex ?? ''}`}${value.value_u64 !== undefined ? ` (u64 ${value.value_u64})` : ''}`])
    }))

  withGlobals(contract.command('logs').argument('<contract>', 'contract id, or the ABI name of a well-known contract').description('the contract\'s logs, newest first'))
    .option('--limit <n>', 'how many (1 to 200; default 20)')
    .action(run(async (ctx, [name], opts) => {
      const id = await contractId(ctx, name)
      await info(ctx, id)
      const page = await ctx.api(async (c) => await c.contractLogs(id, { limit: parseCount(opts.limit, '--limit', 1, 200) ?? 20 }))
      ctx.print(page, page.logs.length === 0 ? ['no logs'] : page.logs.map((l) => `#${l.seq}  block ${l.height}  ${l.tx_id}  ${l.text ?? `0x${l.data_hex}`}`))
    }))

  withGlobals(contract.command('list').description('contracts on the chain, newest first'))
    .option('--limit <n>', 'how many (1 to 200; default 50)')
    .action(run(async (ctx, _args, opts) => {
      const page = await ctx.api(async (c) => await c.contracts({ limit: parseCount(opts.limit, '--limit', 1, 200) ?? 50 }))
      ctx.print(page, page.contracts.map((c) => `${c.contract_id}  ${c.name}${c.version !== undefined ? ` ${c.version}` : ''}${c.well_known ? ' (well known)' : ''}  ${c.methods.join(', ')}`))
    }))
}
