import { Elysia } from 'elysia'
import { join } from 'node:path'
import type { AppDeps } from '../compose'
import { CSS, HTML, JS, staticAsset } from '../http/static-asset'

const HERE = import.meta.dir
const BROWSER_BUNDLE = join(HERE, '..', '..', 'node_modules', '@simplewebauthn', 'browser', 'dist', 'bundle', 'index.umd.min.js')

// Scripts only from this origin, no inline code; the QR code is a data: image; the page calls only /v1 here.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

const asset = (file: string, type: string, cache: string) => staticAsset(file, type, cache, CSP)

/** The paths of the links the API mails (password-resets/grants.ts, onboarding/service.ts): one page serves them. The
 *  tenant invitation's link opens the console (api/console/routes.ts). */
export const LINK_PATHS = ['/password-reset', '/activate', '/registration'] as const

/** The hosted account page (outside /v1): sign in, answer the second-factor challenge, enrol TOTP, register and
 *  use passkeys, list and end sessions. Everything it does goes through the public /v1 interface. Also the landing
 *  page of the mailed links (links.html): choose a password from a reset or activation link, finish a registration. */
export const accountRoutes = (_deps: AppDeps) => {
  const links = asset(join(HERE, 'links.html'), HTML, 'no-store')
  const app = new Elysia({ detail: { hide: true } })
    .use(new Elysia({ prefix: '/account', detail: { hide: true } })
      .get('', asset(join(HERE, 'page.html'), HTML, 'no-store'))
      .get('/page.js', asset(join(HERE, 'page.js'), JS, 'no-cache'))
      .get('/page.css', asset(join(HERE, 'page.css'), CSS, 'no-cache'))
      .get('/links.js', asset(join(HERE, 'links.js'), JS, 'no-cache'))
      .get('/webauthn.js', asset(BROWSER_BUNDLE, JS, 'public, max-age=3600')))
  for (const path of LINK_PATHS) app.get(path, links)
  return app
}
