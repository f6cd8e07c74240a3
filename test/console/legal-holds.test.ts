// Legal holds in Chromium (owners): place one of each scope (the whole tenant, a member, a project), each listed with
// whom it holds; a member removed meanwhile is the API's SUBJECT_NOT_IN_TENANT, shown as it says it; release, final.
import { describe, expect, test } from 'bun:test'
import type { Locator } from 'playwright-core'
import { tenantOwner, uniqueSlug } from '../support/fixtures'
import { memberOf } from '../tenancy/members'
import { auditPage, HOSTILE, onConsolePage, useConsole } from './browser'

const env = useConsole()

describe('console: legal holds', () => {
  test('place tenant, member and project holds; a removed member refused; release', async () => {
    const owner = await tenantOwner(env.api.url)
    const held = await memberOf(env.api.url, env.api.sql, owner.tenantId, 'researcher')
    const leaving = await memberOf(env.api.url, env.api.sql, owner.tenantId, 'viewer')
    const project = (await owner.client.post('/projects', { name: 'Partner pilot', slug: uniqueSlug('pilot') })).json.data
    await onConsolePage(
      env,
      owner.email,
      'Legal holds',
      async (g) => {
        const { page } = g
        await page.getByText('No legal hold.').waitFor()
        await auditPage(g, 'legal-holds-empty')
        const place = async (matter: string, kind: string, pick?: (form: Locator) => Promise<unknown>) => {
          const form = page.getByRole('region', { name: 'Place a hold' })
          await form.getByLabel('Matter').fill(matter)
          await form.getByLabel('Reason').fill(`preserve for ${matter}`)
          await form.getByLabel(kind).check()
          await pick?.(form)
          await form.getByRole('button', { name: 'Place hold' }).click()
        }
        const rowOf = (matter: string) => page.locator('#legal-holds tr', { hasText: matter })

        await place(HOSTILE, 'The whole tenant')
        await rowOf(HOSTILE).waitFor()
        await place('Matter B', 'One member', (f) => f.getByLabel('Member', { exact: true }).selectOption({ label: held.email }))
        await rowOf('Matter B').waitFor()
        await place('Matter C', 'One project', (f) => f.getByLabel('Project', { exact: true }).selectOption({ label: 'Partner pilot' }))
        await rowOf('Matter C').waitFor()
        expect(await rowOf(HOSTILE).textContent()).toContain('the whole tenant')
        expect(await rowOf('Matter B').textContent()).toContain(`member ${held.email}`)
        expect(await rowOf('Matter C').textContent()).toContain('project Partner pilot')
        expect(await page.locator('img[src="x"]').count()).toBe(0)
        const holds = (await owner.client.get('/tenants/current/legal-holds')).json.data
        expect(holds.map((h: { matter: string; scope: object; status: string }) => [h.matter, h.scope, h.status])).toEqual([
          ['Matter C', { kind: 'project', userId: null, projectId: project.id }, 'active'],
          ['Matter B', { kind: 'member', userId: held.userId, projectId: null }, 'active'],
          [HOSTILE, { kind: 'tenant', userId: null, projectId: null }, 'active'],
        ])
        await auditPage(g, 'legal-holds')

        // A member removed after the page listed them: the API's refusal, as it says it.
        expect((await owner.client.delete(`/tenants/current/memberships/${leaving.membershipId}`)).status).toBe(200)
        await place('Matter D', 'One member', (f) => f.getByLabel('Member', { exact: true }).selectOption({ label: leaving.email }))
        const refusal = page.getByRole('region', { name: 'Place a hold' }).getByRole('alert')
        await refusal.waitFor()
        const refused = await owner.client.post('/tenants/current/legal-holds', { matter: 'D', reason: 'r', scope: { kind: 'member', userId: leaving.userId } })
        expect([refused.status, refused.json.code]).toEqual([404, 'SUBJECT_NOT_IN_TENANT'])
        expect(await refusal.textContent()).toContain(refused.json.message)
        expect(await refusal.textContent()).toContain('SUBJECT_NOT_IN_TENANT')

        // Release, behind a confirmation; final, so no second release is offered.
        await page.getByRole('button', { name: `Release ${HOSTILE}` }).click()
        await page.getByRole('button', { name: `Confirm release of ${HOSTILE}` }).click()
        await rowOf(HOSTILE)
          .getByText(/^released /)
          .waitFor()
        expect(await page.getByRole('button', { name: `Release ${HOSTILE}` }).count()).toBe(0)
        const released = (await owner.client.get('/tenants/current/legal-holds?status=released')).json.data
        expect(released.map((h: { matter: string; releasedBy: string }) => [h.matter, h.releasedBy])).toEqual([[HOSTILE, owner.userId]])
      },
      [],
      [{ status: 404, method: 'POST', path: '/v1/tenants/current/legal-holds' }],
    )
  }, 90_000)
})
