/** The `kith` command line: init, start (and start --dev), testnet, sidecar, update, snapshot, and the wallet (wallet/). See docs and decisions.md. */
import { readFile, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { Command, Option } from 'commander'
import { pino } from 'pino'
import { registerConfigCommand } from './config.js'
import { flagValues } from './flags.js'
import type { NodeApp } from '../app/index.js'
import { stopOnSignals } from './shutdown.js'
import { createTestnet } from './testnet.js'
import { registerSidecarCommand } from './sidecar.js'
import { registerSnapshotCommands } from './snapshot.js'
import { registerUpdateCommand } from './update.js'
import { registerWalletCommands } from './wallet/index.js'
import { generateKeyPair, seedOf, toHex } from '../crypto/index.js'
import { GenesisSchema, isPubkeyHex } from '../chain/index.js'
import { BUILD, PROTOCOL_VERSION } from '../release/index.js'
import { parseOrThrow } from '../validation/index.js'
import { followParent, needsRelaunch, relaunch, resourceCaps } from './resource-caps.js'
import { getHeapStatistics } from 'node:v8'
import {
  DEPRECATED_NAMES, NodeConfigSchema, START_FLAGS, denyListFromEnv, exists, initHome, loadHome, resolveConfigLayers
} from '../node/index.js'

const DEV_HOME = '.kith'
/** µT credited to the dev account of `start --dev`: one million T. */
const DEV_ACCOUNT_UT = 1_000_000 * 1_000_000
const SHUTDOWN_GRACE_MS = 10_000

/** `kith --version`: the tag, the commit it was built from (when stamped) and the protocol version. */
function versionLine (): string {
  const commit = BUILD.commit === undefined ? '' : ` (${BUILD.commit.slice(0, 12)}${BUILD.dirty === 'true' ? ', dirty' : ''})`
  return `kith ${BUILD.tag}${commit}, protocol ${PROTOCOL_VERSION}`
}

/** JSON.parse naming the file: its own SyntaxError says only where in which text. */
function parseJsonFile (file: string, text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (err) {
    throw new Error(`${file} is not JSON: ${(err as Error).message}`, { cause: err })
  }
}

function parseAlloc (value: string, previous: Array<{ pub_key: string, amount_ut: number }> = []): Array<{ pub_key: string, amount_ut: number }> {
  const [pub, amount] = value.split('=')
  const ut = Number(amount)
  if (pub === undefined || !isPubkeyHex(pub) || !Number.isSafeInteger(ut) || ut < 0) {
    throw new Error(`--alloc expects PUBKEY=UT with a 64-character lowercase hex pubkey and a whole number of µT, got "${value}"`)
  }
  return [...previous, { pub_key: pub, amount_ut: ut }]
}

function collect (value: string, previous: string[] = []): string[] {
  return [...previous, value]
}


async function initDevHome (home: string, alloc: Array<{ pub_key: string, amount_ut: number }>): Promise<void> {
  const dev = generateKeyPair()
  const devPub = toHex(dev.publicKey)
  await initHome(home, {
    chainId: 'kith-dev',
    alloc: [{ pub_key: devPub, amount_ut: DEV_ACCOUNT_UT }, ...alloc],
    config: {
      http_addr: ':8080',
      p2p_listen: ['/ip4/127.0.0.1/tcp/4001'],
      // the dev account doubles as the onboarding faucet, so apps can sign up against a dev node
      onboarding: { enabled: true, key_file: 'dev_account.json', amount_ut: 20_000, per_ip_interval_s: 0, per_key_interval_s: 60 }
    }
  })
  await writeFile(join(home, 'dev_account.json'), JSON.stringify({ type: 'ed25519', pub_key: devPub, seed: toHex(seedOf(dev)) }, null, 2) + '\n', { mode: 0o600 })
  console.log(`initialised dev network in ${home}; dev account ${devPub} holds 1000000 T (key in ${join(home, 'dev_account.json')})`)
}

async function start (opts: Record<string, unknown>): Promise<void> {
  const dev = opts.dev === true
  const homeArg = opts.home as string | undefined
  if (homeArg === undefined && !dev) throw new Error('start needs --home DIR (or --dev)')
  const home = resolve(homeArg ?? DEV_HOME)
  const alloc = opts.alloc as Array<{ pub_key: string, amount_ut: number }> | undefined
  const created = await exists(join(home, 'genesis.json'))
  // a genesis allocation cannot change an existing chain: say so rather than start without it
  if (alloc !== undefined && !dev) throw new Error('start takes --alloc only with --dev; for another home, give --alloc to bin/kith init when you create it')
  if (alloc !== undefined && created) {
    throw new Error(`--alloc only applies when --dev creates a new home, and ${home} already has a genesis. ` +
      `Fund a key from the dev account instead: bin/kith keys import ${join(home, 'dev_account.json')} --name dev, then bin/kith send <key> <amount> --key dev ` +
      `(or remove ${home} to start a new chain)`)
  }
  if (dev && !created) await initDevHome(home, alloc ?? [])
  const loaded = await loadHome(home)
  const { config, deprecated } = resolveConfigLayers(loaded.fileConfig, flagValues(opts))
  const caps = resourceCaps(config.max_cpu, config.max_ram_mb, undefined, config.http_workers)
  // the caps are applied by running the node as a child, which reads and warns about the rest
  if (needsRelaunch(caps)) {
    process.exitCode = await relaunch(caps)
    return
  }
  for (const old of deprecated) {
    const { key, flag } = DEPRECATED_NAMES[old]
    console.error(`warning: "${old}" (${flag}) is deprecated; use "${key}" (--${key.replace(/_/g, '-')}) instead`)
  }
  // the node's assembly loads libp2p, Koa, lmdb and sharp (~1 s): only `start` needs it, not every wallet command
  const { createNode, layeredEnv, readServiceSettings, unknownConfigKeys } = await import('../app/index.js')
  for (const key of unknownConfigKeys(loaded.fileConfig, [...Object.keys(NodeConfigSchema.shape), ...Object.keys(DEPRECATED_NAMES)])) {
    console.error(`warning: ${join(home, 'config.json')} sets "${key}", which is no setting; \`kith config --home ${home}\` lists them`)
  }
  // the SVC_* settings: defaults, then config.json, then the environment
  const services = readServiceSettings(layeredEnv(loaded.fileConfig, process.env).env)
  const logger = pino({ level: config.log_level, base: { pid: process.pid } })
  // a signal during start-up (opening the store, rebuilding indexes, dialing peers) stops what has
  // started, as one after it does, instead of killing the process half-way
  const running: { node?: NodeApp } = {}
  let stopRequested = false
  stopOnSignals(logger, async () => {
    stopRequested = true
    await running.node?.stop()
  }, SHUTDOWN_GRACE_MS)
  logger.info({
    maxCpu: config.max_cpu, maxRamMb: config.max_ram_mb, verifyWorkers: caps.verifyWorkers, httpWorkers: caps.httpWorkers, imageWorkers: caps.imageWorkers, viewPairs: caps.viewPairs,
    uvThreads: process.env.UV_THREADPOOL_SIZE ?? 'default', heapLimitMb: Math.round(getHeapStatistics().heap_size_limit / 2 ** 20)
  }, 'resource caps')

  const node = createNode({
    home: loaded,
    config,
    caps,
    env: services.api,
    relay: services.relay,
    media: services.media,
    realtime: services.realtime,
    pendingLimits: services.pending,
    denyPeers: denyListFromEnv()
  }, { logger })
  running.node = node
  if (stopRequested) return
  try {
    await node.start()
  } catch (err) {
    // stop() aborted the start: the shutdown handler reports and sets the exit code
    if (stopRequested) return
    throw err
  }
  followParent()
}

export function buildProgram (): Command {
  const program = new Command('kith').description('kith node: permissioned chain, encrypted relay mailbox, social feed').showHelpAfterError()
    .version(versionLine(), '-V, --version', 'print the version, its build commit and the wire protocol version')
    // kith's own options only before a command: `contract deploy --version V` is the contract's version
    .enablePositionalOptions()

  program.command('init')
    .description('create a home directory: node key, validator key, config and a single-validator genesis')
    .requiredOption('--home <dir>', 'home directory to create')
    .option('--chain-id <id>', 'chain id', 'kith-local')
    .option('--alloc <pubkey=ut>', 'credit an Ed25519 pubkey (hex) with UT micro-tokens at genesis; may repeat', parseAlloc)
    .option('--genesis <file>', 'join an existing network: use its genesis.json instead of writing a new one')
    .action(async (opts: { home: string, chainId: string, alloc?: Array<{ pub_key: string, amount_ut: number }>, genesis?: string }) => {
      if (opts.genesis !== undefined && opts.alloc !== undefined) throw new Error('--alloc writes a new genesis; it cannot change the one --genesis gives')
      const genesis = opts.genesis === undefined
        ? undefined
        : parseOrThrow(GenesisSchema, parseJsonFile(opts.genesis, await readFile(opts.genesis, 'utf8')), 'CONFIG_INVALID', opts.genesis)
      const home = await initHome(resolve(opts.home), { chainId: opts.chainId, alloc: opts.alloc ?? [], ...(genesis !== undefined ? { genesis } : {}) })
      console.log(JSON.stringify({
        home: home.dir,
        chain_id: home.genesis.chain_id,
        node_key: toHex(home.nodeKey.publicKey),
        validator_key: toHex(home.validatorKey.publicKey)
      }, null, 2))
    })

  const startCmd = program.command('start')
    .description('run the node until SIGINT/SIGTERM')
    .option('--home <dir>', 'home directory (default ./.kith with --dev)')
    .option('--dev', 'initialise a single-node dev network on first use, then start it')
    .option('--alloc <pubkey=ut>', 'with --dev on first use: extra genesis allocation; may repeat', parseAlloc)
  for (const def of START_FLAGS) {
    const option = new Option(def.flag, def.help)
    if (def.kind === 'list') option.argParser(collect)
    startCmd.addOption(option)
  }
  for (const { key, flag } of Object.values(DEPRECATED_NAMES)) startCmd.addOption(new Option(`${flag} <value>`, `deprecated: use --${key.replace(/_/g, '-')}`).hideHelp())
  startCmd.action(start)

  program.command('testnet')
    .description('write one home per validator, sharing one genesis, for a local network on 127.0.0.1 (or in containers: --compose)')
    .requiredOption('--validators <n>', 'number of validators')
    .requiredOption('--output <dir>', 'directory for node0 … node{N-1}')
    .option('--base-port <p>', 'node i: HTTP on P+2i, libp2p on P+2i+1', '26000')
    .option('--compose', 'the docker/compose.yml layout instead: node i is the host nodeI, HTTP on :8080, libp2p on 4001, peers /dns4/nodeJ/tcp/4001')
    .option('--chain-id <id>', 'chain id', 'kith-testnet')
    .option('--alloc <pubkey=ut>', 'credit an Ed25519 pubkey with UT µT at genesis; may repeat', parseAlloc)
    .action(async (opts: { validators: string, output: string, basePort: string, compose?: boolean, chainId: string, alloc?: Array<{ pub_key: string, amount_ut: number }> }) => {
      const nodes = await createTestnet({
        validators: Number(opts.validators),
        output: opts.output,
        basePort: Number(opts.basePort),
        compose: opts.compose === true,
        chainId: opts.chainId,
        alloc: opts.alloc ?? []
      })
      console.log(JSON.stringify({ chain_id: opts.chainId, nodes }, null, 2))
      // a genesis cannot be funded later, and without a balance nobody can pay a fee
      if (opts.alloc === undefined) {
        console.error(`warning: no --alloc, so nobody holds a token on this chain and nobody can send a transaction (every one pays a fee). ` +
          `To fund a key, write the network again with it: bin/kith keys new --name alice, then bin/kith testnet --validators ${opts.validators} ` +
          `--output ${opts.output} --alloc <alice's pubkey>=1000000000 (1,000 T; remove ${opts.output} first)`)
      }
    })
  registerConfigCommand(program, startCmd)
  registerSidecarCommand(program)
  registerSnapshotCommands(program)
  registerUpdateCommand(program)
  registerWalletCommands(program)
  return program
}

export async function main (argv: string[]): Promise<void> {
  try {
    const program = buildProgram()
    // commander answers `--help` before it looks at the command, so `kith nosuch --help` printed
    // the main help and exited 0: name the unknown command first
    const first = argv[2]
    if (first !== undefined && first !== 'help' && !first.startsWith('-') && !program.commands.some((c) => c.name() === first || c.aliases().includes(first))) {
      throw new Error(`unknown command '${first}'; \`kith --help\` lists the commands`)
    }
    await program.parseAsync(argv)
  } catch (err) {
    console.error(`kith: ${err instanceof Error ? err.message : String(err)}`)
    process.exitCode = 1
  }
}
