// The offboarding page in Chromium (owners only): no request is the tenant shown active; starting asks to sign in
// again when the session proved itself more than five minutes ago (the API's 403, then a fresh session in the same
// tenant, the old one ended), then shows the state, the window's end, the export to its links and a blocker; cancel
// makes the tenant active again. An administrator is offered neither this page nor legal holds.
import { describe, expect, test } from 'bun:test'
import { completedRunReport, seededPackage } from '../edge-packages/helpers'
import { PASSWORD, patFor, tenantOwner } from '../support/fixtures'
import { provisionedTenant } from '../storage/helpers'
import { memberOf } from '../tenancy/members'
import { auditPage, expectClean, guardedPage, onConsolePage, openPage, signInAs, useConsole } from './browser'

const env = useConsole()
const PATH = '/v1/tenants/current/offboarding'

describe('console: offboarding', () => {
  test('start after signing in again, the window, the export links, a blocker, cancel', async () => {
    const owner = await provisionedTenant(env.api.url)
    const robot = owner.client.withBearer((await patFor(owner.client, ['model:read', 'model:write'])).token)
    const pkg = await seededPackage(env.api.sql, owner.tenantId)
    // The owner is also an older viewer of another tenant, where a password sign-in lands first: signing in again
    // must bring the console back to the tenant it showed, or the request would go to the wrong one.
    const decoy = await tenantOwner(env.api.url)
    await env.api.sql`update tenants set name = 'Decoy lab' where id = ${decoy.tenantId}`
    await env.api.sql`
      insert into memberships (tenant_id, user_id, role, created_at) values (${decoy.tenantId}, ${owner.userId}, 'viewer', now() - interval '1 day')`
    await onConsolePage(
      env,
      owner.email,
      'Tenants',
      async (g) => {
        const { page } = g
        expect(await page.locator('#current-tenant').textContent()).toBe('Decoy lab')
        await page.getByRole('button', { name: 'Switch to Test tenant' }).click()
        await page.locator('#current-tenant', { hasText: 'Test tenant' }).waitFor()
        await openPage(g, 'Offboarding')
        await page.getByRole('heading', { name: 'Test tenant is active' }).waitFor()
        await auditPage(g, 'offboarding-active')

        // The console's session signed in over five minutes ago: the API asks for a fresh sign-in.
        const [before] = await env.api.sql<{ id: string }[]>`
          update sessions set authenticated_at = now() - interval '6 minutes'
           where user_id = ${owner.userId} and revoked_at is null and user_agent like '%Chrome%' returning id`
        expect(before).toBeDefined()
        await page.getByRole('button', { name: 'Start offboarding' }).click()
        await page.getByRole('button', { name: 'Confirm: start offboarding' }).click()
        const prompt = page.getByRole('region', { name: 'Confirm it is you' })
        await prompt.waitFor()
        expect(await prompt.textContent()).toContain('Sign in again')
        expect(await env.api.sql`select 1 from tenant_offboarding_requests where tenant_id = ${owner.tenantId}`).toHaveLength(0)
        await auditPage(g, 'offboarding-reauth')
        await prompt.getByLabel('Your password').fill(PASSWORD)
        await prompt.getByRole('button', { name: 'Sign in again and continue' }).click()
        await page.getByRole('heading', { name: 'Offboarding request' }).waitFor()

        // The old session is ended, the new one stands in the same tenant.
        const [old] = await env.api.sql<{ revoked_at: Date | null }[]>`select revoked_at from sessions where id = ${before!.id}`
        expect(old!.revoked_at).not.toBeNull()
        expect(await env.api.sql`select 1 from tenant_offboarding_requests where tenant_id = ${decoy.tenantId}`).toHaveLength(0)
        const view = (await owner.client.get('/tenants/current/offboarding')).json.data
        expect([view.state, view.tenantId, view.requestedBy]).toEqual(['open', owner.tenantId, owner.userId])
        expect(await page.locator('#offboarding-window').textContent()).toContain(`(${view.retentionDays} days)`)
        expect(await page.locator('#offboarding-window').textContent()).toContain(new Date(view.windowEndsAt).getFullYear().toString())

        // The export, polled to its links (presigned URLs of the storage endpoint: links, never fetched by the page).
        await page.locator('#export-links').waitFor({ timeout: 60_000 })
        const hrefs = await page.locator('#export-links a').evaluateAll((as) => as.map((a) => new URL((a as HTMLAnchorElement).href).pathname))
        expect(hrefs.map((h) => h.split('/').pop())).toEqual(['rows.ndjson.gz', 'objects.ndjson.gz', 'manifest.dsse.json'])
        const ready = (await owner.client.get('/tenants/current/offboarding')).json.data.export
        expect(await page.locator('#export-status').textContent()).toContain(ready.manifestSha256)
        expect(await page.getByText('Nothing would block a new request today.').count()).toBe(1)

        // A robot reports a run: lineage, listed as a blocker.
        expect((await robot.post(`/edge-inference-packages/${pkg}/runs`, completedRunReport())).status).toBe(201)
        await page.reload()
        const blocker = page.locator('#offboarding-blockers li')
        await blocker.waitFor()
        expect(await blocker.textContent()).toContain('OFFBOARDING_BLOCKED_BY_LINEAGE')
        await auditPage(g, 'offboarding')

        await page.getByRole('button', { name: 'Cancel offboarding' }).click()
        await page.getByRole('heading', { name: 'Test tenant is active' }).waitFor()
        expect((await owner.client.get('/tenants/current/offboarding')).status).toBe(404)
      },
      [],
      [
        { status: 404, method: 'GET', path: PATH },
        { status: 403, method: 'POST', path: PATH },
      ],
    )
  }, 120_000)

  test('an administrator is offered neither offboarding nor legal holds', async () => {
    const owner = await tenantOwner(env.api.url)
    const admin = await memberOf(env.api.url, env.api.sql, owner.tenantId, 'admin')
    const g = await guardedPage(env.browser, env.origin)
    try {
      await signInAs(g, env.origin, admin.email)
      const nav = await g.page.getByRole('navigation', { name: 'Console' }).getByRole('link').allTextContents()
      expect(nav).toContain('Audit log')
      expect(nav.filter((t) => t === 'Offboarding' || t === 'Legal holds')).toEqual([])
      await g.page.goto(`${env.origin}/console#/offboarding`)
      await g.page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor()
      expectClean(g)
    } finally {
      await g.close()
    }
  }, 60_000)
})
