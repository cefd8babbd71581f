/** Amounts on the wallet command line: tokens with up to six decimals, or µT with a ut suffix. */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { CliError, parseAmount } from '../../../src/cli/wallet/index.js'

test('tokens with decimals and micro-tokens with a suffix', () => {
  assert.equal(parseAmount('1'), 1_000_000)
  assert.equal(parseAmount('1.5'), 1_500_000)
  assert.equal(parseAmount('1.5T'), 1_500_000)
  assert.equal(parseAmount('0.000001'), 1)
  assert.equal(parseAmount('1500ut'), 1500)
  assert.equal(parseAmount('1500uT'), 1500)
  assert.equal(parseAmount('1500µT'), 1500)
})

test('refuses what is not an amount, with the code BAD_AMOUNT', () => {
  for (const bad of ['', 'abc', '1.2345678', '-1', '0', '0ut', '1.5ut', '1e6', '99999999999999999999']) {
    assert.throws(() => parseAmount(bad), (err: unknown) => err instanceof CliError && err.code === 'BAD_AMOUNT', bad)
  }
})
