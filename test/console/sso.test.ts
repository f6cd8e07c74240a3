// Signing in through single sign-on from the console's login options, in Chromium against a real OpenID Provider
// (oidc-provider): the address's domain, proven by the tenant's TXT record, offers the tenant's connection; the
// provider's login comes back to the console signed in, and the page (which got only the cookie from the redirect)
// asks the API for its CSRF token, so its changes go through. The provider's origin is the one other origin the
// browser may visit, and only by following the sign-in link.
import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { useDns } from '../support/dns'
import { signedUpUser, tenantOwner, uniqueSlug } from '../support/fixtures'
import { CLIENT_ID, CLIENT_SECRET, startOidcProvider } from '../support/oidc'
import { eventually } from '../support/temporal'
import { auditPage, expectClean, guardedPage, HOSTILE, openPage, signInAs, SIGNED_OUT, useConsole } from './browser'

/** The provider's own login and consent pages (oidc-provider's development interactions), then back in the console. */
async function signInAtProvider(page: Page, issuer: string, email: string) {
  await page.waitForURL((u) => u.origin === issuer)
  await page.fill('input[name="login"]', email)
  await page.fill('input[name="password"]', 'anything')
  await page.click('button[type="submit"]')
  await page.waitForSelector('button[type="submit"]')
  await page.click('button[type="submit"]') // consent
  await page.locator('#sign-out').waitFor({ timeout: 15_000 })
}

const dns = useDns()
const env = useConsole(() => ({ DOMAIN_VERIFICATION_DNS_SERVERS: dns.server }))

describe('console: single sign-on', () => {
  test("the domain's connection is offered, the provider's sign-in lands in the console with a working session", async () => {
    const idp = await startOidcProvider(env.origin) // the redirect URI is PUBLIC_URL's, the console's origin
    const g = await guardedPage(env.browser, env.origin, [], [idp.issuer])
    try {
      const owner = await tenantOwner(env.api.url)
      const domain = `sso-${crypto.randomUUID().slice(0, 8)}.example.test`
      const claim = (await owner.client.post('/tenants/current/domains', { domain })).json.data
      dns.txt.set(claim.verificationRecord.name, [claim.verificationRecord.value])
      expect((await owner.client.post(`/tenants/current/domains/${claim.id}/verifications`)).status).toBe(201)
      const connection = await owner.client.post('/tenants/current/sso-connections', {
        name: HOSTILE,
        issuer: idp.issuer,
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        emailDomains: [domain],
        defaultRole: 'researcher',
      })
      expect(connection.status).toBe(201)
      const email = `engineer@${domain}`

      const { page } = g
      const signedIn = g.expect4xx(...SIGNED_OUT)
      await page.goto(`${env.origin}/console`)
      expect(await page.getByRole('link', { name: /^Sign in with/ }).count()).toBe(0) // no address, no connection
      await page.getByLabel('Email').fill(email)
      await page.getByLabel('Email').press('Tab')
      const offered = page.getByRole('group', { name: 'Single sign-on' }).getByRole('link', { name: `Sign in with ${HOSTILE}` })
      await offered.waitFor()
      expect(await page.locator('img[src="x"]').count()).toBe(0)
      await auditPage(g, 'sign-in-sso')

      await offered.click()
      await signInAtProvider(page, idp.issuer, email)
      expect(new URL(page.url()).pathname).toBe('/console')
      expect(await page.locator('header .who').textContent()).toBe(`${email} · Test tenant (researcher)`)
      signedIn()

      // An unsafe request with the token the page asked for.
      await openPage(g, 'My account')
      await page.getByLabel('Display name').fill('Single sign-on engineer')
      await page.getByRole('button', { name: 'Save name' }).click()
      await eventually(
        'the display name saved',
        async () => (await env.api.sql`select display_name from users where email = ${email}`)[0]?.display_name === 'Single sign-on engineer' || undefined,
        10_000,
      )
      expectClean(g)

      // Started without a returnTo (a bookmarked start link, say): the provider's sign-in lands on My account.
      const bare = await guardedPage(env.browser, env.origin, [], [idp.issuer])
      try {
        await bare.page.goto(`${env.origin}/v1/auth/sso/${connection.json.data.id}/start`)
        await signInAtProvider(bare.page, idp.issuer, email)
        await bare.page.getByRole('heading', { level: 1, name: 'My account' }).waitFor()
        expect(bare.page.url()).toBe(`${env.origin}/console#/account`)
        expect(await bare.page.locator('#my-email').textContent()).toBe(email)
        expectClean(bare)
      } finally {
        await bare.close()
      }
    } finally {
      await g.close()
      idp.stop()
    }
  }, 90_000)

  // The tab was signed in with a password before the provider's redirect replaced its session cookie: the page must
  // take the new session's CSRF token, not keep the old one (the unlink below was refused CSRF_INVALID before).
  test("the Security page's test sign-in links the owner's own account; My account lists the link and ends it", async () => {
    const idp = await startOidcProvider(env.origin)
    const g = await guardedPage(env.browser, env.origin, [], [idp.issuer])
    try {
      const domain = `sso-link-${crypto.randomUUID().slice(0, 8)}.example.test`
      const owner = await signedUpUser(env.api.url, `owner@${domain}`)
      expect((await owner.client.post('/tenants', { name: 'Test tenant', slug: uniqueSlug() })).status).toBe(201)
      const claim = (await owner.client.post('/tenants/current/domains', { domain })).json.data
      dns.txt.set(claim.verificationRecord.name, [claim.verificationRecord.value])
      expect((await owner.client.post(`/tenants/current/domains/${claim.id}/verifications`)).status).toBe(201)
      const connection = (
        await owner.client.post('/tenants/current/sso-connections', {
          name: 'Company IdP',
          issuer: idp.issuer,
          clientId: CLIENT_ID,
          clientSecret: CLIENT_SECRET,
          emailDomains: [domain],
        })
      ).json.data

      const { page } = g
      await signInAs(g, env.origin, owner.email)
      await openPage(g, 'My account')
      await page.getByText('No identity provider is linked to your account.').waitFor()
      await openPage(g, 'Security')
      await page.getByRole('link', { name: 'Test sign-in with Company IdP' }).click()
      await signInAtProvider(page, idp.issuer, owner.email)
      expect(new URL(page.url()).pathname).toBe('/console')
      expect(await page.locator('header .who').textContent()).toBe(`${owner.email} · Test tenant (owner)`)
      const [linked] = (await owner.client.get('/users/me/sso-identities')).json.data
      expect(linked).toMatchObject({ connectionId: connection.id, connectionName: 'Company IdP', subject: owner.email })

      await openPage(g, 'My account')
      const row = page.getByRole('region', { name: 'Linked single sign-on' }).getByRole('row').filter({ hasText: 'Company IdP' })
      await row.waitFor()
      expect(await row.textContent()).toContain(owner.email)
      await auditPage(g, 'account-linked-sso')
      await page.getByRole('button', { name: 'Unlink Company IdP' }).click()
      await page.getByText('No identity provider is linked to your account.').waitFor()
      expect((await owner.client.get('/users/me/sso-identities')).json.data).toEqual([])
      expectClean(g)
    } finally {
      await g.close()
      idp.stop()
    }
  }, 90_000)
})
