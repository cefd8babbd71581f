/** The committed registry wasm is what the contract build produces (genesis must not drift). */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { CONTRACT_SOURCES, compileContract } from '../../../src/contracts/build-tool.js'
import { usernameRegistryWasm } from '../../../src/contracts/wellknown.js'

test('rebuilding the username registry gives the committed bytes', async () => {
  const rebuilt = await compileContract(CONTRACT_SOURCES['username-registry'])
  assert.ok(Buffer.from(rebuilt).equals(Buffer.from(usernameRegistryWasm())), 'run npm run contract:build and commit contracts/build')
})
