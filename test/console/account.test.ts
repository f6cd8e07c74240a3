// My account in the console: the sessions signed in as me, ending another one (its holder is signed out at once).
import { describe, expect, test } from 'bun:test'
import { tenantOwner } from '../support/fixtures'
import { auditPage, expectClean, guardedPage, openPage, signInAs, useConsole } from './browser'

const env = useConsole()

describe('console: my account', () => {
  test('lists my sessions and ends another one', async () => {
    const owner = await tenantOwner(env.api.url) // its API client holds a second session
    const g = await guardedPage(env.browser, env.origin)
    const { page } = g
    try {
      await signInAs(g, env.origin, owner.email)
      await openPage(g, 'My account')
      expect(await page.locator('#my-email').textContent()).toBe(owner.email)
      await page.locator('tbody tr').nth(1).waitFor()
      expect(await page.locator('tbody tr').count()).toBe(2)
      await auditPage(g, 'account')
      expect((await owner.client.get('/users/me')).status).toBe(200)
      await page.getByRole('button', { name: 'End session' }).click()
      await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1)
      expect((await owner.client.get('/users/me')).status).toBe(401)
      expect(await page.locator('tbody tr').textContent()).toContain('This session')
      expectClean(g)
    } finally {
      await g.close()
    }
  })
})
