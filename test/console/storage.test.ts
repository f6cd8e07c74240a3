// The storage page in Chromium: buckets provisioned from the page (their progress until ready), the usage chart, and
// a dry run and a real reconciliation, each to its end.
import { describe, expect, test } from 'bun:test'
import { tenantOwner } from '../support/fixtures'
import { auditPage, onConsolePage, useConsole } from './browser'

const env = useConsole()

describe('console: storage', () => {
  test('provision, watch the buckets become ready, read the usage, check and reconcile', async () => {
    const owner = await tenantOwner(env.api.url)
    await onConsolePage(env, owner.email, 'Storage', async (g) => {
      const { page } = g
      await page.getByText('No storage yet.').waitFor()
      await page.getByText('No reconciliation yet.').waitFor()
      await auditPage(g, 'storage-empty')

      await page.getByRole('button', { name: 'Provision storage' }).click()
      await page.locator('#usage-total').waitFor({ timeout: 45_000 })
      const statuses = await page.locator('section', { hasText: 'Buckets' }).locator('tbody tr td:nth-child(4)').allTextContents()
      expect(statuses).toEqual(['ready', 'ready', 'ready'])
      const summary = (await owner.client.get('/tenants/current/storage-summary')).json.data
      expect(await page.locator('#usage-total').textContent()).toStartWith(`${summary.totalObjects} objects`)
      expect(await page.locator('svg.chart rect').count()).toBe(summary.buckets.length)

      await page.getByRole('button', { name: 'Check (dry run)' }).click()
      await page.getByRole('cell', { name: 'succeeded' }).waitFor({ timeout: 45_000 })
      await auditPage(g, 'storage')

      // The real run, beside the dry run: its own row, followed to its end.
      await page.getByRole('button', { name: 'Reconcile', exact: true }).click()
      const real = page
        .locator('section', { hasText: 'Reconciliation' })
        .locator('tbody tr', { has: page.getByRole('cell', { name: 'reconcile', exact: true }) })
      await real.getByRole('cell', { name: 'succeeded' }).waitFor({ timeout: 45_000 })
      const jobs = (await owner.client.get('/tenants/current/storage-reconciliation-jobs')).json.data
      expect(jobs.map((j: { dryRun: boolean; status: string }) => [j.dryRun, j.status])).toEqual([
        [false, 'succeeded'],
        [true, 'succeeded'],
      ])
      expect(await real.locator('td:nth-child(4)').textContent()).toBe(String(jobs[0].objectsScanned))
    })
  }, 120_000)
})
