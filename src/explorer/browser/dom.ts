/**
 * A few DOM builders. Text always goes in as text nodes (never as HTML), so nothing a
 * transaction, nickname or post carries can become markup.
 */

export type Child = Node | string | number | null | undefined | false | Child[]

export function h<K extends keyof HTMLElementTagNameMap> (tag: K, attrs: Record<string, string | undefined> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== undefined) el.setAttribute(name, value)
  }
  append(el, children)
  return el
}

export function append (el: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    if (Array.isArray(child)) append(el, child)
    else el.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child)
  }
}

/** A link inside the page (`#/…`). */
export function link (route: string, ...children: Child[]): HTMLAnchorElement {
  return h('a', { href: `#${route}` }, ...children)
}

/** Replaces everything inside `el`. */
export function fill (el: Element, ...children: Child[]): void {
  el.replaceChildren()
  append(el, children)
}

export function card (title: string | undefined, ...children: Child[]): HTMLElement {
  return h('section', { class: 'card' }, title !== undefined ? h('h2', {}, title) : null, ...children)
}

/** A definition list of label/value rows; rows whose value is undefined are left out. */
export function kv (rows: Array<[string, Child | undefined]>): HTMLDListElement {
  const dl = h('dl', { class: 'kv' })
  for (const [label, value] of rows) {
    if (value === undefined) continue
    dl.append(h('dt', {}, label), h('dd', { 'data-field': label }, value))
  }
  return dl
}

export interface Column<T> {
  title: string
  cell: (row: T) => Child
  /** `num`: right-aligned figures; `wide`: hidden on a phone */
  class?: string
}

export function table<T> (columns: Array<Column<T>>, rows: readonly T[], empty = 'Nothing yet.'): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'muted' }, empty)
  return h('table', {},
    h('thead', {}, h('tr', {}, columns.map((c) => h('th', { class: c.class }, c.title)))),
    h('tbody', {}, rows.map((row) => tableRow(columns, row))))
}

function tableRow<T> (columns: Array<Column<T>>, row: T): HTMLTableRowElement {
  return h('tr', {}, columns.map((c) => h('td', { class: c.class }, c.cell(row))))
}

export function figure (label: string, value: Child, sub?: Child): HTMLElement {
  return h('div', { class: 'figure' }, h('div', { class: 'label' }, label), h('div', { class: 'value', 'data-figure': label }, value), sub !== undefined ? h('div', { class: 'sub' }, sub) : null)
}

export function notFound (what: string, detail?: string): HTMLElement {
  return h('section', { class: 'card notfound', 'data-state': 'not-found' }, h('h1', {}, 'Not found'), h('p', {}, what), detail !== undefined ? h('p', { class: 'muted' }, detail) : null)
}
