// The hosted account page in headless Chromium with a CDP virtual authenticator: the only honest test of the
// WebAuthn ceremony (the browser builds clientDataJSON, checks the RP ID against the origin, and signs).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { localhostOrigin, startApi, type TestApi } from '../support/api'
import { launchChromium } from '../support/chromium'
import { PASSWORD, tenantOwner } from '../support/fixtures'
import { awayFromStepEdge, codeAt } from './helpers'

let api: TestApi
let browser: Browser
let context: BrowserContext
let page: Page
let origin: string

beforeAll(async () => {
  const { port, origin: o } = localhostOrigin()
  origin = o
  ;[api, browser] = await Promise.all([startApi({ PORT: String(port), WEBAUTHN_RP_ID: 'localhost', WEBAUTHN_ORIGINS: origin }), launchChromium()])
  context = await browser.newContext()
  page = await context.newPage()
  const cdp = await context.newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  })
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await api?.stop()
})

const visible = (id: string) => page.locator(`#${id}`).waitFor({ state: 'visible', timeout: 10_000 })
const status = () => page.locator('#status').textContent()

async function signInWithPassword(email: string) {
  await visible('sign-in')
  await page.fill('#email', email)
  await page.fill('#password', PASSWORD)
  await page.click('#password-submit')
}

async function signOut() {
  await page.click('#sign-out')
  await visible('sign-in')
}

describe('hosted account page in Chromium', () => {
  test('the page is served outside /v1 with a strict CSP and the WebAuthn browser bundle', async () => {
    const res = await fetch(`${origin.replace('localhost', '127.0.0.1')}/account`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'")
    const bundle = await fetch(`${origin.replace('localhost', '127.0.0.1')}/account/webauthn.js`)
    expect(await bundle.text()).toContain('SimpleWebAuthnBrowser')
  })

  test('register a passkey, sign out, sign in with it; then it is the second factor of a password sign-in', async () => {
    const owner = await tenantOwner(api.url)
    await page.goto(`${origin}/account`)
    await signInWithPassword(owner.email)
    await visible('account')
    expect(await page.locator('#who').textContent()).toBe(owner.email)

    await page.fill('#passkey-name', 'Virtual authenticator')
    await page.click('#passkey-register')
    await page.locator('#passkeys li').first().waitFor({ timeout: 10_000 })
    expect(await status()).toBe('Passkey added.')
    expect(await page.locator('#passkeys li').first().textContent()).toContain('Virtual authenticator')

    await signOut()
    await page.click('#passkey-sign-in')
    await visible('account')
    expect(await status()).toBe('Signed in with a passkey.')
    expect(await page.locator('#who').textContent()).toBe(owner.email)

    // The passkey is now a second factor: a password sign-in is challenged, and the passkey answers it.
    await signOut()
    await signInWithPassword(owner.email)
    await visible('challenge')
    await page.click('#challenge-passkey')
    await visible('account')
    expect(await status()).toBe('Second factor accepted.')

    const [credential] = (await owner.client.get('/users/me/webauthn/credentials')).json.data
    expect(credential).toMatchObject({ name: 'Virtual authenticator', backedUp: expect.any(Boolean) })
    expect(credential.lastUsedAt).not.toBeNull()
    await signOut()
  }, 60_000)

  test('enrol TOTP from the QR code, answer the challenge with a code, and end another session', async () => {
    const owner = await tenantOwner(api.url)
    await page.goto(`${origin}/account`)
    await signInWithPassword(owner.email)
    await visible('account')

    await page.click('#totp-start')
    await visible('totp-enrol')
    expect(await page.locator('#totp-qr').getAttribute('src')).toStartWith('data:image/png;base64,')
    const secret = (await page.locator('#totp-secret').textContent())!
    await awayFromStepEdge()
    await page.fill('#totp-code', await codeAt(secret, 1))
    await page.click('#totp-verify')
    await visible('recovery')
    expect(await page.locator('#recovery-codes li').count()).toBe(10)
    await page.locator('#totp-state', { hasText: 'Active; 10 recovery codes left.' }).waitFor({ timeout: 10_000 })

    await signOut()
    await signInWithPassword(owner.email)
    await visible('challenge')
    await page.fill('#mfa-code', await codeAt(secret))
    await page.click('#code-submit')
    await visible('account')

    // The fixture's own API session is listed as another session; ending it from the page revokes it.
    const other = page.locator('#sessions li.session', { has: page.locator('button') })
    await other.first().waitFor({ timeout: 10_000 })
    const before = await other.count()
    expect((await owner.client.get('/users/me')).status).toBe(200)
    await other.first().locator('button').click()
    await page.waitForFunction((n) => document.querySelectorAll('#sessions li.session').length === n
      && document.querySelectorAll('#sessions li.session button').length === n - 1, before, { timeout: 10_000 })
    expect(await page.locator('#sessions li.session', { hasText: '(this session)' }).count()).toBe(1)
    expect((await owner.client.get('/users/me')).json.code).toBe('TOKEN_REVOKED')
    await signOut()
  }, 60_000)
})
