// A real OpenID Provider (oidc-provider with its development login and consent pages) on a loopback port, and
// Debian Chromium (playwright-core) to walk a browser through it: start → login form → consent → callback.
import { createServer } from 'node:http'
import Provider from 'oidc-provider'
import type { Browser, BrowserContext } from 'playwright-core'

export const CLIENT_ID = 'rcp-test'
export const CLIENT_SECRET = 'a-client-secret-for-the-test-provider'

export interface TestProvider {
  issuer: string
  /** Claims a login asserts instead of the default (sub-<login>, email = login, email_verified true). */
  claims: Map<string, Record<string, unknown>>
  stop(): void
}

/** The provider's dev interactions take any login and password; the login names the account. */
export async function startOidcProvider(apiUrl: string): Promise<TestProvider> {
  const http = createServer()
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(http.address() as { port: number }).port}`
  const claims = new Map<string, Record<string, unknown>>()
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${apiUrl}/v1/auth/sso/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => claims.get(id) ?? { sub: `sub-${id}`, email: id, email_verified: true, name: `SSO ${id.split('@')[0]}` },
    }),
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    pkce: { required: () => true },
    cookies: { keys: ['test-cookie-key'] },
    ttl: { Interaction: 600, Session: 3600, Grant: 600, AccessToken: 600, IdToken: 600 },
  })
  http.on('request', provider.callback())
  return { issuer, claims, stop: () => http.close() }
}

export interface BrowserSignIn {
  status: number
  location: string | undefined
  body: any
  session: string | undefined
}

/** From a page already at the provider's login form: logs in as `login`, consents, and reports the callback. */
async function throughProvider(
  context: BrowserContext,
  apiUrl: string,
  go: (page: import('playwright-core').Page) => Promise<unknown>,
  login: string,
): Promise<BrowserSignIn> {
  const page = await context.newPage()
  const callback = page.waitForResponse((r) => r.url().startsWith(`${apiUrl}/v1/auth/sso/callback`))
  await go(page)
  await page.fill('input[name="login"]', login)
  await page.fill('input[name="password"]', 'anything')
  await page.click('button[type="submit"]')
  await page.waitForSelector('button[type="submit"]')
  await page.click('button[type="submit"]') // consent
  const res = await callback
  const session = (await context.cookies(apiUrl)).find((c) => c.name === 'rcp_session')
  return { status: res.status(), location: res.headers().location, body: res.status() >= 400 ? await res.json() : null, session: session?.value }
}

/** A fresh browser (carrying `cookies` for the API, as a signed-in victim's would) opens `startUrl`. */
export async function browserSignIn(browser: Browser, apiUrl: string, startUrl: string, login: string, cookies: { name: string; value: string }[] = []) {
  const context = await browser.newContext()
  try {
    if (cookies.length) await context.addCookies(cookies.map((c) => ({ ...c, url: apiUrl })))
    return await throughProvider(context, apiUrl, (page) => page.goto(startUrl), login)
  } finally {
    await context.close()
  }
}

/** The legitimate link: the signed-in page POSTs the link request (cookie + CSRF header), then follows it. */
export async function browserLink(browser: Browser, apiUrl: string, session: { cookie: string; csrf: string }, connectionId: string, login: string) {
  const context = await browser.newContext()
  try {
    await context.addCookies([{ name: 'rcp_session', value: session.cookie, url: apiUrl }])
    const res = await context.request.post(`${apiUrl}/v1/users/me/sso-identities/link-requests`, {
      headers: { 'x-csrf-token': session.csrf, 'content-type': 'application/json' },
      data: { connectionId },
    })
    if (res.status() !== 201) return { status: res.status(), location: undefined, body: await res.json(), session: undefined } satisfies BrowserSignIn
    const { authorizationUrl } = (await res.json()).data
    return await throughProvider(context, apiUrl, (page) => page.goto(authorizationUrl), login)
  } finally {
    await context.close()
  }
}
