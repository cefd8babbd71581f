/**
 * The block explorer's routes (docs/explorer.md): `/` and `/explorer/{file}`, declared here and
 * answered by the explorer's own handlers (src/explorer), which know nothing of the API.
 */
import type { Context } from 'koa'
import { z } from 'zod'
import { route, type AnyRoute } from '../route.js'

/**
 * What the API needs of the explorer (src/explorer's `explorerSite()` provides it). The node's
 * assembly hands it in, so the API imports nothing from the explorer, whose browser code reads
 * the API's wire types.
 */
export interface ExplorerSite {
  /** the HTML shell */
  page: (ctx: Context) => void
  /** one of the page's files by name; NOT_FOUND for any other name */
  file: (ctx: Context, name: string) => void
}

const FileParams = z.object({ file: z.string().max(64).meta({ description: 'one of the page\'s files, e.g. `main.js`' }) })

export function explorerRoutes (site: ExplorerSite): AnyRoute[] {
  return [
    route({
      method: 'get',
      path: '/',
      tag: 'explorer',
      summary: 'Block explorer and dashboard (HTML; reads this API and follows /api/ws). In fully private mode open it as `/?token=…`',
      responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
      handler: ({ ctx }) => { site.page(ctx) }
    }),
    route({
      method: 'get',
      path: '/explorer/{file}',
      tag: 'explorer',
      summary: 'The explorer page\'s own files (its ES modules and stylesheet)',
      params: FileParams,
      responses: {
        200: { description: 'the file; Cache-Control: no-cache with an ETag (304 when unchanged)', contentType: 'application/octet-stream' },
        404: { description: 'not one of the page\'s files' }
      },
      handler: ({ params, ctx }) => { site.file(ctx, params.file) }
    })
  ]
}
