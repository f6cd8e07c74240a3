import { Elysia } from 'elysia'
import { join } from 'node:path'
import { CSS, HTML, JS, staticAsset } from '../http/static-asset'

export const INVITATION_PATH = '/invitations/accept'

// Built by scripts/build-console.ts (run by ./scripts/up, ./scripts/test and the Dockerfile) from ./ui; not committed.
const DIST = join(import.meta.dir, 'dist')

// Only this origin's hashed script and stylesheet, no inline code or style, no frames, and calls to /v1 here alone
// (model files too: they are uploaded through the API, never to the storage endpoint). data: images are the QR code
// of an authenticator app's enrolment, which the API answers as a data: URL.
export const CONSOLE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

const HASHED = /^[A-Za-z0-9_-]+\.(js|css)$/

const notBuilt = () => new Response('The console is not built: run scripts/build-console.ts (./scripts/up and ./scripts/test do).', {
  status: 503, headers: { 'content-type': 'text/plain; charset=utf-8', 'content-security-policy': CONSOLE_CSP },
})

/** The console: one page (its views follow the location hash) and its two assets, whose names change with their
 *  content, so they are cached for good while the page itself is never cached. */
export const consoleRoutes = () => {
  const index = staticAsset(join(DIST, 'index.html'), HTML, 'no-store', CONSOLE_CSP)
  const page = async () => ((await Bun.file(join(DIST, 'index.html')).exists()) ? index() : notBuilt())
  return new Elysia({ detail: { hide: true } })
    // The mailed invitation link (api/onboarding) opens the console, which accepts it (ui/invitation.tsx).
    .get(INVITATION_PATH, page)
    .use(consolePage(page))
}

function consolePage(page: () => Promise<Response>) {
  // One handler per asset, so each is compressed once (a hashed name never changes content).
  const assets = new Map<string, ReturnType<typeof staticAsset>>()
  return new Elysia({ prefix: '/console', detail: { hide: true } })
    .get('', page)
    .get('/assets/:file', async ({ params: { file }, request }) => {
      const path = join(DIST, 'assets', file)
      if (!HASHED.test(file) || !(await Bun.file(path).exists())) return new Response('Not found', { status: 404 })
      let asset = assets.get(file)
      if (!asset) assets.set(file, asset = staticAsset(path, file.endsWith('.js') ? JS : CSS, 'public, max-age=31536000, immutable', CONSOLE_CSP))
      return asset({ request })
    })
}
