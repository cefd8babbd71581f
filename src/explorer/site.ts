/**
 * The explorer's pages as plain handlers: `page` answers `/` (the HTML shell) and `file` answers
 * `/explorer/{file}` (its ES modules and stylesheet). The API declares the routes and mounts
 * them (src/api/routes/explorer.ts); nothing here imports from src/api. The modules are the tsc
 * output of `browser/`, found next to this file at run time; they are read once, at start-up,
 * so a request never touches the disk.
 */
import { createHash, randomBytes } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Context } from 'koa'
import { KithError } from '../errors/index.js'
import { STYLESHEET } from './style.js'

interface Asset {
  bytes: Buffer
  type: string
  etag: string
}

/** The compiled browser modules (`browser/*.js`) and the stylesheet, by file name. */
function loadAssets (): Map<string, Asset> {
  const assets = new Map<string, Asset>()
  const add = (name: string, bytes: Buffer, type: string): void => {
    assets.set(name, { bytes, type, etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 22)}"` })
  }
  const dir = join(dirname(fileURLToPath(import.meta.url)), 'browser')
  for (const name of readdirSync(dir)) {
    if (name.endsWith('.js')) add(name, readFileSync(join(dir, name)), 'text/javascript; charset=utf-8')
  }
  add('style.css', Buffer.from(STYLESHEET, 'utf8'), 'text/css; charset=utf-8')
  return assets
}

/** `?token=` as it came; '' without one. */
function tokenOf (ctx: Context): string {
  const token = ctx.query.token
  return typeof token === 'string' ? token : ''
}

/**
 * The Content-Security-Policy of the page: nothing but this node. `connect-src` names the node's
 * own ws: and wss: origins (not every browser counts them as 'self'); the Host header is used
 * only when it is a plain host[:port].
 */
function contentSecurityPolicy (ctx: Context, nonce: string): string {
  const host = ctx.get('host')
  const sockets = /^[A-Za-z0-9.\-:[\]]{1,255}$/.test(host) ? ` ws://${host} wss://${host}` : ''
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}'`,
    "style-src 'self'",
    "img-src 'self' data:",
    "media-src 'self'",
    `connect-src 'self'${sockets}`,
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'"
  ].join('; ')
}

/**
 * The HTML shell. With a token (fully private mode) every URL the page loads carries it: the
 * stylesheet and entry module directly, and the modules the entry imports through an import map
 * (a relative `import './api.js'` would otherwise arrive without it).
 */
function page (token: string, modules: string[], nonce: string): string {
  const suffix = token === '' ? '' : `?token=${encodeURIComponent(token)}`
  const attr = (url: string): string => url.replace(/&/g, '&amp;').replace(/"/g, '&quot;')
  const importMap = token === ''
    ? ''
    : `<script type="importmap" nonce="${nonce}">${JSON.stringify({ imports: Object.fromEntries(modules.map((m) => [`/explorer/${m}`, `/explorer/${m}${suffix}`])) }).replace(/</g, '\\u003c')}</script>\n`
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>kith explorer</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${attr(`/explorer/style.css${suffix}`)}">
${importMap}<script type="module" src="${attr(`/explorer/main.js${suffix}`)}"></script>
</head><body>
<header class="top"><div class="bar">
<a class="brand" href="#/">kith <span>explorer</span></a>
<form id="search" class="search" role="search"><input id="q" name="q" type="search" autocomplete="off" spellcheck="false" placeholder="Tx id, address, pubkey, username, contract or block height" aria-label="Search"><button type="submit">Search</button></form>
</div><nav class="nav"><a href="#/">Home</a><a href="#/contracts">Contracts</a><a href="#/trending">Trending</a><a href="#/network">Validators &amp; peers</a><span id="live" class="live" title="live updates">connecting…</span></nav></header>
<main id="main"><noscript>This page needs JavaScript; the node's API is at /swagger.</noscript><p class="muted">Loading…</p></main>
<footer class="foot">Served by this node; every figure comes from its public API. <a href="/swagger${attr(suffix)}">API</a></footer>
</body></html>`
}

/** The explorer's two handlers, each answering on a Koa context. */
export interface ExplorerSite {
  /** The HTML shell, with its CSP (a fresh script nonce each time) and `no-store`. */
  page: (ctx: Context) => void
  /** One of the page's files by name (ETag, `no-cache`, 304 when unchanged); NOT_FOUND for any other name. */
  file: (ctx: Context, name: string) => void
}

export function explorerSite (): ExplorerSite {
  const assets = loadAssets()
  const modules = [...assets.keys()].filter((name) => name.endsWith('.js')).sort()
  return {
    page: (ctx) => {
      const nonce = randomBytes(16).toString('base64')
      ctx.set('Content-Security-Policy', contentSecurityPolicy(ctx, nonce))
      ctx.set('Cache-Control', 'no-store')
      ctx.set('X-Content-Type-Options', 'nosniff')
      ctx.set('Referrer-Policy', 'no-referrer')
      ctx.type = 'text/html; charset=utf-8'
      ctx.body = page(tokenOf(ctx), modules, nonce)
    },
    file: (ctx, name) => {
      const asset = assets.get(name)
      if (asset === undefined) throw new KithError('NOT_FOUND', `no explorer file ${name}`)
      ctx.status = 200
      ctx.set('ETag', asset.etag)
      // not versioned by name, so revalidated each time: a node upgrade is seen at once
      ctx.set('Cache-Control', 'no-cache')
      ctx.set('X-Content-Type-Options', 'nosniff')
      if (ctx.fresh) {
        ctx.status = 304
        return
      }
      ctx.type = asset.type
      ctx.body = asset.bytes
    }
  }
}
