import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { parseListenAddr, readEnv, resolveConfig, resolveConfigLayers } from '../../../src/node/config.js'

describe('configuration layers', () => {
  test('defaults, then the home config file, then flags', () => {
    assert.equal(resolveConfig({}, {}).http_addr, ':8080')
    assert.equal(resolveConfig({}, {}).block_interval_ms, 1000)
    assert.equal(resolveConfig({ block_interval_ms: 500 }, {}).block_interval_ms, 500)
    assert.equal(resolveConfig({ block_interval_ms: 500 }, { block_interval_ms: 250 }).block_interval_ms, 250)
  })

  test('the listener\'s old name (stats_addr, --stats-addr) still works and is reported as deprecated', () => {
    const fromFile = resolveConfigLayers({ stats_addr: '127.0.0.1:9000' }, {})
    assert.equal(fromFile.config.http_addr, '127.0.0.1:9000')
    assert.deepEqual(fromFile.deprecated, ['stats_addr'])
    assert.equal('stats_addr' in fromFile.config, false)
    // a flag beats the file, whichever name either uses
    assert.equal(resolveConfigLayers({ http_addr: ':1' }, { stats_addr: ':2' }).config.http_addr, ':2')
    assert.equal(resolveConfigLayers({ stats_addr: ':1' }, { http_addr: ':2' }).config.http_addr, ':2')
    // in one layer, the current name wins
    assert.equal(resolveConfigLayers({ stats_addr: ':1', http_addr: ':3' }, {}).config.http_addr, ':3')
    assert.deepEqual(resolveConfigLayers({}, {}).deprecated, [])
  })

  test('an invalid value fails with the field named', () => {
    assert.throws(() => resolveConfig({ block_interval_ms: 'soon' }, {}), /block_interval_ms/)
  })

  test('SVC_* environment', () => {
    const env = readEnv({ SVC_API_TOKEN: 's3cret', SVC_API_PRIVATE: 'true', SVC_RATE_LIMIT_RPS: '0' })
    assert.equal(env.apiToken, 's3cret')
    assert.equal(env.apiPrivate, true)
    assert.equal(env.rateLimitRps, 0)
    assert.equal(readEnv({}).rateLimitRps, 50)
    assert.equal(readEnv({}).apiToken, undefined)
    assert.throws(() => readEnv({ SVC_RATE_LIMIT_RPS: 'fast' }), /SVC_RATE_LIMIT_RPS/)
  })

  test('listen addresses', () => {
    assert.deepEqual(parseListenAddr(':8080'), { host: undefined, port: 8080 })
    assert.deepEqual(parseListenAddr('127.0.0.1:9000'), { host: '127.0.0.1', port: 9000 })
    assert.deepEqual(parseListenAddr('[::1]:9000'), { host: '::1', port: 9000 })
    assert.throws(() => parseListenAddr('8080'), /HOST:PORT/)
    assert.throws(() => parseListenAddr(':99999'), /port/)
  })
})

test('config/default.json states exactly the built-in defaults', async () => {
  const { readFile } = await import('node:fs/promises')
  const { DEFAULT_CONFIG_PATH } = await import('../../../src/node/home.js')
  const file = JSON.parse(await readFile(DEFAULT_CONFIG_PATH, 'utf8')) as Record<string, unknown>
  const defaults = resolveConfig({}, {})
  assert.deepEqual(resolveConfig(file, {}), defaults)
  // and names every plain setting that has a default (the onboarding group is documented on its own)
  const unnamed = Object.entries(defaults).filter(([key, value]) => value !== undefined && (typeof value !== 'object' || Array.isArray(value)) && !(key in file))
  assert.deepEqual(unnamed.map(([key]) => key), [])
})

test('empty blocks: off by default with a 30 s heartbeat; flags and config.json set them', () => {
  const defaults = resolveConfig({}, {})
  assert.equal(defaults.empty_blocks, false)
  assert.equal(defaults.empty_block_interval_ms, 30_000)
  assert.equal(resolveConfig({ empty_blocks: true }, {}).empty_blocks, true)
  assert.equal(resolveConfig({}, { empty_block_interval_ms: 0 }).empty_block_interval_ms, 0)
  assert.throws(() => resolveConfig({ empty_blocks: 'yes' }, {}), /empty_blocks/)
  assert.throws(() => resolveConfig({ empty_block_interval_ms: -1 }, {}), /empty_block_interval_ms/)
})

test('prune_keep_blocks: 0 (keep all) by default; a negative, fractional or non-number value is refused by name', () => {
  assert.equal(resolveConfig({}, {}).prune_keep_blocks, 0)
  assert.equal(resolveConfig({}, { prune_keep_blocks: 100_000 }).prune_keep_blocks, 100_000)
  for (const bad of [-1, 2.5, 'all']) assert.throws(() => resolveConfig({ prune_keep_blocks: bad }, {}), /prune_keep_blocks/)
})
