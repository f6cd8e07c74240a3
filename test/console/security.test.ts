// The security page in Chromium: the sign-in policy edited with its ETag (a concurrent change shows the 412 and
// reloads), a domain claimed and verified against a DNS server the test runs, and an SSO connection set up with the
// redirect URI shown to paste into the provider.
import { describe, expect, test } from 'bun:test'
import { useDns } from '../support/dns'
import { tenantOwner } from '../support/fixtures'
import { auditPage, onConsolePage, useConsole } from './browser'

const dns = useDns()
const env = useConsole(() => ({ DOMAIN_VERIFICATION_DNS_SERVERS: dns.server }))

describe('console: security', () => {
  test('policy with its ETag, a domain verified by its TXT record, an SSO connection with its redirect URI', async () => {
    const owner = await tenantOwner(env.api.url)
    await onConsolePage(
      env,
      owner.email,
      'Security',
      async (g) => {
        const { page } = g
        await page.getByText('No domain claimed.').waitFor()
        await page.getByText('No connection yet.').waitFor()
        await auditPage(g, 'security-empty')

        await page.getByLabel('Idle timeout, minutes').fill('45')
        // After a save the page reads the policy again for its new ETag; the change below must come after that read,
        // or the page reads the changed policy and its next save is (rightly) not stale.
        const reread = page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/tenants/current/auth-policy' && r.request().method() === 'GET')
        await page.getByRole('button', { name: 'Save policy' }).click()
        await page.getByRole('status').filter({ hasText: 'Policy saved.' }).waitFor()
        await reread
        expect((await owner.client.get('/tenants/current/auth-policy')).json.data.sessionIdleMinutes).toBe(45)

        // Someone else saves the policy between this page's read and its save.
        const asRead = (await owner.client.get('/tenants/current/auth-policy')).headers.get('etag')!
        expect((await owner.client.patch('/tenants/current/auth-policy', { passwordMinLength: 14 })).status).toBe(200)
        const staleSave = g.expect4xx({ status: 412, method: 'PATCH', path: '/v1/tenants/current/auth-policy' })
        await page.getByLabel('Idle timeout, minutes').fill('50')
        await page.getByRole('button', { name: 'Save policy' }).click()
        const stale = page.getByRole('alert').filter({ hasText: 'changed meanwhile' })
        await stale.waitFor()
        staleSave()
        const refused = await owner.client.patch('/tenants/current/auth-policy', { sessionIdleMinutes: 50 }, { 'if-match': asRead })
        expect(refused.status).toBe(412)
        expect(await stale.textContent()).toContain(refused.json.message)
        await page.waitForFunction(() => (document.getElementById('policy-min') as HTMLInputElement | null)?.value === '14')

        const domain = `console-${Date.now().toString(36)}.example.com`
        await page.getByLabel('Domain', { exact: true }).fill(domain)
        await page.getByRole('button', { name: 'Claim domain' }).click()
        // Verified before the TXT record is there: the server's refusal, shown.
        const noRecord = g.expect4xx({ status: 400, method: 'POST', path: /^\/v1\/tenants\/current\/domains\/[^/]+\/verifications$/ })
        await page.getByRole('button', { name: `Verify ${domain}` }).click()
        const notFound = page.getByRole('region', { name: 'Domains' }).getByRole('alert')
        await notFound.waitFor()
        noRecord()
        const [claim] = (await owner.client.get('/tenants/current/domains')).json.data
        const direct = await owner.client.post(`/tenants/current/domains/${claim.id}/verifications`)
        expect(await notFound.textContent()).toContain(direct.json.message)
        await page.getByRole('button', { name: `Copy the record of ${domain}` }).click()
        expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(claim.verificationRecord.value)
        dns.txt.set(claim.verificationRecord.name, [claim.verificationRecord.value])
        await page.getByRole('button', { name: `Verify ${domain}` }).click()
        await page.getByText(/: verified /).waitFor()

        expect(await page.locator('#redirect-uri').textContent()).toBe(`${env.origin}/v1/auth/sso/callback`)
        await page.getByLabel('Name', { exact: true }).fill('Company IdP')
        await page.getByLabel('Issuer URL').fill('https://idp.example.com')
        await page.getByLabel('Client id').fill('rcp-console')
        await page.getByLabel('Client secret').fill('a client secret of the provider')
        await page.getByLabel(/^Email domains that may join/).fill(domain)
        await page.getByRole('button', { name: 'Add connection' }).click()
        await page.getByRole('status').filter({ hasText: 'Connection Company IdP added.' }).waitFor()
        const [connection] = (await owner.client.get('/tenants/current/sso-connections')).json.data
        expect(connection).toMatchObject({ name: 'Company IdP', issuer: 'https://idp.example.com', emailDomains: [domain], clientSecretSet: true })
        expect(await page.getByRole('link', { name: 'Test sign-in with Company IdP' }).getAttribute('href')).toBe(`${connection.signInUrl}?returnTo=%2Fconsole`)
        await auditPage(g, 'security')
        await page.getByRole('button', { name: `Remove ${domain}` }).click()
        await page.getByText('No domain claimed.').waitFor()
        expect((await owner.client.get('/tenants/current/domains')).json.data).toEqual([])
      },
      ['clipboard-read', 'clipboard-write'],
    )
  }, 90_000)
})
