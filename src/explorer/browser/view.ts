/** What every page gets: where to draw, whether it is still the page shown, the live blocks, the clock. */
import { usernameOf, type LiveBlocks } from './api.js'
import { h, link, type Child } from './dom.js'
import { distinctEnds, shortId } from './format.js'

export interface View {
  main: HTMLElement
  /** false once the reader went to another page: drop late answers */
  current: () => boolean
  live: LiveBlocks
  now: () => number
}

/** What a page leaves behind to undo when the reader leaves it (a live listener, a timer). */
export type Cleanup = (() => void) | undefined

/**
 * A key as a link to its address. Drawn as hex (`full`: the whole key), then named `@username`
 * once the registry answers (`showUsernames`, which main.ts runs on everything drawn).
 */
export const accountLink = (pub: string | undefined, full = false): Child =>
  pub === undefined || pub === '' ? h('span', { class: 'muted' }, '—') : link(`/address/${pub}`, accountName(pub, full))

/** A key's text, named later: for a link that goes elsewhere than the address (a post's author goes to the identity). */
export const accountName = (pub: string, full = false): HTMLElement =>
  h('span', { class: 'mono', title: pub, 'data-account': pub, 'data-full': full ? '' : undefined }, full ? pub : shortId(pub))

/** A button that copies `value` (the full id or key, of which a table shows a part); main.ts handles the click. */
export const copyButton = (value: string, what = 'id'): HTMLElement =>
  h('button', { type: 'button', class: 'copy', 'data-copy': value, title: `Copy the full ${what}`, 'aria-label': `Copy the full ${what}` })

/**
 * A transaction id as a link with a copy button. `shown` is what a table shows of it (the end,
 * from `txEnds`); without it, the whole id. The full id is the link's title.
 */
export const txLink = (id: string, shown?: string): Child =>
  h('span', { class: 'id' }, link(`/tx/${encodeURIComponent(id)}`, h('span', { class: 'mono', title: id, 'data-id': id }, shown ?? id)), copyButton(id))

/** The ends of the ids of a table of transactions: see `distinctEnds`. */
export const txEnds = (ids: readonly string[]): (id: string) => string => {
  const ends = distinctEnds(ids)
  return (id) => ends.get(id) ?? id
}

export const blockLink = (height: number | undefined): Child => height === undefined || height <= 0 ? h('span', { class: 'muted' }, 'pending') : link(`/block/${height}`, `#${height}`)

export const postLink = (id: string, text?: string): Child => link(`/post/${id}`, h('span', { class: 'mono', title: id }, text ?? shortId(id)))

/** A type badge; it may break after an underscore (CALL_ CONTRACT) on a narrow column instead of being cut. */
export const typeTag = (type: string): Child =>
  h('span', { class: 'tag', 'data-type': type, title: type }, type.split('_').map((part, i) => [i > 0 ? ['_', h('wbr')] : null, part]))

/** A contract by name when known, else by its shortened id. */
export const contractLink = (id: string, name?: string): Child =>
  link(`/contract/${id}`, name !== undefined && name !== '' ? [name, ' ', h('span', { class: 'mono muted', title: id }, shortId(id))] : h('span', { class: 'mono', title: id }, shortId(id)))

/**
 * Names every key drawn under `root` (`data-account`) that has a registered username: `@name`
 * instead of hex, the key kept as the title (and, for a key shown whole, on a line below).
 * Each key is asked once per page life (`usernameOf` caches), whatever the number of rows.
 */
export function showUsernames (root: ParentNode): void {
  root.querySelectorAll<HTMLElement>('[data-account]:not([data-named])').forEach((el) => {
    el.dataset.named = ''
    const pub = el.dataset.account ?? ''
    void usernameOf(pub).then((name) => {
      if (name === undefined || !el.isConnected) return
      el.textContent = `@${name}`
      el.classList.remove('mono')
      el.classList.add('username')
      el.title = `@${name} · ${pub}`
      if (el.dataset.full !== undefined) (el.closest('a') ?? el).after(h('div', { class: 'mono muted' }, pub))
    })
  })
}
