/**
 * Well-known contracts the node deploys at genesis. Their wasm is built by
 * `npm run contract:build` and committed, so every node deploys the same bytes (a unit test
 * rebuilds the registry and compares).
 */
import { readFileSync } from 'node:fs'
import { genesisContractId, type ContractExecutor, type GenesisContract } from '../chain/index.js'

/** ABI name of the username registry (contracts/username-registry.ts; rules in docs/contracts.md). */
export const USERNAME_REGISTRY_NAME = 'username_registry'
export const USERNAME_REGISTRY_VERSION = '1'
/** Its id on every chain: contracts deployed at genesis are named by their ABI name. */
export const USERNAME_REGISTRY_ID = genesisContractId(USERNAME_REGISTRY_NAME)

/**
 * The registry's rules, enforced by its own code and published here for /api/limits and for
 * clients that check before they pay: exactly USERNAME_FEE_UT attached to `register`, 4 to 32
 * characters of a-z, 0-9 and _, ASCII uppercase folded to lowercase.
 */
export const USERNAME_FEE_UT = 10_000
export const USERNAME_MIN_CHARS = 4
export const USERNAME_MAX_CHARS = 32
export const USERNAME_RE = /^[a-z0-9_]{4,32}$/

/** A username as the registry stores it: ASCII uppercase folded to lowercase. */
export function foldUsername (name: string): string {
  return name.replace(/[A-Z]/g, (c) => c.toLowerCase())
}

/** The registry's committed wasm (contracts/build/username-registry.wasm; this file runs from dist/src/contracts). */
export function usernameRegistryWasm (): Uint8Array {
  return new Uint8Array(readFileSync(new URL('../../../contracts/build/username-registry.wasm', import.meta.url)))
}

/** The contracts deployed at genesis on every chain, prepared by `engine`. */
export function genesisContracts (engine: Pick<ContractExecutor, 'prepare'>): GenesisContract[] {
  return [{ name: USERNAME_REGISTRY_NAME, version: USERNAME_REGISTRY_VERSION, prepared: engine.prepare(usernameRegistryWasm()) }]
}
