/**
 * Headless Chromium for the page tests: Debian's chromium (installed by .ci/run; see README)
 * driven by playwright-core, with every request that leaves 127.0.0.1 refused, as on a node with
 * no internet.
 */
import type { Browser, BrowserContext } from 'playwright-core'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** A browser context whose requests may go to 127.0.0.1 only; the others are refused and listed in `refused`. */
export async function offlineContext (browser: Browser, refused: string[], viewport?: { width: number, height: number }): Promise<BrowserContext> {
  const context = await browser.newContext(viewport !== undefined ? { viewport } : {})
  await context.route('**/*', async (r) => {
    const url = new URL(r.request().url())
    if (url.hostname === '127.0.0.1') await r.continue()
    else {
      refused.push(url.href)
      await r.abort('internetdisconnected')
    }
  })
  return context
}
