// The landing page of the links the API mails (password reset, activation, registration; the tenant invitation's
// link opens the console), served outside /v1 and driven in headless Chromium: the mail's own link is opened, so
// PUBLIC_URL is the test API's own localhost address.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { localhostOrigin, startApi, type TestApi } from '../support/api'
import { launchChromium } from '../support/chromium'
import { Client } from '../support/client'
import { PASSWORD, signedUpUser, tenantOwner, uniqueEmail } from '../support/fixtures'
import { waitForMail } from '../support/mailbox'

const NEW_PASSWORD = 'purple elephant juggles seventeen oranges'
const PATHS = ['/password-reset', '/activate', '/registration'] // the invitation link opens the console (test/console/invitation.test.ts)

let api: TestApi
let browser: Browser
let origin: string

beforeAll(async () => {
  const { port, origin: o } = localhostOrigin()
  origin = o
  ;[api, browser] = await Promise.all([startApi({ PORT: String(port), PUBLIC_URL: origin }), launchChromium()])
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await api?.stop()
})

const anon = () => new Client(api.url)

/** The link of the newest mail to `to` (30 s: the worker may still be bundling when the first test runs). */
async function linkIn(to: string, subject: RegExp, since: Date): Promise<string> {
  const mail = await waitForMail(to, { subject, after: since, timeoutMs: 30_000 })
  const link = /(https?:\/\/\S+\?token=[A-Za-z0-9_%.-]+)/.exec(mail.text)?.[1]
  if (!link) throw new Error(`no link in the mail to ${to}: ${mail.text}`)
  expect(link.startsWith(`${origin}/`)).toBe(true)
  return link
}

async function withPage<T>(fn: (page: Page) => Promise<T>): Promise<T> {
  const context = await browser.newContext()
  try {
    return await fn(await context.newPage())
  } finally {
    await context.close()
  }
}

async function choosePassword(page: Page, password: string, displayName?: string) {
  await page.locator('#link-form').waitFor({ state: 'visible', timeout: 10_000 })
  if (displayName !== undefined) await page.fill('#display-name', displayName)
  await page.fill('#new-password', password)
  await page.fill('#confirm-password', password)
  await page.click('#link-submit')
}

const succeeded = (page: Page) => page.locator('#done').waitFor({ state: 'visible', timeout: 10_000 })
const signInStatus = async (email: string, password: string) => (await anon().post('/sessions', { email, password })).status

describe('mailed-link landing page', () => {
  test('each link path answers 200 HTML with the strict CSP; the script is served too', async () => {
    for (const path of PATHS) {
      const res = await fetch(`${api.url}${path}?token=abc`)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toContain('text/html')
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'")
      expect(res.headers.get('referrer-policy')).toBe('no-referrer')
      expect(res.headers.get('cache-control')).toBe('no-store')
      expect(await res.text()).toContain('/account/links.js')
    }
    const script = await fetch(`${api.url}/account/links.js`)
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toContain('text/javascript')
  })

  test('password reset: the mailed link sets a new password; the old one stops working', async () => {
    const { email } = await signedUpUser(api.url)
    const since = new Date(Date.now() - 1000)
    expect((await anon().post('/password-resets', { email })).status).toBe(202)
    const link = await linkIn(email, /Reset your/, since)
    expect(new URL(link).pathname).toBe('/password-reset')

    await withPage(async (page) => {
      await page.goto(link)
      expect(await page.locator('#heading').textContent()).toBe('Choose a new password')
      expect(await page.locator('#display-name-label').isHidden()).toBe(true)
      await choosePassword(page, NEW_PASSWORD)
      await succeeded(page)
      expect(await page.locator('#status').textContent()).toContain('Your password was changed')
      expect(await page.locator('#done a').getAttribute('href')).toBe('/account')
    })
    expect(await signInStatus(email, NEW_PASSWORD)).toBe(201)
    expect(await signInStatus(email, PASSWORD)).toBe(401)

    // The link is single use: a second visit shows the API's problem message.
    await withPage(async (page) => {
      await page.goto(link)
      await choosePassword(page, 'yet another fine long phrase')
      await page.locator('#status', { hasText: 'already used' }).waitFor({ timeout: 10_000 })
      expect(await page.locator('#done').isHidden()).toBe(true)
    })
    expect(await signInStatus(email, NEW_PASSWORD)).toBe(201)
  }, 60_000)

  test('a rejected password shows the problem message and leaves the link usable', async () => {
    const { email } = await signedUpUser(api.url)
    const since = new Date(Date.now() - 1000)
    await anon().post('/password-resets', { email })
    const link = await linkIn(email, /Reset your/, since)
    await withPage(async (page) => {
      await page.goto(link)
      await choosePassword(page, 'short')
      await page.locator('#status').filter({ hasText: /\S/ }).waitFor({ timeout: 10_000 })
      expect(await page.locator('#done').isHidden()).toBe(true)
      await page.fill('#new-password', NEW_PASSWORD)
      await page.fill('#confirm-password', 'something else entirely')
      await page.click('#link-submit')
      await page.locator('#status', { hasText: 'The two passwords differ.' }).waitFor({ timeout: 10_000 })
      await page.fill('#confirm-password', NEW_PASSWORD)
      await page.click('#link-submit')
      await succeeded(page)
    })
    expect(await signInStatus(email, NEW_PASSWORD)).toBe(201)
  }, 60_000)

  test('activation: an invited account chooses its first password from the link', async () => {
    const owner = await tenantOwner(api.url)
    const email = uniqueEmail('invitee')
    const since = new Date(Date.now() - 1000)
    const res = await owner.client.post('/users', { mode: 'invite', role: 'viewer', email })
    expect(res.status).toBe(201)
    const link = await linkIn(email, /You have been added/, since)
    expect(new URL(link).pathname).toBe('/activate')
    await withPage(async (page) => {
      await page.goto(link)
      expect(await page.locator('#heading').textContent()).toBe('Activate your account')
      await choosePassword(page, NEW_PASSWORD)
      await succeeded(page)
    })
    expect(await signInStatus(email, NEW_PASSWORD)).toBe(201)
  }, 60_000)

  test('registration: the page shows the address, creates the account and signs it in', async () => {
    const email = uniqueEmail('registrant')
    const since = new Date(Date.now() - 1000)
    expect((await anon().post('/registration-invitations', { email })).status).toBe(201)
    const link = await linkIn(email, /Create your/, since)
    expect(new URL(link).pathname).toBe('/registration')
    await withPage(async (page) => {
      await page.goto(link)
      await page.locator('#intro', { hasText: email }).waitFor({ timeout: 10_000 })
      await choosePassword(page, NEW_PASSWORD, 'Grace')
      await succeeded(page)
      expect(await page.locator('#status').textContent()).toContain('signed in')
      // The session carries over to the account page of the same tab.
      await page.click('#done a')
      await page.locator('#account').waitFor({ state: 'visible', timeout: 10_000 })
      expect(await page.locator('#who').textContent()).toBe(email)
    })
    expect(await signInStatus(email, NEW_PASSWORD)).toBe(201)
  }, 60_000)

  test('an unusable registration link says so and shows no form', async () => {
    await withPage(async (page) => {
      await page.goto(`${origin}/registration?token=not-a-real-token`)
      await page.locator('#status', { hasText: 'not valid' }).waitFor({ timeout: 10_000 })
      expect(await page.locator('#link-form').isHidden()).toBe(true)
    })
  }, 30_000)
})
