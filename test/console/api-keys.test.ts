// The API keys page in Chromium: create with scopes and an expiry, the token shown once with a copy button and never
// again, revoke; an administrator sees every member's keys and revokes one member's at once; a key for one project
// (its scopes the project points, its project in the list), and the API's refusal of a scope beyond the project.
import { describe, expect, test } from 'bun:test'
import { Client } from '../support/client'
import { patFor, tenantOwner, uniqueSlug } from '../support/fixtures'
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

  test("a key for one project: project points offered, the project listed; a scope beyond the member's is refused", async () => {
    const owner = await tenantOwner(env.api.url)
    const project = (await owner.client.post('/projects', { name: 'Warehouse arm', slug: uniqueSlug('arm') })).json.data
    const viewer = await memberOf(env.api.url, env.api.sql, owner.tenantId, 'viewer')
    await onConsolePage(env, owner.email, 'API keys', async (g) => {
      const { page } = g
      await page.getByLabel('Name').fill('tenant key')
      await page.getByLabel('tenant:read').check()
      await page.getByRole('button', { name: 'Create key' }).click()
      await page.getByRole('button', { name: 'Done' }).click()

      await page.getByLabel('Name').fill('arm key')
      await page.getByLabel('Acts in').selectOption({ label: 'Project Warehouse arm' })
      const offered = await page.locator('input[name="scopes"]').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value))
      expect(offered).toEqual(['model:read', 'model:write', 'project:manage'])
      await page.getByLabel('model:read').check()
      await page.getByRole('button', { name: 'Create key' }).click()
      const shown = page.getByRole('region', { name: 'Your new token' }).locator('code')
      await shown.waitFor()
      const self = (await new Client(env.api.url).withBearer((await shown.textContent())!).get('/tokens/self')).json.data
      expect([self.projectScope?.projectId, self.grantCeiling]).toEqual([project.id, ['model:read']])
      await page.getByRole('button', { name: 'Done' }).click()
      const row = (name: string) => page.locator('tbody tr', { hasText: name })
      await row('arm key').waitFor()
      expect(await row('arm key').locator('td').nth(2).textContent()).toBe('Warehouse arm')
      expect(await row('tenant key').locator('td').nth(2).textContent()).toBe('tenant-wide')
      await auditPage(g, 'api-keys-project')
    })

    // A viewer holds model:read in the project, not model:write: the API's refusal, shown as it says it.
    await onConsolePage(
      env,
      viewer.email,
      'API keys',
      async (g) => {
        const { page } = g
        await page.getByLabel('Name').fill('too much')
        await page.getByLabel('Acts in').selectOption({ label: 'Project Warehouse arm' })
        await page.getByLabel('model:write').check()
        await page.getByRole('button', { name: 'Create key' }).click()
        const alert = page.getByRole('region', { name: 'Create a key' }).getByRole('alert')
        await alert.waitFor()
        const refused = await viewer.client.post('/api-keys', { name: 'too much', scopes: ['model:write'], projectId: project.id })
        expect([refused.status, refused.json.code]).toEqual([400, 'INVALID_PERMISSION_OVERLAY'])
        expect(await alert.textContent()).toContain(refused.json.message)
        expect((await viewer.client.get('/api-keys')).json.data).toEqual([])
      },
      [],
      [{ status: 400, method: 'POST', path: '/v1/api-keys' }],
    )
  }, 60_000)
})
