// The console's sign-in (password, then the second factor when the account has one) and its tenants page (create,
// switch), in Chromium against the real platform. Hostile tenant names render as text.
import { describe, expect, test } from 'bun:test'
import { Client } from '../support/client'
import { PASSWORD, signedUpUser, tenantOwner, uniqueEmail, uniqueSlug } from '../support/fixtures'
import { waitForMail } from '../support/mailbox'
import { codeAt, enrolTotp } from '../mfa/helpers'
import { auditPage, expectClean, guardedPage, HOSTILE, openPage, signInAs, SIGNED_OUT, useConsole } from './browser'

const env = useConsole()

describe('console: sign in and tenants', () => {
  test('a wrong password shows the problem the server answered; the right one opens the console', async () => {
    const owner = await tenantOwner(env.api.url)
    const g = await guardedPage(env.browser, env.origin)
    const signedOut = g.expect4xx(...SIGNED_OUT, { status: 401, method: 'POST', path: '/v1/sessions' })
    try {
      await g.page.goto(`${env.origin}/console`)
      await g.page.getByRole('heading', { name: 'Sign in' }).waitFor()
      await auditPage(g, 'sign-in')
      await g.page.getByLabel('Email').fill(owner.email)
      await g.page.getByLabel('Password').fill('not the password at all')
      await g.page.getByRole('button', { name: 'Sign in', exact: true }).click()
      const alert = g.page.getByRole('alert')
      await alert.waitFor()
      const answer = await new Client(env.api.url).post('/sessions', { email: owner.email, password: 'not the password at all' })
      expect(await alert.textContent()).toContain(answer.json.message)
      expect(await alert.textContent()).toContain(answer.json.code)
      signedOut()

      await signInAs(g, env.origin, owner.email)
      expect(await g.page.locator('#current-tenant').textContent()).toBe('Test tenant')
      expectClean(g)
    } finally {
      await g.close()
    }
  })

  test('a load asks for the session and the account at once, not one after the other', async () => {
    const owner = await tenantOwner(env.api.url)
    const g = await guardedPage(env.browser, env.origin)
    try {
      await signInAs(g, env.origin, owner.email)
      // The session's answer is held until the account is asked for (5 s at most): one after the other, it never is.
      let accountAsked = false
      let askedWhileHeld: boolean | undefined
      g.page.on('request', (r) => {
        if (new URL(r.url()).pathname === '/v1/users/me') accountAsked = true
      })
      await g.page.route(`${env.origin}/v1/sessions/current`, async (route) => {
        for (const until = Date.now() + 5000; !accountAsked && Date.now() < until; ) await Bun.sleep(20)
        askedWhileHeld ??= accountAsked
        await route.continue()
      })
      await g.page.reload()
      await g.page.locator('#sign-out').waitFor()
      expect(askedWhileHeld).toBe(true)
      expectClean(g)
    } finally {
      await g.close()
    }
  })

  test('the session and the account are asked for while the script still loads, each once', async () => {
    const owner = await tenantOwner(env.api.url)
    const g = await guardedPage(env.browser, env.origin)
    try {
      await signInAs(g, env.origin, owner.email)
      // The script is held until the account is asked for (5 s at most): asked only by the script, it never is.
      const asked: string[] = []
      g.page.on('request', (r) => {
        if (r.url().startsWith(`${env.origin}/v1/`)) asked.push(new URL(r.url()).pathname)
      })
      let askedWhileScriptHeld: boolean | undefined
      await g.page.route(`${env.origin}/console/assets/*.js`, async (route) => {
        for (const until = Date.now() + 5000; !asked.includes('/v1/users/me') && Date.now() < until; ) await Bun.sleep(20)
        askedWhileScriptHeld ??= asked.includes('/v1/users/me')
        await route.continue()
      })
      await g.page.reload()
      await g.page.locator('#sign-out').waitFor()
      expect(askedWhileScriptHeld).toBe(true)
      // The script's own requests took the preloaded answers: neither went out twice.
      expect(asked.filter((p) => p === '/v1/users/me' || p === '/v1/sessions/current').sort()).toEqual(['/v1/sessions/current', '/v1/users/me'])
      expectClean(g)
    } finally {
      await g.close()
    }
  })

  test('an account with TOTP answers the second factor before the console opens', async () => {
    const owner = await tenantOwner(env.api.url)
    const { secret } = await enrolTotp(owner.client)
    const g = await guardedPage(env.browser, env.origin)
    const signedOut = g.expect4xx(...SIGNED_OUT)
    try {
      await g.page.goto(`${env.origin}/console`)
      await g.page.getByLabel('Email').fill(owner.email)
      await g.page.getByLabel('Password').fill(PASSWORD)
      await g.page.getByRole('button', { name: 'Sign in', exact: true }).click()
      await g.page.getByRole('heading', { name: 'Second factor' }).waitFor()
      await auditPage(g, 'second-factor')
      await g.page.getByLabel(/Code from your authenticator app/).fill(await codeAt(secret))
      await g.page.getByRole('button', { name: 'Confirm' }).click()
      await g.page.locator('#sign-out').waitFor()
      signedOut()
      expectClean(g)
    } finally {
      await g.close()
    }
  })

  test('a user without a tenant creates one (a hostile name renders as text), then switches between tenants', async () => {
    const user = await signedUpUser(env.api.url)
    const g = await guardedPage(env.browser, env.origin)
    try {
      await signInAs(g, env.origin, user.email)
      await g.page.getByRole('heading', { level: 1, name: 'Tenants' }).waitFor()
      await g.page.getByText('You belong to no tenant yet').waitFor()
      await auditPage(g, 'tenants-empty')
      // Without a membership the profile, password and session routes would refuse: the page says so instead of
      // offering them. Second factors and my data (its export, deleting the account) need no membership, and are offered.
      await openPage(g, 'My account')
      await g.page.getByText('Create or join a tenant to change your profile').waitFor()
      await g.page.locator('#totp-state').waitFor()
      await g.page.getByText('No passkey yet.').waitFor()
      expect(await g.page.getByRole('button').allTextContents()).toEqual([
        'Sign out',
        'Set up an authenticator app',
        'Add a passkey',
        'Download my data',
        'Delete my account',
      ])
      await openPage(g, 'Tenants')

      await g.page.getByLabel('Name').fill(HOSTILE)
      await g.page.getByLabel(/^Slug/).fill(uniqueSlug())
      await g.page.getByRole('button', { name: 'Create tenant' }).click()
      await g.page.locator('#current-tenant', { hasText: HOSTILE }).waitFor()
      expect(await g.page.locator('img[src="x"]').count()).toBe(0)

      await g.page.getByLabel('Name').fill('Second lab')
      await g.page.getByLabel(/^Slug/).fill(uniqueSlug())
      await g.page.getByRole('button', { name: 'Create tenant' }).click()
      await g.page.locator('#current-tenant', { hasText: 'Second lab' }).waitFor()
      await g.page.getByRole('button', { name: `Switch to ${HOSTILE}` }).click()
      await g.page.locator('#current-tenant', { hasText: HOSTILE }).waitFor()
      const me = await user.client.get('/users/me')
      expect(me.json.data.memberships.map((m: { tenantName: string }) => m.tenantName).sort()).toEqual([HOSTILE, 'Second lab'].sort())
      await auditPage(g, 'tenants')

      g.expect4xx(...SIGNED_OUT) // the signed-out console probes again
      await g.page.getByRole('button', { name: 'Sign out' }).click()
      await g.page.getByRole('heading', { name: 'Sign in' }).waitFor()
      expectClean(g)
    } finally {
      await g.close()
    }
  })

  test('the pages a role may use are offered after sign-in, and each opens', async () => {
    const owner = await tenantOwner(env.api.url)
    const g = await guardedPage(env.browser, env.origin)
    try {
      await signInAs(g, env.origin, owner.email)
      const titles = [
        'Tenants',
        'Members',
        'Projects',
        'API keys',
        'Models',
        'Packages',
        'Storage',
        'Security',
        'Webhooks',
        'Audit log',
        'Usage',
        'Subscription',
        'Invoices',
        'Legal holds',
        'Offboarding',
        'My account',
        'Notifications',
      ]
      g.expect4xx({ status: 404, method: 'GET', path: '/v1/tenants/current/offboarding' }) // none open: the tenant is shown active
      expect(await g.page.getByRole('navigation', { name: 'Console' }).getByRole('link').allTextContents()).toEqual(titles)
      for (const title of titles) await openPage(g, title)
      expectClean(g)
    } finally {
      await g.close()
    }
  })

  test('create an account from the sign-in page, and ask for a reset link', async () => {
    const email = uniqueEmail('console')
    const g = await guardedPage(env.browser, env.origin)
    g.expect4xx(...SIGNED_OUT) // signed out, registered, signed out again
    const { page } = g
    try {
      await page.goto(`${env.origin}/console`)
      await page.getByRole('button', { name: 'Create an account' }).click()
      await page.getByRole('heading', { name: 'Create an account' }).waitFor()
      await auditPage(g, 'register')
      await page.getByLabel('Email').fill(email)
      await page.getByLabel('Password').fill(PASSWORD)
      await page.getByRole('button', { name: 'Create account' }).click()
      await page.getByText('You belong to no tenant yet').waitFor()
      expect((await new Client(env.api.url).post('/sessions', { email, password: PASSWORD })).status).toBe(201)
      await page.getByRole('button', { name: 'Sign out' }).click()

      const since = new Date()
      await page.getByRole('button', { name: 'Forgot your password?' }).click()
      await page.getByLabel('Email').fill(email)
      await page.getByRole('button', { name: 'Send me a link' }).click()
      await page
        .getByRole('status')
        .filter({ hasText: `If ${email} has an account` })
        .waitFor()
      await auditPage(g, 'forgot-password')
      const mail = await waitForMail(email, { after: since, timeoutMs: 30_000 })
      expect(mail.text).toContain(`${env.origin}/console/password-reset?token=`)
    } finally {
      await g.close()
    }
  }, 60_000)
})
