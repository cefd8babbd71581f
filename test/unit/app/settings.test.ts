/** The SVC_* settings layered from config.json and the environment (src/app/settings.ts). */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ENV_SETTINGS, layeredEnv, readServiceSettings, unknownConfigKeys } from '../../../src/app/index.js'
import { KithError } from '../../../src/errors/index.js'

test('config.json sets a setting under its key; the environment wins; each value says where it came from', () => {
  const { env, sources } = layeredEnv({ relay_read_auth: true, rate_limit_rps: 9, api_token: 'from-file' }, { SVC_RATE_LIMIT_RPS: '7', PATH: '/bin' })
  const settings = readServiceSettings(env)
  assert.equal(settings.relay.requireReadAuth, true)
  assert.equal(settings.api.rateLimitRps, 7)
  assert.equal(settings.api.apiToken, 'from-file')
  assert.equal(sources.get('SVC_RELAY_READ_AUTH'), 'config.json')
  assert.equal(sources.get('SVC_RATE_LIMIT_RPS'), 'environment')
  assert.equal(sources.get('SVC_WS_IDLE_MS'), undefined, 'a default has no source entry')
  assert.equal(env.PATH, '/bin', 'the rest of the environment passes through')
})

test('garbage in config.json is refused naming the key or the variable, never silently taken', () => {
  assert.throws(() => layeredEnv({ rate_limit_rps: { nested: 1 } }, {}), (err: unknown) => err instanceof KithError && err.code === 'CONFIG_INVALID' && /rate_limit_rps/.test(err.message))
  assert.throws(() => readServiceSettings(layeredEnv({ rate_limit_rps: 'lots' }, {}).env), /SVC_RATE_LIMIT_RPS/)
  assert.throws(() => readServiceSettings(layeredEnv({ mailbox_ttl_days: -1 }, {}).env), /SVC_MAILBOX_TTL_DAYS/)
})

test('a key that names no setting is reported; every setting has its own key and variable', () => {
  assert.deepEqual(unknownConfigKeys({ http_addr: ':1', relay_read_auth: true, rate_limit_rsp: 5 }, ['http_addr']), ['rate_limit_rsp'])
  assert.equal(new Set(ENV_SETTINGS.map((s) => s.key)).size, ENV_SETTINGS.length)
  assert.equal(new Set(ENV_SETTINGS.map((s) => s.env)).size, ENV_SETTINGS.length)
})
