/**
 * The node's home directory: config.json, genesis.json, node_key.json, validator_key.json and
 * data/ (the lmdb store). `initHome` creates it; `loadHome` reads and validates it.
 */
import { mkdir, readFile, writeFile, access } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { generateKeyPair, keyPairFromSeed, seedOf, toHex, type KeyPair } from '../crypto/index.js'
import { GenesisSchema, formatTimestamp, NEW_CHAIN_PARAMS, type Genesis } from '../chain/index.js'
import { sealKeyFromEd25519 } from '../relay/index.js'
import { parseOrThrow } from '../validation/index.js'
import type { NodeConfig } from './config.js'

export interface Home {
  dir: string
  dataDir: string
  genesis: Genesis
  nodeKey: KeyPair
  validatorKey: KeyPair
  fileConfig: unknown
}

interface KeyFile {
  type: 'ed25519'
  pub_key: string
  seed: string
}

export interface InitOptions {
  chainId?: string
  alloc?: Array<{ pub_key: string, amount_ut: number }>
  /** when given, the genesis is shared (testnet) instead of a single-validator one */
  genesis?: Genesis
  validatorKey?: KeyPair
  nodeKey?: KeyPair
  config?: Partial<NodeConfig>
  now?: number
}

export async function exists (path: string): Promise<boolean> {
  try {
    await access(path)
    return true
  } catch {
    return false
  }
}

function keyFile (pair: KeyPair): KeyFile {
  return { type: 'ed25519', pub_key: toHex(pair.publicKey), seed: toHex(seedOf(pair)) }
}

async function readKey (path: string): Promise<KeyPair> {
  const file = JSON.parse(await readFile(path, 'utf8')) as KeyFile
  const pair = keyPairFromSeed(Buffer.from(file.seed, 'hex'))
  if (toHex(pair.publicKey) !== file.pub_key) throw new Error(`${path}: pub_key does not match seed`)
  return pair
}

/** The repository's config/default.json: the settings a new home starts with. */
export const DEFAULT_CONFIG_PATH = fileURLToPath(new URL('../../../config/default.json', import.meta.url))

/**
 * The genesis relay entry of a node: its account (validator) key hosts posts and collects
 * relay fees, its node key's X25519 form is the key it seals with (docs/protocol.md § 5.1).
 */
export function genesisRelayOf (nodeKey: KeyPair, validatorKey: KeyPair): NonNullable<Genesis['relays']>[number] {
  return { pub_key: toHex(validatorKey.publicKey), x25519_pub_key: toHex(sealKeyFromEd25519(nodeKey.secretKey).publicKey), fee_per_msg_ut: 0 }
}

export async function initHome (dir: string, opts: InitOptions = {}): Promise<Home> {
  if (await exists(join(dir, 'genesis.json'))) throw new Error(`${dir} is already initialised`)
  await mkdir(join(dir, 'data'), { recursive: true })
  const nodeKey = opts.nodeKey ?? generateKeyPair()
  const validatorKey = opts.validatorKey ?? generateKeyPair()
  const genesis = opts.genesis ?? parseOrThrow(GenesisSchema, {
    chain_id: opts.chainId ?? 'kith-dev',
    genesis_time: formatTimestamp(opts.now ?? Date.now()),
    params: NEW_CHAIN_PARAMS,
    validators: [{ pub_key: toHex(validatorKey.publicKey), power: 1, name: 'node0' }],
    alloc: opts.alloc ?? [],
    relays: [genesisRelayOf(nodeKey, validatorKey)]
  }, 'CONFIG_INVALID', 'genesis')
  await writeFile(join(dir, 'genesis.json'), JSON.stringify(genesis, null, 2) + '\n')
  await writeFile(join(dir, 'node_key.json'), JSON.stringify(keyFile(nodeKey), null, 2) + '\n', { mode: 0o600 })
  await writeFile(join(dir, 'validator_key.json'), JSON.stringify(keyFile(validatorKey), null, 2) + '\n', { mode: 0o600 })
  const fileConfig = { ...JSON.parse(await readFile(DEFAULT_CONFIG_PATH, 'utf8')) as object, ...opts.config }
  await writeFile(join(dir, 'config.json'), JSON.stringify(fileConfig, null, 2) + '\n')
  return { dir, dataDir: join(dir, 'data'), genesis, nodeKey, validatorKey, fileConfig }
}

export async function loadHome (dir: string): Promise<Home> {
  if (!await exists(join(dir, 'genesis.json'))) throw new Error(`${dir} is not a kith home (no genesis.json); run \`kith init --home ${dir}\``)
  const genesis = parseOrThrow(GenesisSchema, JSON.parse(await readFile(join(dir, 'genesis.json'), 'utf8')), 'CONFIG_INVALID', 'genesis.json')
  const fileConfig: unknown = await exists(join(dir, 'config.json')) ? JSON.parse(await readFile(join(dir, 'config.json'), 'utf8')) : {}
  return {
    dir,
    dataDir: join(dir, 'data'),
    genesis,
    nodeKey: await readKey(join(dir, 'node_key.json')),
    validatorKey: await readKey(join(dir, 'validator_key.json')),
    fileConfig
  }
}
