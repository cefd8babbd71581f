/**
 * The block explorer and dashboard at `/` (docs/explorer.md): one HTML page whose browser code
 * reads this node's own public API (`/api/...`, `/feed/...`) and follows new blocks over
 * `/api/ws`. Every asset is served by the node (no CDN, no outside fonts); the page works on a
 * node with no internet. `SVC_DISABLE_EXPLORER=true` leaves it out; in fully private mode it is
 * opened as `/?token=…` and the token rides along on every call, as for `/swagger`.
 *
 * Server side: `site.ts` (the page, its assets, headers, as plain handlers the API mounts as
 * routes in src/api/routes/explorer.ts). Browser side: `browser/` (plain
 * TypeScript compiled by tsc to ES modules, no framework); `style.ts` is its stylesheet.
 */
export { explorerSite, type ExplorerSite } from './site.js'
