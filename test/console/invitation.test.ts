// The mailed invitation link opens the console in Chromium: a new address chooses its password and display name and
// lands in the tenant signed in; an address that has an account is asked to sign in (the console's own sign-in,
// second factor included), then accepts with its session. The token leaves the address bar once used.
import { describe, expect, test } from 'bun:test'
import { Client } from '../support/client'
import { PASSWORD, signedUpUser, tenantOwner, uniqueEmail } from '../support/fixtures'
import { waitForMail } from '../support/mailbox'
import { auditPage, expectClean, guardedPage, HOSTILE, SIGNED_OUT, useConsole } from './browser'

const env = useConsole()
const NEW_PASSWORD = 'violet pelicans assemble ninety lanterns'

/** The owner invites `email`; the link of the mail that follows. */
async function invitationLink(owner: Awaited<ReturnType<typeof tenantOwner>>, email: string, role: string) {
  const since = new Date(Date.now() - 1000)
  expect((await owner.client.post('/tenant-invitations', { email, role })).status).toBe(201)
  const mail = await waitForMail(email, { subject: /You are invited/, after: since, timeoutMs: 120_000 }) // a worker still starting sends it at its next mail sweep
  const link = /(https?:\/\/\S+\?token=[A-Za-z0-9_%.-]+)/.exec(mail.text)?.[1]
  if (!link) throw new Error(`no link in the mail to ${email}: ${mail.text}`)
  expect(new URL(link).origin + new URL(link).pathname).toBe(`${env.origin}/invitations/accept`)
  return link
}

/** `signedIn`: the test says the page is signed in, after which the signed-out probes' 401s are not expected. */
async function onLink(link: string, fn: (g: Awaited<ReturnType<typeof guardedPage>>, signedIn: () => void) => Promise<void>) {
  const g = await guardedPage(env.browser, env.origin)
  const signedIn = g.expect4xx(...SIGNED_OUT)
  try {
    await g.page.goto(link)
    await fn(g, signedIn)
    expectClean(g)
  } finally {
    await g.close()
  }
}

const acceptedEmails = async (owner: { client: Client }) =>
  (await owner.client.get('/tenant-invitations?status=accepted')).json.data.map((i: { email: string }) => i.email)

describe('console: accepting an invitation', () => {
  test('a new address chooses its password and display name, and lands in the tenant signed in', async () => {
    const owner = await tenantOwner(env.api.url)
    const email = uniqueEmail('newcomer')
    const link = await invitationLink(owner, email, 'researcher')
    await onLink(link, async (g, signedIn) => {
      const { page } = g
      await page.getByRole('heading', { level: 1, name: 'Accept the invitation' }).waitFor()
      await auditPage(g, 'invitation')
      await page.getByLabel('Display name (optional)').fill(HOSTILE)
      await page.getByLabel('Password', { exact: true }).fill(NEW_PASSWORD)
      await page.getByLabel('Password again').fill(`${NEW_PASSWORD} typo`)
      await page.getByRole('button', { name: 'Accept the invitation' }).click()
      await page.getByRole('alert').filter({ hasText: 'The two passwords differ.' }).waitFor()
      await page.getByLabel('Password again').fill(NEW_PASSWORD)
      await page.getByRole('button', { name: 'Accept the invitation' }).click()
      await page.locator('#sign-out').waitFor()
      signedIn()
      expect(await page.locator('header .who').textContent()).toBe(`${email} · Test tenant (researcher)`)
      expect(page.url()).toBe(`${env.origin}/console#/api-keys`)
      expect(await page.locator('img[src="x"]').count()).toBe(0)
    })
    expect(await acceptedEmails(owner)).toContain(email)
    const client = new Client(env.api.url)
    expect((await client.post('/sessions', { email, password: NEW_PASSWORD })).status).toBe(201)
    expect((await client.get('/users/me')).json.data.user.displayName).toBe(HOSTILE)
  }, 180_000)

  test('an address with an account signs in first (the 401 said so), then accepts with its session', async () => {
    const owner = await tenantOwner(env.api.url)
    const { email } = await signedUpUser(env.api.url)
    const link = await invitationLink(owner, email, 'viewer')
    await onLink(link, async (g, signedIn) => {
      const { page } = g
      await page.getByLabel('Password', { exact: true }).fill(NEW_PASSWORD)
      await page.getByLabel('Password again').fill(NEW_PASSWORD)
      // The address has an account: the acceptance without a session is refused, and the page asks to sign in.
      const hasAccount = g.expect4xx({ status: 401, method: 'POST', path: '/v1/tenant-invitations/acceptance-records' })
      await page.getByRole('button', { name: 'Accept the invitation' }).click()
      await page.getByRole('heading', { level: 1, name: 'Sign in to accept your invitation' }).waitFor()
      hasAccount()
      await page.getByLabel('Email').fill(email)
      await page.getByLabel('Password').fill(PASSWORD)
      await page.getByRole('button', { name: 'Sign in', exact: true }).click()
      await page.locator('#invited-as', { hasText: email }).waitFor()
      signedIn()
      await auditPage(g, 'invitation-signed-in')
      await page.getByRole('button', { name: 'Accept the invitation' }).click()
      await page.locator('#sign-out').waitFor()
      expect(await page.locator('#current-tenant').textContent()).toBe('Test tenant')
      expect(page.url()).not.toContain('token=')
    })
    expect(await acceptedEmails(owner)).toContain(email)
    expect((await new Client(env.api.url).post('/sessions', { email, password: PASSWORD })).status).toBe(201) // the password stayed
  }, 180_000)
})
