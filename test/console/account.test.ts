// My account in the console: the display name (hostile text stays text), the sessions signed in as me, ending another
// one (its holder is signed out at once), and the password (a wrong current one shows the server's problem).
import { describe, expect, test } from 'bun:test'
import { Client } from '../support/client'
import { PASSWORD, tenantOwner } from '../support/fixtures'
import { auditPage, HOSTILE, onConsolePage, useConsole } from './browser'

const NEW_PASSWORD = 'seven purple walruses debate quietly'

const env = useConsole()

describe('console: my account', () => {
  test('changes my name, ends another session, changes my password', async () => {
    const owner = await tenantOwner(env.api.url) // its API client holds a second session
    await onConsolePage(env, owner.email, 'My account', async (g) => {
      const { page } = g
      expect(await page.locator('#my-email').textContent()).toBe(owner.email)
      await page.getByLabel('Display name').fill(HOSTILE)
      await page.getByRole('button', { name: 'Save name' }).click()
      await page.waitForFunction(() => !document.querySelector('button[disabled]'))
      expect((await owner.client.get('/users/me')).json.data.user.displayName).toBe(HOSTILE)
      await page.locator('tbody tr').nth(1).waitFor()
      expect(await page.locator('tbody tr').count()).toBe(2)
      await auditPage(g, 'account')
      expect((await owner.client.get('/users/me')).status).toBe(200)
      await page.getByRole('button', { name: 'End session' }).click()
      await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1)
      expect((await owner.client.get('/users/me')).status).toBe(401)
      expect(await page.locator('tbody tr').textContent()).toContain('This session')

      const wrongCurrent = g.expect4xx({ status: 400, method: 'PATCH', path: '/v1/users/me/password' })
      await page.getByLabel('Current password').fill('not it')
      await page.getByLabel('New password').fill(NEW_PASSWORD)
      await page.getByRole('button', { name: 'Change password' }).click()
      const refused = page.getByRole('region', { name: 'Password' }).getByRole('alert')
      await refused.waitFor()
      wrongCurrent()
      await page.getByLabel('Current password').fill(PASSWORD)
      await page.getByLabel('New password').fill(NEW_PASSWORD)
      await page.getByRole('button', { name: 'Change password' }).click()
      await page.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor()
      const other = new Client(env.api.url)
      expect((await other.post('/sessions', { email: owner.email, password: NEW_PASSWORD })).status).toBe(201)
      await page.getByRole('button', { name: 'End session' }).waitFor({ state: 'detached' })
      await page.reload()
      await page.getByRole('button', { name: 'End every other session' }).click()
      await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1)
      expect((await other.get('/users/me')).status).toBe(401)
      expect(await page.locator('img[src="x"]').count()).toBe(0)
    })
  })
})
