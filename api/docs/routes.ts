import { Elysia } from 'elysia'
import { join } from 'node:path'
import { CSS, HTML, JS, staticAsset } from '../http/static-asset'

const HERE = import.meta.dir
// Pinned by package.json (swagger-ui-dist), served by exact file: nothing is fetched from a CDN.
const DIST = join(HERE, '..', '..', 'node_modules', 'swagger-ui-dist')

// Scripts and styles only from this origin, no inline code. Swagger UI sets element styles through the DOM (allowed
// by style-src 'self'); its stylesheet draws icons as data: SVG images. It reads only /v1/openapi.json, and the
// "Try it out" requests go to the same origin (servers: '/').
export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

const asset = (file: string, type: string, cache: string) => staticAsset(file, type, cache, DOCS_CSP)

/** The API reference at /v1/docs: Swagger UI from our own origin, started by init.js on /v1/openapi.json. */
export const docsRoutes = () =>
  new Elysia({ prefix: '/v1/docs', detail: { hide: true } })
    .get('', asset(join(HERE, 'page.html'), HTML, 'no-store'))
    .get('/init.js', asset(join(HERE, 'init.js'), JS, 'no-cache'))
    .get('/page.css', asset(join(HERE, 'page.css'), CSS, 'no-cache'))
    .get('/swagger-ui.css', asset(join(DIST, 'swagger-ui.css'), CSS, 'public, max-age=3600'))
    .get('/swagger-ui-bundle.js', asset(join(DIST, 'swagger-ui-bundle.js'), JS, 'public, max-age=3600'))
