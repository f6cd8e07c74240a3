// The billing pages in Chromium, as a billing admin uses them: usage of the period per meter (our own SVG bars by day,
// stacked by project, and the same numbers in a table), the subscription (a plan change priced before it is confirmed,
// cancel at the period's end, pause and resume, a refused move explained), the invoices (list, one, the API's own
// rendering). Then the banner every member of a blocked tenant sees on every page, and who sees the pages at all.
import { describe, expect, test } from 'bun:test'
import { periodLabel } from '../../api/billing/periods'
import { recordUsage } from '../../api/usage/record'
import type { Meter } from '../../api/usage/meters'
import { tenantOwner } from '../support/fixtures'
import { memberOf } from '../tenancy/members'
import { auditPage, expectClean, guardedPage, openPage, signInAs, useConsole } from './browser'

const env = useConsole()
const DAY = 86_400_000
const SUBSCRIPTION = '/v1/tenants/current/subscription'

const thisMonth = () => {
  const now = new Date()
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))
}
const lastMonth = () => new Date(Date.UTC(thisMonth().getUTCFullYear(), thisMonth().getUTCMonth() - 1, 1))

const use = (tenantId: string, projectId: string | null, meter: Meter, quantity: number, occurredAt: Date) =>
  env.api.sql.begin((tx) => recordUsage(tx, { tenantId, projectId, meter, quantity, occurredAt, idempotencyKey: crypto.randomUUID() }))

/** A tenant billed last month (closed into an invoice through the API) whose current period is this calendar month,
 *  with builds in two projects and one outside any project on the period's first two days. */
async function billedTenant() {
  const owner = await tenantOwner(env.api.url)
  const billing = await memberOf(env.api.url, env.api.sql, owner.tenantId, 'billing_admin')
  const project = async (name: string) => (await owner.client.post('/projects', { name, slug: name.toLowerCase() })).json.data.id as string
  const [arms, legs] = [await project('Arms'), await project('Legs')]
  await env.api.sql`
    update subscriptions set current_period_start = ${lastMonth()}, current_period_end = ${thisMonth()} where tenant_id = ${owner.tenantId}`
  await use(owner.tenantId, arms, 'edge_package.builds', 130, new Date(lastMonth().getTime() + 3_600_000))
  const closed = await billing.client.post('/tenants/current/invoices', { period: periodLabel(lastMonth()) })
  expect(closed.status).toBe(201)
  const first = new Date(thisMonth().getTime() + 3_600_000)
  const second = new Date(first.getTime() + DAY)
  await use(owner.tenantId, arms, 'edge_package.builds', 3, first)
  await use(owner.tenantId, legs, 'edge_package.builds', 2, first)
  await use(owner.tenantId, arms, 'edge_package.builds', 120, second)
  await use(owner.tenantId, null, 'edge_package.builds', 1, second)
  return { owner, billing, days: [first, second].map((d) => d.toISOString().slice(0, 10)) }
}

const navOf = (g: { page: import('playwright-core').Page }) => g.page.getByRole('navigation', { name: 'Console' }).getByRole('link').allTextContents()

describe('console: billing', () => {
  test('a billing admin reads usage by day and project, changes the plan with the difference shown, cancels, pauses, resumes, reads invoices', async () => {
    const { owner, billing, days } = await billedTenant()
    const g = await guardedPage(env.browser, env.origin)
    const { page } = g
    try {
      await signInAs(g, env.origin, billing.email)
      const nav = await navOf(g)
      expect(nav).toEqual(expect.arrayContaining(['Usage', 'Subscription', 'Invoices']))
      for (const other of ['Members', 'Models', 'Packages', 'Security', 'Webhooks', 'Audit log']) expect(nav).not.toContain(other)

      // Usage: the builds' chart and table agree with what was recorded, by day and by project.
      await openPage(g, 'Usage')
      const builds = page.getByRole('region', { name: /^edge_package\.builds: 126 build$/ })
      await builds.waitFor()
      const chart = builds.getByRole('img', { name: /edge_package\.builds per UTC day/ })
      const bars = async (day: string) =>
        chart
          .locator(`g[data-day="${day}"] rect`)
          .evaluateAll((rs) => rs.map((r) => [r.getAttribute('data-quantity'), Number(r.getAttribute('height'))] as const))
      const [one, two] = [await bars(days[0]!), await bars(days[1]!)]
      expect(one.map(([q]) => q)).toEqual(['3', '2'])
      expect(two.map(([q]) => q)).toEqual(['120', '1'])
      expect(two[0]![1]).toBeGreaterThan(one[0]![1] * 30)
      const table = builds.getByRole('table')
      expect(await table.locator('thead th').allTextContents()).toEqual(['Day (UTC)', 'Arms', 'Legs', 'No project', 'Total'])
      expect(await table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => Array.from(r.children, (c) => c.textContent ?? '')))).toEqual([
        [days[0]!, '3', '2', '0', '5'],
        [days[1]!, '120', '0', '1', '121'],
      ])
      expect(await table.locator('tfoot td').allTextContents()).toEqual(['123', '2', '1', '126'])
      await page
        .getByRole('region', { name: /^webhook\.deliveries: 0 attempt$/ })
        .getByText('Nothing used this period.')
        .waitFor()
      await auditPage(g, 'billing-usage')

      // Subscription: the change to Team priced before confirming, from the price book and the 126 builds so far:
      // Standard bills 26 builds beyond its 100 (26 × €1.50 = €39.00) on a €490.00 fee, Team none on €1,990.00.
      await openPage(g, 'Subscription')
      await page.locator('#subscription-plan', { hasText: 'Standard · €490.00 a month' }).waitFor()
      await page.getByLabel('New plan').selectOption('team')
      const diff = page.locator('#price-difference')
      await diff.waitFor()
      expect(
        await diff
          .getByRole('row', { name: /Monthly fee/ })
          .locator('td')
          .allTextContents(),
      ).toEqual(['€490.00', '€1,990.00', '+€1,500.00'])
      expect(
        await diff
          .getByRole('row', { name: /edge_package\.builds/ })
          .locator('td')
          .allTextContents(),
      ).toEqual(['€39.00', '€0.00', '-€39.00'])
      expect(await page.locator('#price-difference-total').textContent()).toBe('+€1,461.00')
      expect((await billing.client.get('/tenants/current/subscription')).json.data.planId).toBe('standard') // nothing sent yet
      await auditPage(g, 'billing-subscription')
      await page.getByRole('button', { name: 'Confirm the change to Team' }).click()
      await page.getByRole('status').getByText('Plan changed to Team.').waitFor()
      await page.locator('#subscription-plan', { hasText: 'Team · €1,990.00 a month' }).waitFor()
      expect((await billing.client.get('/tenants/current/subscription')).json.data.planId).toBe('team')

      await page.getByRole('button', { name: 'Cancel at period end' }).click()
      await page.locator('#subscription-renewal', { hasText: 'Cancels' }).waitFor()
      expect((await billing.client.get('/tenants/current/subscription')).json.data.cancelAtPeriodEnd).toBe(true)
      await page.getByRole('button', { name: 'Keep renewing' }).click()
      await page.locator('#subscription-renewal', { hasText: 'Renews' }).waitFor()

      // Pausing blocks the tenant: the banner appears at once, on this page and the next; resuming lifts it.
      await page.getByRole('button', { name: 'Pause' }).click()
      const banner = page.getByRole('region', { name: 'Billing block' })
      await banner.getByText('the subscription is paused').waitFor()
      await banner.getByText('A billing admin or an owner lifts it by resuming the subscription.').waitFor()
      await openPage(g, 'API keys')
      await banner.waitFor()
      await openPage(g, 'Subscription')
      await page.getByRole('button', { name: 'Resume' }).click()
      await page.getByRole('status').getByText('Subscription resumed.').waitFor()
      await banner.waitFor({ state: 'detached' })
      expect((await owner.client.get('/tenants/current/subscription')).json.data).toMatchObject({ status: 'active', planId: 'team' })

      // A move the state table refuses: the 409 said in terms of the state it met.
      await env.api.sql`update subscriptions set status = 'past_due', past_due_since = now() where tenant_id = ${owner.tenantId}`
      const refused = g.expect4xx({ status: 409, method: 'PATCH', path: SUBSCRIPTION })
      await page.reload()
      await page.getByRole('heading', { level: 1, name: 'Subscription' }).waitFor()
      await page.locator('#subscription-status', { hasText: 'Past due' }).waitFor()
      await page.getByRole('button', { name: 'Pause' }).click()
      const alert = page.getByRole('alert')
      await alert.getByText('The subscription could not pause: it is past due.').waitFor()
      await alert.getByText('BILLING_STATE_TRANSITION_INVALID', { exact: false }).waitFor()
      expect((await owner.client.get('/tenants/current/subscription')).json.data.status).toBe('past_due')
      refused()

      // Invoices: last month's, listed and opened, its lines as the snapshot holds them, and the API's own page.
      await openPage(g, 'Invoices')
      const label = periodLabel(lastMonth())
      const row = page.getByRole('row', { name: new RegExp(`^${label}`) })
      expect(await row.locator('td').nth(2).textContent()).toBe('€535.00')
      await page.getByRole('button', { name: `Open the invoice of ${label}` }).click()
      await page.getByRole('heading', { name: `Invoice ${label}` }).waitFor()
      expect(await page.locator('#invoice-total').textContent()).toBe('€535.00')
      const line = page.getByRole('row', { name: /^edge_package\.builds / })
      expect(await line.locator('td').allTextContents()).toEqual(['130', '100', '30', '150', '€45.00'])
      await auditPage(g, 'billing-invoice')
      const [doc] = await Promise.all([page.context().waitForEvent('page'), page.getByRole('link', { name: /invoice as a page for accounts payable/ }).click()])
      await doc.getByRole('heading', { name: `Invoice ${label}` }).waitFor()
      expect(await doc.locator('tfoot').textContent()).toContain('535.00 EUR')
      await doc.close()
      expectClean(g)
    } finally {
      await g.close()
    }
  }, 90_000)

  test("every member of a blocked tenant sees the banner on every page, with who lifts it; the billing pages stay a billing reader's", async () => {
    const owner = await tenantOwner(env.api.url)
    const viewer = await memberOf(env.api.url, env.api.sql, owner.tenantId, 'viewer')
    const elsewhere = await tenantOwner(env.api.url)
    expect((await owner.client.patch('/tenants/current/subscription', { status: 'paused' }, { 'if-match': '"v1"' })).status).toBe(200)
    await env.api.sql`update subscriptions set operator_blocked_at = now() where tenant_id = ${owner.tenantId}`

    const g = await guardedPage(env.browser, env.origin)
    const { page } = g
    try {
      await signInAs(g, env.origin, viewer.email)
      const nav = await navOf(g)
      for (const billingPage of ['Usage', 'Subscription', 'Invoices']) expect(nav).not.toContain(billingPage)
      const banner = page.getByRole('region', { name: 'Billing block' })
      for (const title of nav) {
        await openPage(g, title)
        await banner.getByText(/is billing-blocked/).waitFor()
      }
      await banner.getByText('the subscription is paused; the platform operator blocked it', { exact: false }).waitFor()
      await banner.getByText(/New work is refused: edge package builds, model registrations, uploads and validations, training jobs/).waitFor()
      await banner.getByText(/Only the platform operator lifts an operator’s block\./).waitFor()
      // A billing page named in the address falls back to a page the viewer has, and asks the API nothing it refuses.
      await page.goto(`${env.origin}/console#/invoices`)
      await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor()
      await auditPage(g, 'billing-banner')
    } finally {
      await g.close()
    }

    const other = await guardedPage(env.browser, env.origin)
    try {
      await signInAs(other, env.origin, elsewhere.email)
      await openPage(other, 'Subscription')
      await other.page.locator('#subscription-status', { hasText: 'Active' }).waitFor()
      expect(await other.page.getByRole('region', { name: 'Billing block' }).count()).toBe(0)
      expectClean(other)
    } finally {
      await other.close()
    }
  }, 60_000)
})
