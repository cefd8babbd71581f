/**
 * Well-known contracts the node deploys at genesis. Their wasm is built by
 * `npm run contract:build` and committed, so every node deploys the same bytes (a unit test
 * rebuilds the registry and compares).
 */
import { readFileSync } from 'node:fs'

/** ABI name of the username registry (contracts/username-registry.ts; rules in docs/contracts.md). */
export const USERNAME_REGISTRY_NAME = 'username_registry'
/** µT a `register` call must attach, exactly. */
export const USERNAME_REGISTER_FEE_UT = 10_000

/** The registry's committed wasm (contracts/build/username-registry.wasm; this file runs from dist/src/contracts). */
export function usernameRegistryWasm (): Uint8Array {
  return new Uint8Array(readFileSync(new URL('../../../contracts/build/username-registry.wasm', import.meta.url)))
}
