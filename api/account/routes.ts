import { Elysia } from 'elysia'
import { join } from 'node:path'
import type { AppDeps } from '../http/deps'

const HERE = import.meta.dir
const BROWSER_BUNDLE = join(HERE, '..', '..', 'node_modules', '@simplewebauthn', 'browser', 'dist', 'bundle', 'index.umd.min.js')

// Scripts only from this origin, no inline code; the QR code is a data: image; the page calls only /v1 here.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

const asset = (file: string, type: string, cache: string) => {
  const body = Bun.file(file)
  return () => new Response(body, {
    headers: { 'content-type': type, 'cache-control': cache, 'content-security-policy': CSP, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' },
  })
}

/** The hosted account page (outside /v1): sign in, answer the second-factor challenge, enrol TOTP, register and
 *  use passkeys, list and end sessions. Everything it does goes through the public /v1 interface. */
export const accountRoutes = (_deps: AppDeps) =>
  new Elysia({ prefix: '/account', detail: { hide: true } })
    .get('', asset(join(HERE, 'page.html'), 'text/html; charset=utf-8', 'no-store'))
    .get('/page.js', asset(join(HERE, 'page.js'), 'text/javascript; charset=utf-8', 'no-cache'))
    .get('/page.css', asset(join(HERE, 'page.css'), 'text/css; charset=utf-8', 'no-cache'))
    .get('/webauthn.js', asset(BROWSER_BUNDLE, 'text/javascript; charset=utf-8', 'public, max-age=3600'))
