/**
 * Versioning and limits through HTTP against real node processes: the build stamp and feature
 * tags of /api/well-known-version, /api/update-check against a local release source (503 without
 * one; 502 on an error status, garbage, an invalid feed or silence; 200 with the newest release),
 * and /api/limits publishing what the node enforces.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { FEATURES } from '../../src/api/index.js'
import { LimitsSchema } from '../../src/api/limits.js'
import { MAX_POST_SIZE, MIN_FEE, TIMESTAMP_TOLERANCE_MS } from '../../src/chain/index.js'
import { DEFAULT_PAGE_SIZE } from '../../src/relay/index.js'
import { UpdateCheckSchema, type BuildInfo } from '../../src/release/index.js'
import { errorMessage, http, REPO_ROOT, startNode, stopAllNodes, type NodeProcess } from '../helpers/node-process.js'
import { ReleaseSource, buildReleaseTarball, feedEntry } from '../helpers/release-source.js'

const pkgVersion = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version

describe('versioning and limits over HTTP', () => {
  const source = new ReleaseSource()
  let plain: NodeProcess
  let sourced: NodeProcess

  before(async () => {
    await source.start()
    ;[plain, sourced] = await Promise.all([
      startNode({
        env: { SVC_MAILBOX_TTL_DAYS: '0.5', SVC_MAX_BODY_BYTES: '200000', SVC_RELAY_SENDER_RPS: '3' },
        args: ['--feed-disk-limit-mb', '3']
      }),
      startNode({ env: { SVC_UPDATE_SOURCE_URL: `${source.url}/feed.json`, SVC_UPDATE_TIMEOUT_MS: '500' } })
    ])
  })
  after(async () => {
    await stopAllNodes()
    await source.stop()
  })

  test('GET /api/well-known-version: node version, protocol 1, chain id, the features built and the stamped build', async () => {
    const res = await http(plain.url, 'GET', '/api/well-known-version')
    assert.equal(res.status, 200)
    const body = res.json as { node_version: string, protocol_version: number, features: string[], chain_id: string, build: BuildInfo }
    assert.equal(body.node_version, pkgVersion)
    assert.equal(body.protocol_version, 1)
    assert.equal(body.chain_id, 'kith-test')
    assert.deepEqual(body.features, FEATURES)
    assert.equal(new Set(body.features).size, body.features.length)
    const stampFile = join(REPO_ROOT, 'dist', 'build-info.json')
    if (!existsSync(stampFile)) {
      assert.deepEqual(body.build, { tag: `v${pkgVersion}` }, 'compiled without the stamp: only the tag')
      return
    }
    // the stamp `npm run build` wrote, naming a commit that exists in this repository
    assert.deepEqual(body.build, JSON.parse(readFileSync(stampFile, 'utf8')))
    if (body.build.commit !== undefined) {
      assert.match(body.build.commit, /^[0-9a-f]{40}$/)
      execFileSync('git', ['cat-file', '-e', `${body.build.commit}^{commit}`], { cwd: REPO_ROOT })
      assert.ok(body.build.dirty === 'true' || body.build.dirty === 'false')
      assert.ok(!Number.isNaN(Date.parse(body.build.date ?? '')))
    }
  })

  test('GET /api/update-check without SVC_UPDATE_SOURCE_URL is 503 with a JSON error', async () => {
    const res = await http(plain.url, 'GET', '/api/update-check')
    assert.equal(res.status, 503)
    assert.match(errorMessage(res), /SVC_UPDATE_SOURCE_URL/)
  })

  test('GET /api/update-check is 502 when the source fails, answers garbage or an invalid feed, or does not answer', async () => {
    source.answers.set('/feed.json', { status: 500 })
    let res = await http(sourced.url, 'GET', '/api/update-check')
    assert.equal(res.status, 502)
    assert.match(errorMessage(res), /HTTP 500/)

    source.answers.set('/feed.json', { body: 'releases: yes', contentType: 'text/plain' })
    res = await http(sourced.url, 'GET', '/api/update-check')
    assert.equal(res.status, 502)
    assert.match(errorMessage(res), /not JSON/)

    source.answers.set('/feed.json', { json: { releases: [{ version: '2.0', url: 'x', sha256: 'no', published_at: 'today' }] } })
    res = await http(sourced.url, 'GET', '/api/update-check')
    assert.equal(res.status, 502)
    assert.match(errorMessage(res), /invalid release feed: releases\.0\./)

    source.answers.set('/feed.json', { hang: true })
    res = await http(sourced.url, 'GET', '/api/update-check')
    assert.equal(res.status, 502)
    assert.match(errorMessage(res), /did not answer within 500 ms/)
  })

  test('GET /api/update-check names the newest release and whether it is newer than this node', async () => {
    const newer = await buildReleaseTarball('99.1.0')
    source.answers.set('/feed.json', {
      json: { releases: [feedEntry(newer, 'artifacts/kith-99.1.0.tar.gz', { commit: 'abcdef0' }), { ...feedEntry(newer, 'old.tar.gz'), version: pkgVersion }] }
    })
    const res = await http(sourced.url, 'GET', '/api/update-check')
    assert.equal(res.status, 200, res.text)
    const body = UpdateCheckSchema.parse(res.json)
    assert.equal(body.update_available, true)
    assert.deepEqual(body.latest, {
      tag: 'v99.1.0', version: '99.1.0', commit: 'abcdef0', url: `${source.url}/artifacts/kith-99.1.0.tar.gz`,
      published_at: '2026-01-02T03:04:05Z', sha256: newer.sha256, notes: 'kith 99.1.0'
    })
    const version = (await http(sourced.url, 'GET', '/api/well-known-version')).json as { build: BuildInfo }
    assert.deepEqual(body.current, version.build)
    assert.equal(body.source, `${source.url}/feed.json`)
    assert.ok(!Number.isNaN(Date.parse(body.checked_at)))
  })

  test('GET /api/limits publishes what the node enforces, its settings included', async () => {
    const res = await http(plain.url, 'GET', '/api/limits')
    assert.equal(res.status, 200)
    const limits = LimitsSchema.parse(res.json)
    assert.equal(limits.http.max_body_bytes, 200_000)
    assert.equal(limits.http.rate_limit_rps, 0, 'the test harness turns the per-IP limit off')
    assert.equal(limits.chain.min_fee_ut, MIN_FEE)
    assert.equal(limits.chain.timestamp_tolerance_s, TIMESTAMP_TOLERANCE_MS / 1000)
    assert.equal(limits.relay?.mailbox_ttl_s, 43_200)
    assert.equal(limits.relay?.sender_rate_limit_rps, 3)
    assert.equal(limits.relay?.inbox_page.default, DEFAULT_PAGE_SIZE)
    assert.equal(limits.feed?.max_post_size_bytes, MAX_POST_SIZE)
    assert.equal(limits.feed?.disk_limit_bytes, 3 * 1024 * 1024)
    assert.ok(limits.mempool.max_txs > 0 && limits.chain.max_block_txs > 0)

    // the published body cap is the one enforced
    const atCap = await http(plain.url, 'POST', '/api/tx', { rawBody: JSON.stringify({ pad: 'x'.repeat(limits.http.max_body_bytes) }) })
    assert.equal(atCap.status, 413)
    assert.match(errorMessage(atCap), /200000 bytes/)
    // and the published address page cap too
    const overPage = await http(plain.url, 'GET', `/api/address/${plain.validatorPub}?limit=${limits.chain.address_history.max + 1}`)
    assert.equal(overPage.status, 400)
    assert.equal((await http(plain.url, 'GET', `/api/address/${plain.validatorPub}?limit=${limits.chain.address_history.max}`)).status, 200)

    const other = LimitsSchema.parse((await http(sourced.url, 'GET', '/api/limits')).json)
    assert.equal(other.feed?.disk_limit_bytes, null, 'without --feed-disk-limit-mb: unlimited')
  })

  test('the OpenAPI document describes /api/limits and /api/update-check with their schemas and errors', async () => {
    const doc = (await http(plain.url, 'GET', '/swagger/openapi.json')).json as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }> }>>
    }
    const limits = doc.paths['/api/limits'].get.responses
    assert.equal(limits['200'].content?.['application/json'].schema.$ref, '#/components/schemas/Limits')
    const check = doc.paths['/api/update-check'].get.responses
    assert.equal(check['200'].content?.['application/json'].schema.$ref, '#/components/schemas/UpdateCheck')
    assert.ok(check['502'] !== undefined && check['503'] !== undefined)
  })
})
