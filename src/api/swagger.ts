/**
 * `/swagger`: Swagger UI over this node's own OpenAPI document, served from the swagger-ui-dist
 * package in node_modules (no CDN: the page works on a node with no internet). In fully private
 * mode the page is opened as `/swagger?token=…`; the token is passed on to the assets and the
 * document it loads and sent as a bearer token with every "Try it out" request.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { z } from 'zod'
import { KithError } from '../errors/index.js'
import { route, type AnyRoute } from './route.js'

/** The page's files by name: a Map, so a request for `constructor` or `__proto__` finds nothing (404), not Object's own members. */
const ASSETS = new Map([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
  ['swagger-ui-standalone-preset.js', 'text/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png']
])

const AssetParams = z.object({ file: z.string().max(64) })

function assetDir (): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))
}

/** `?token=` as it came, for the URLs and the bearer header the page uses; '' without one. */
function tokenOf (query: unknown): string {
  const token = (query as Record<string, unknown>).token
  return typeof token === 'string' ? token : ''
}

function page (token: string): string {
  const suffix = token === '' ? '' : `?token=${encodeURIComponent(token)}`
  // JSON inside a script: escape `<` so no value can close the script element
  const config = JSON.stringify({ url: `/swagger/openapi.json${suffix}`, token }).replace(/</g, '\\u003c')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>kith node API</title>
<link rel="icon" type="image/png" href="/swagger/assets/favicon-32x32.png${suffix}">
<link rel="stylesheet" href="/swagger/assets/swagger-ui.css${suffix}"></head>
<body><div id="swagger-ui"></div>
<script src="/swagger/assets/swagger-ui-bundle.js${suffix}"></script>
<script src="/swagger/assets/swagger-ui-standalone-preset.js${suffix}"></script>
<script>
const kith = ${config}
window.ui = SwaggerUIBundle({
  url: kith.url,
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
  validatorUrl: null,
  requestInterceptor: (req) => { if (kith.token) req.headers.Authorization = 'Bearer ' + kith.token; return req }
})
</script></body></html>`
}

export function swaggerRoutes (openApi: () => object): AnyRoute[] {
  const dir = assetDir()
  const cache = new Map<string, Buffer>()
  return [
    route({
      method: 'get',
      path: '/swagger/openapi.json',
      tag: 'meta',
      summary: 'This OpenAPI document',
      responses: { 200: { description: 'OpenAPI 3.1 document' } },
      handler: () => openApi()
    }),
    route({
      method: 'get',
      path: '/swagger',
      tag: 'meta',
      summary: 'Interactive API page (Swagger UI, served from local assets)',
      responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
      handler: ({ ctx }) => { ctx.type = 'text/html; charset=utf-8'; ctx.body = page(tokenOf(ctx.query)) }
    }),
    route({
      method: 'get',
      path: '/swagger/assets/{file}',
      tag: 'meta',
      summary: 'Swagger UI\'s own files (swagger-ui-dist)',
      params: AssetParams,
      responses: { 200: { description: 'the file', contentType: 'application/octet-stream' }, 404: { description: 'not one of the page\'s files' } },
      handler: ({ params, ctx }) => {
        const type = ASSETS.get(params.file)
        if (type === undefined) throw new KithError('NOT_FOUND', `no asset ${params.file}`)
        let bytes = cache.get(params.file)
        if (bytes === undefined) {
          bytes = readFileSync(join(dir, params.file))
          cache.set(params.file, bytes)
        }
        ctx.type = type
        ctx.set('Cache-Control', 'public, max-age=3600')
        ctx.body = bytes
      }
    })
  ]
}
