// The API keys page in Chromium: create with scopes and an expiry, the token shown once with a copy button and never
// again, revoke; an administrator sees every member's keys and revokes one member's at once.
import { describe, expect, test } from 'bun:test'
import { Client } from '../support/client'
import { patFor, tenantOwner } from '../support/fixtures'
import { memberOf } from '../tenancy/members'
import { auditPage, HOSTILE, onConsolePage, useConsole } from './browser'

const env = useConsole()

describe('console: API keys', () => {
  test('create with scopes and expiry; the token is shown once, copied, then gone; revoke ends it', async () => {
    const owner = await tenantOwner(env.api.url)
    await onConsolePage(
      env,
      owner.email,
      'API keys',
      async (g) => {
        const { page } = g
        await page.getByText('No API key yet.').waitFor()
        await auditPage(g, 'api-keys-empty')

        const expiry = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10)
        await page.getByLabel('Name').fill(HOSTILE)
        await page.getByLabel('tenant:read').check()
        await page.getByLabel('model:read').check()
        await page.getByLabel(/^Expires on/).fill(expiry)
        await page.getByRole('button', { name: 'Create key' }).click()
        const shown = page.getByRole('region', { name: 'Your new token' }).locator('code')
        await shown.waitFor()
        const token = (await shown.textContent())!
        expect(token).toStartWith('rcp_pat_')
        await page.getByRole('button', { name: 'Copy' }).click()
        await page.getByText('Copied to the clipboard.').waitFor()
        expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token)
        await auditPage(g, 'api-keys-token')

        const self = await new Client(env.api.url).withBearer(token).get('/tokens/self')
        expect(self.status).toBe(200)
        const [listed] = (await owner.client.get('/api-keys')).json.data
        expect(listed).toMatchObject({ name: HOSTILE, scopes: ['tenant:read', 'model:read'] })
        expect(listed.expiresAt.slice(0, 10)).toBe(expiry)

        await page.getByRole('button', { name: 'Done' }).click()
        await page.getByRole('button', { name: `Revoke ${HOSTILE}` }).waitFor()
        expect(await page.content()).not.toContain(token)
        await page.reload()
        await page.getByRole('button', { name: `Revoke ${HOSTILE}` }).waitFor()
        expect(await page.content()).not.toContain(token)
        expect(await page.locator('img[src="x"]').count()).toBe(0)
        expect(await page.evaluate(() => JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage }))).not.toContain(token)
        await auditPage(g, 'api-keys')

        await page.getByRole('button', { name: `Revoke ${HOSTILE}` }).click()
        await page.getByText(/^revoked /).waitFor()
        expect((await new Client(env.api.url).withBearer(token).get('/tokens/self')).status).toBe(401)
      },
      ['clipboard-read', 'clipboard-write'],
    )
  }, 60_000)

  test("an administrator lists every member's keys and revokes one member's at once", async () => {
    const owner = await tenantOwner(env.api.url)
    const member = await memberOf(env.api.url, env.api.sql, owner.tenantId, 'researcher')
    const pat = await patFor(member.client, ['model:read'])
    await onConsolePage(env, owner.email, 'API keys', async (g) => {
      const { page } = g
      await page.getByRole('button', { name: "Show every member's keys" }).click()
      await page.getByRole('heading', { name: "Every member's keys" }).waitFor()
      await page.getByRole('button', { name: 'Revoke every key of the member owning test token' }).click()
      await page.getByText(/^revoked /).waitFor()
      expect((await new Client(env.api.url).withBearer(pat.token).get('/tokens/self')).status).toBe(401)
      await auditPage(g, 'api-keys-tenant')
    })
  }, 60_000)
})
