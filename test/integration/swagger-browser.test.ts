/**
 * /swagger in a real browser: Debian's chromium (installed by .ci/run; see README) driven by
 * playwright-core, with every request that leaves 127.0.0.1 refused, as on a node with no
 * internet. The page lists the node's operations from its own OpenAPI document, and a "Try it
 * out" call reaches the node and shows its answer. In fully private mode the page opened with
 * `?token=` works the same.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { chromium, type Browser, type Page } from 'playwright-core'
import { http, startNode, stopAllNodes, type NodeProcess } from '../helpers/node-process.js'
import { CHROMIUM, offlineContext } from '../helpers/offline-browser.js'

/** A page whose requests may go to 127.0.0.1 only; the others are refused and listed. */
async function offlinePage (browser: Browser, refused: string[]): Promise<Page> {
  return await (await offlineContext(browser, refused)).newPage()
}

async function tryNetstats (page: Page): Promise<void> {
  const operation = page.locator('.opblock', { has: page.locator('.opblock-summary-path', { hasText: /^\/api\/netstats$/ }) })
  await operation.locator('.opblock-summary').click()
  await operation.getByRole('button', { name: 'Try it out' }).click()
  await operation.getByRole('button', { name: 'Execute' }).click()
  const status = operation.locator('.live-responses-table .response .response-col_status').first()
  await status.waitFor({ timeout: 20_000 })
  assert.equal((await status.innerText()).trim(), '200')
  const body = await operation.locator('.live-responses-table .response-col_description pre').first().innerText()
  assert.match(body, /"chain_id"/)
}

describe('/swagger in headless Chromium, network cut off', () => {
  let browser: Browser | undefined

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `this test drives Debian's chromium at ${CHROMIUM}: apt-get install chromium (.ci/run does), or set CHROMIUM_PATH`)
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] })
  })

  after(async () => {
    await browser?.close()
    await stopAllNodes()
  })

  test('lists the operations and a "Try it out" call works, with nothing fetched from outside', async () => {
    assert.ok(browser !== undefined)
    const node: NodeProcess = await startNode()
    const refused: string[] = []
    const page = await offlinePage(browser, refused)
    await page.goto(`${node.url}/swagger`)
    await page.locator('.opblock').first().waitFor({ timeout: 20_000 })
    const paths = await page.locator('.opblock-summary-path').allInnerTexts()
    const doc = (await http(node.url, 'GET', '/swagger/openapi.json')).json as { paths: Record<string, Record<string, unknown>> }
    const operations = Object.values(doc.paths).reduce((sum, methods) => sum + Object.keys(methods).length, 0)
    for (const path of ['/api/tx', '/api/netstats', '/relay/broadcast', '/feed/publish', '/metrics']) assert.ok(paths.includes(path), `${path} is listed`)
    assert.equal(paths.length, operations, 'every documented operation is on the page')
    await tryNetstats(page)
    assert.deepEqual(refused, [], 'the page needs nothing from outside this node')
  })

  test('fully private mode: the page opened with ?token= loads and its calls carry the token', async () => {
    assert.ok(browser !== undefined)
    const node = await startNode({ env: { SVC_API_TOKEN: 'swagger-secret', SVC_API_PRIVATE: 'true' }, token: 'swagger-secret' })
    const page = await offlinePage(browser, [])
    const closed = await page.goto(`${node.url}/swagger`)
    assert.equal(closed?.status(), 401)
    await page.goto(`${node.url}/swagger?token=swagger-secret`)
    await page.locator('.opblock').first().waitFor({ timeout: 20_000 })
    await tryNetstats(page)
  })
})
