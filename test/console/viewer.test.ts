// A viewer walks every page the console offers and meets no action the server would refuse: the pages and buttons a
// viewer's role lacks are not there, no request of the walk is answered 403, and what is offered works.
import { describe, expect, test } from 'bun:test'
import { ROLE_PERMISSIONS } from '../../api/identity/permissions'
import { tenantOwner } from '../support/fixtures'
import { memberOf } from '../tenancy/members'
import { auditPage, expectClean, guardedPage, openPage, signInAs, useConsole } from './browser'

const env = useConsole()

// Actions of the console that need more than a viewer holds (tenant:manage, apikey:manage, billing:write, model:write).
const REFUSED_ACTIONS = [
  /^Request package$/,
  /^Create profile$/,
  /^Edit /,
  /^Save profile$/,
  /^Provision storage$/,
  /^Check \(dry run\)$/,
  /^Reconcile$/,
  /^Create tenant$/,
  /^Manage /,
  /^Send invitation$/,
  /^Show every member's keys$/,
  /^Revoke all/,
  /^Revoke the invitation/,
  /^Create project$/,
  /^Archive /,
  /^Add to project$/,
]

describe('console: a viewer', () => {
  test('is offered only what a viewer may do, on every page', async () => {
    const owner = await tenantOwner(env.api.url)
    const viewer = await memberOf(env.api.url, env.api.sql, owner.tenantId, 'viewer')
    const g = await guardedPage(env.browser, env.origin)
    const { page } = g
    const refused: string[] = []
    page.on('response', (r) => {
      if (r.status() === 403) refused.push(`${r.request().method()} ${r.url()}`)
    })
    try {
      await signInAs(g, env.origin, viewer.email)
      const nav = page.getByRole('navigation', { name: 'Console' }).getByRole('link')
      expect(await nav.allTextContents()).toEqual(['Tenants', 'Projects', 'API keys', 'Models', 'Packages', 'Storage', 'My account', 'Notifications'])

      for (const [title, shot] of [
        ['Tenants', 'viewer-tenants'],
        ['Projects', 'viewer-projects'],
        ['API keys', 'viewer-api-keys'],
        ['Models', 'viewer-models'],
        ['Packages', 'viewer-packages'],
        ['Storage', 'viewer-storage'],
        ['My account', 'viewer-account'],
      ] as const) {
        await openPage(g, title)
        await auditPage(g, shot)
        const buttons = await page.getByRole('button').allTextContents()
        for (const b of buttons) expect({ title, button: b, refused: REFUSED_ACTIONS.some((r) => r.test(b)) }).toEqual({ title, button: b, refused: false })
      }

      // The pages a viewer lacks are not reached by their address either: the console shows one it may use.
      await page.goto(`${env.origin}/console#/members`)
      await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor()

      // What is offered is what the server allows: exactly the viewer's own points as scopes, and creating works.
      await openPage(g, 'API keys')
      const offered = await page.locator('input[name="scopes"]').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value))
      expect(offered).toEqual([...ROLE_PERMISSIONS.viewer])
      await page.getByLabel('Name').fill('viewer key')
      for (const scope of offered) await page.getByLabel(scope, { exact: true }).check()
      await page.getByRole('button', { name: 'Create key' }).click()
      await page.getByRole('region', { name: 'Your new token' }).waitFor()
      expect(refused).toEqual([])
      expectClean(g)
    } finally {
      await g.close()
    }
  }, 60_000)
})
