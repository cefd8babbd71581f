/** What every page gets: where to draw, whether it is still the page shown, the live blocks, the clock. */
import type { LiveBlocks } from './api.js'
import { h, link, type Child } from './dom.js'
import { shortId } from './format.js'

export interface View {
  main: HTMLElement
  /** false once the reader went to another page: drop late answers */
  current: () => boolean
  live: LiveBlocks
  now: () => number
}

/** What a page leaves behind to undo when the reader leaves it (a live listener, a timer). */
export type Cleanup = (() => void) | undefined

export const accountLink = (pub: string | undefined, text?: string): Child =>
  pub === undefined || pub === '' ? h('span', { class: 'muted' }, '—') : link(`/address/${pub}`, h('span', { class: 'mono', title: pub }, text ?? shortId(pub)))

export const txLink = (id: string, full = false): Child => link(`/tx/${encodeURIComponent(id)}`, h('span', { class: 'mono', title: id }, full ? id : shortId(id, 8)))

export const blockLink = (height: number | undefined): Child => height === undefined || height <= 0 ? h('span', { class: 'muted' }, 'pending') : link(`/block/${height}`, `#${height}`)

export const postLink = (id: string, text?: string): Child => link(`/post/${id}`, h('span', { class: 'mono', title: id }, text ?? shortId(id)))

export const typeTag = (type: string): Child => h('span', { class: 'tag', 'data-type': type }, type)

/** A contract by name when known, else by its shortened id. */
export const contractLink = (id: string, name?: string): Child =>
  link(`/contract/${id}`, name !== undefined && name !== '' ? [name, ' ', h('span', { class: 'mono muted', title: id }, shortId(id))] : h('span', { class: 'mono', title: id }, shortId(id)))
