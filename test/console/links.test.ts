// The links the API mails (password reset, activation, registration) open the console's pages, in Chromium: the
// mail is read from the mail catcher and its own link followed, so PUBLIC_URL is the test API's localhost origin.
// A link mailed before the console served these pages (the old path) is redirected there and still works.
import { describe, expect, test } from 'bun:test'
import { Client } from '../support/client'
import { PASSWORD, signedUpUser, tenantOwner, uniqueEmail } from '../support/fixtures'
import { waitForMail } from '../support/mailbox'
import { auditPage, expectClean, guardedPage, HOSTILE, useConsole, type GuardedPage } from './browser'

const env = useConsole()
const NEW_PASSWORD = 'purple elephant juggles seventeen oranges'

/** The link of the newest mail to `to`, on this API's origin at the console's page `path`. */
async function linkIn(to: string, subject: RegExp, since: Date, path: string): Promise<string> {
  const mail = await waitForMail(to, { subject, after: since, timeoutMs: 60_000 }) // the worker may still be starting
  const link = /(https?:\/\/\S+\?token=[A-Za-z0-9_%.-]+)/.exec(mail.text)?.[1]
  if (!link) throw new Error(`no link in the mail to ${to}: ${mail.text}`)
  expect(new URL(link).origin + new URL(link).pathname).toBe(`${env.origin}${path}`)
  return link
}

async function onLink(link: string, fn: (g: GuardedPage) => Promise<void>) {
  const g = await guardedPage(env.browser, env.origin)
  try {
    await g.page.goto(link)
    await fn(g)
    expectClean(g)
  } finally {
    await g.close()
  }
}

async function choosePassword(g: GuardedPage, submit: string, password: string, again = password) {
  await g.page.getByLabel('New password').fill(password)
  await g.page.getByLabel('Repeat the password').fill(again)
  await g.page.getByRole('button', { name: submit }).click()
}

const signInStatus = async (email: string, password: string) => (await new Client(env.api.url).post('/sessions', { email, password })).status

describe('console: the mailed links', () => {
  test('password reset: the mailed link sets a new password; a second use shows the problem; the old one stops working', async () => {
    const { email } = await signedUpUser(env.api.url)
    const since = new Date(Date.now() - 1000)
    expect((await new Client(env.api.url).post('/password-resets', { email })).status).toBe(202)
    const link = await linkIn(email, /Reset your/, since, '/console/password-reset')

    await onLink(link, async (g) => {
      const { page } = g
      await page.getByRole('heading', { level: 1, name: 'Choose a new password' }).waitFor()
      expect(await page.title()).toBe('Choose a new password · Robot Control Plane')
      expect(await page.getByLabel('Display name (optional)').count()).toBe(0)
      await auditPage(g, 'link-password-reset')
      await choosePassword(g, 'Set the password', NEW_PASSWORD, `${NEW_PASSWORD} typo`)
      await page.getByRole('alert').filter({ hasText: 'The two passwords differ.' }).waitFor()
      await choosePassword(g, 'Set the password', 'short')
      await page.getByRole('alert').filter({ hasText: 'PASSWORD_POLICY_VIOLATION' }).waitFor() // the server's problem, shown
      expect(await signInStatus(email, PASSWORD)).toBe(201) // a refused password leaves the link and the account as they were
      await choosePassword(g, 'Set the password', NEW_PASSWORD)
      await page.getByRole('status').filter({ hasText: 'Your password was changed. Sign in with the new one.' }).waitFor()
      expect(page.url()).toBe(`${env.origin}/console`) // the token left the address bar
      await auditPage(g, 'link-password-reset-done')
      await page.getByRole('link', { name: 'Sign in' }).click()
      await page.getByRole('heading', { level: 2, name: 'Sign in' }).waitFor()
    })
    expect(await signInStatus(email, NEW_PASSWORD)).toBe(201)
    expect(await signInStatus(email, PASSWORD)).toBe(401)

    await onLink(link, async (g) => {
      await choosePassword(g, 'Set the password', 'yet another fine long phrase')
      await g.page.getByRole('alert').filter({ hasText: 'already used' }).waitFor()
      expect(await g.page.getByRole('status').count()).toBe(0)
    })
    expect(await signInStatus(email, NEW_PASSWORD)).toBe(201)
  }, 120_000)

  test('activation: an account an administrator created chooses its first password, from the old address of its link', async () => {
    const owner = await tenantOwner(env.api.url)
    const email = uniqueEmail('invitee')
    const since = new Date(Date.now() - 1000)
    expect((await owner.client.post('/users', { mode: 'invite', role: 'viewer', email })).status).toBe(201)
    const link = await linkIn(email, /You have been added/, since, '/console/activate')
    // As a mail sent before the console served this page named it: redirected, the token intact.
    const old = new URL(link)
    old.pathname = '/activate'
    await onLink(old.href, async (g) => {
      const { page } = g
      await page.getByRole('heading', { level: 1, name: 'Activate your account' }).waitFor()
      expect(new URL(page.url()).pathname).toBe('/console/activate')
      expect(new URL(page.url()).search).toBe(old.search)
      await auditPage(g, 'link-activate')
      await choosePassword(g, 'Activate', NEW_PASSWORD)
      await page.getByRole('status').filter({ hasText: 'Your account is active.' }).waitFor()
    })
    expect(await signInStatus(email, NEW_PASSWORD)).toBe(201)
  }, 120_000)

  test('registration: the page names the address, creates the account and opens the console signed in', async () => {
    const email = uniqueEmail('registrant')
    const since = new Date(Date.now() - 1000)
    expect((await new Client(env.api.url).post('/registration-invitations', { email })).status).toBe(201)
    const link = await linkIn(email, /Create your/, since, '/console/registration')
    await onLink(link, async (g) => {
      const { page } = g
      await page.locator('#registering', { hasText: email }).waitFor()
      await auditPage(g, 'link-registration')
      await page.getByLabel('Display name (optional)').fill(HOSTILE)
      await choosePassword(g, 'Create the account', NEW_PASSWORD)
      await page.locator('#sign-out').waitFor()
      expect(await page.locator('header .who').textContent()).toBe(`${email} · no tenant chosen`)
      await page.waitForURL(`${env.origin}/console#/tenants`) // the token left the address bar
      expect(await page.locator('img[src="x"]').count()).toBe(0)
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'My account' }).click()
      await page.locator('#my-email', { hasText: email }).waitFor()
    })
    const client = new Client(env.api.url)
    expect((await client.post('/sessions', { email, password: NEW_PASSWORD })).status).toBe(201)
    expect((await client.get('/users/me')).json.data.user.displayName).toBe(HOSTILE)
  }, 120_000)

  test('an unusable registration link says so and offers no form; a link without its token says that', async () => {
    await onLink(`${env.origin}/registration?token=not-a-real-token`, async (g) => {
      await g.page.getByRole('alert').filter({ hasText: 'This registration link is not valid any more' }).waitFor()
      expect(await g.page.locator('form').count()).toBe(0)
      await auditPage(g, 'link-registration-unusable')
    })
    await onLink(`${env.origin}/console/password-reset`, async (g) => {
      await g.page.getByRole('alert').filter({ hasText: 'This link has no token' }).waitFor()
      expect(await g.page.locator('form').count()).toBe(0)
    })
  }, 60_000)
})
