/**
 * The explorer's entry module: routes `#/…` to its page, wires the search box, and keeps one
 * WebSocket open for live blocks. Pages are functions of (view, route arguments); a page left
 * before its answers came back drops them (`view.current`).
 */
import { HttpError, LiveBlocks } from './api.js'
import { fill, h } from './dom.js'
import { addressPage, blockPage, homePage, networkPage, txPage } from './pages-chain.js'
import { contractPage, contractsPage } from './pages-contracts.js'
import { identityPage, postPage, tagPage, trendingPage } from './pages-social.js'
import { searchPage } from './search.js'
import { showUsernames, type Cleanup, type View } from './view.js'

type Page = (view: View, ...args: string[]) => Promise<Cleanup>

const PAGES: Record<string, Page> = {
  '': homePage,
  block: blockPage,
  tx: txPage,
  address: addressPage,
  identity: identityPage,
  post: postPage,
  trending: trendingPage,
  tag: tagPage,
  network: networkPage,
  contracts: contractsPage,
  contract: contractPage,
  search: searchPage
}

const main = document.getElementById('main') as HTMLElement
const liveBadge = document.getElementById('live') as HTMLElement
const live = new LiveBlocks((state) => {
  liveBadge.className = `live ${state}`
  liveBadge.textContent = state === 'on' ? 'live' : 'reconnecting…'
})

let shown = 0
let cleanup: Cleanup

async function show (): Promise<void> {
  const seq = ++shown
  cleanup?.()
  cleanup = undefined
  const [name = '', ...args] = location.hash.replace(/^#\/?/, '').split('/').map((part) => {
    try { return decodeURIComponent(part) } catch { return part }
  })
  // own members only: #/constructor or #/toString is no page
  const page = Object.hasOwn(PAGES, name) ? PAGES[name] : undefined
  const view: View = { main, current: () => seq === shown, live, now: Date.now }
  main.setAttribute('data-page', page !== undefined ? (name === '' ? 'home' : name) : 'unknown')
  main.setAttribute('aria-busy', 'true')
  try {
    if (page === undefined) fill(main, h('p', {}, 'No such page. ', h('a', { href: '#/' }, 'Home')))
    else {
      const undo = await page(view, ...args)
      if (seq === shown) cleanup = undo
      else undo?.()
    }
  } catch (err) {
    if (seq !== shown) return
    const text = err instanceof HttpError ? `The node answered ${err.status}: ${err.message}` : `Could not reach the node: ${String(err)}`
    fill(main, h('section', { class: 'card notfound', 'data-state': 'error' }, h('h1', {}, 'Something went wrong'), h('p', {}, text)))
  } finally {
    if (seq === shown) main.setAttribute('aria-busy', 'false')
  }
  if (seq === shown) window.scrollTo(0, 0)
}

document.getElementById('search')?.addEventListener('submit', (event) => {
  event.preventDefault()
  const input = document.getElementById('q') as HTMLInputElement
  const q = input.value.trim()
  if (q !== '') location.hash = `#/search/${encodeURIComponent(q)}`
})

// keys are named wherever they are drawn, on any page and in rows that arrive live
new MutationObserver(() => { showUsernames(main) }).observe(main, { childList: true, subtree: true })

// a table shows part of an id; its copy button gives the whole
main.addEventListener('click', (event) => {
  const button = (event.target as Element | null)?.closest<HTMLElement>('button[data-copy]') ?? null
  const value = button?.dataset.copy
  if (button === null || value === undefined) return
  const copied = (): void => {
    button.classList.add('copied')
    setTimeout(() => { button.classList.remove('copied') }, 1200)
  }
  // the clipboard API needs a secure context (https or localhost): elsewhere the id is offered to copy by hand
  if (!('clipboard' in navigator)) { window.prompt('Copy:', value); return }
  navigator.clipboard.writeText(value).then(copied, () => { window.prompt('Copy:', value) })
})

window.addEventListener('hashchange', () => { void show() })
live.start()
void show()
