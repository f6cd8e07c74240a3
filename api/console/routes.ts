import { Elysia } from 'elysia'
import { join } from 'node:path'
import { CSS, HTML, JS, staticAsset } from '../http/static-asset'
import { DEVICE_PAGE_PATH } from '../device-authorizations/model'

export const INVITATION_PATH = '/invitations/accept'

/** The console's pages of the links the API mails (password-resets/grants.ts, onboarding/service.ts), each keyed by
 *  the path those mails named before the console served them: a mail already sent is redirected (LEGACY_PATHS). */
export const LINK_PAGES = {
  '/password-reset': '/console/password-reset',
  '/activate': '/console/activate',
  '/registration': '/console/registration',
} as const

// Built by scripts/build-console.ts (run by ./scripts/up, ./scripts/test and the Dockerfile) from ./ui; not committed.
const DIST = join(import.meta.dir, 'dist')

// Only this origin's hashed script and stylesheet, no inline code or style, no frames, and calls to /v1 here alone
// (model files too: they are uploaded through the API, never to the storage endpoint). data: images are the QR code
// of an authenticator app's enrolment, which the API answers as a data: URL.
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

const HASHED = /^[A-Za-z0-9_-]+\.(js|css)$/

const notBuilt = () =>
  new Response('The console is not built: run scripts/build-console.ts (./scripts/up and ./scripts/test do).', {
    status: 503,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'content-security-policy': CONSOLE_CSP },
  })

/** The query of the address as the browser sent it (with its '?'), so a redirect hands on the token byte for byte. */
const rawQuery = (url: string) => {
  const at = url.indexOf('?')
  return at < 0 ? '' : url.slice(at).replace(/#.*$/, '')
}

/** Answers the old addresses (the hosted account page and its mailed links, api/account until the console served
 *  them) with a redirect to the console's page: links in mail sent before still work. */
const moved =
  (to: (query: string) => string) =>
  ({ request }: { request: Request }) =>
    new Response(null, { status: 302, headers: { location: to(rawQuery(request.url)), 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' } })

/** The console: one page (its views follow the location hash, or the path of a mailed link) and its two assets,
 *  whose names change with their content, so they are cached for good while the page itself is never cached. */
export const consoleRoutes = () => {
  const index = staticAsset(join(DIST, 'index.html'), HTML, 'no-store', CONSOLE_CSP)
  const page = async () => ((await Bun.file(join(DIST, 'index.html')).exists()) ? index() : notBuilt())
  const app = new Elysia({ detail: { hide: true } })
    // The mailed invitation link (api/onboarding) opens the console, which accepts it (ui/invitation.tsx).
    .get(INVITATION_PATH, page)
    .use(consolePage(page))
    .get(
      '/account',
      moved((query) => `/console${query}#/account`),
    )
  for (const [legacy, path] of Object.entries(LINK_PAGES))
    app.get(
      legacy,
      moved((query) => `${path}${query}`),
    )
  return app
}

function consolePage(page: () => Promise<Response>) {
  // One handler per asset, so each is compressed once (a hashed name never changes content).
  const assets = new Map<string, ReturnType<typeof staticAsset>>()
  const app = new Elysia({ prefix: '/console', detail: { hide: true } }).get('', page).get('/assets/:file', async ({ params: { file }, request }) => {
    const path = join(DIST, 'assets', file)
    if (!HASHED.test(file) || !(await Bun.file(path).exists())) return new Response('Not found', { status: 404 })
    let asset = assets.get(file)
    if (!asset) assets.set(file, (asset = staticAsset(path, file.endsWith('.js') ? JS : CSS, 'public, max-age=31536000, immutable', CONSOLE_CSP)))
    return asset({ request })
  })
  // The mailed links' pages (ui/links.tsx reads the path and the token).
  for (const path of Object.values(LINK_PAGES)) app.get(path.slice('/console'.length), page)
  // The device sign-in page (ui/device.tsx reads user_code), which POST /v1/device/authorizations names.
  app.get(DEVICE_PAGE_PATH.slice('/console'.length), page)
  return app
}
