// The audit log page in Chromium: the tenant's entries in a window with an action-prefix filter, the chain verified
// over the window, and an export run to its download link (the worker writes the file).
import { describe, expect, test } from 'bun:test'
import { patFor, tenantOwner } from '../support/fixtures'
import { provisionedTenant } from '../storage/helpers'
import { auditPage, onConsolePage, useConsole } from './browser'

const env = useConsole()

describe('console: audit log', () => {
  test('entries with a filter, the chain verified, an export to its download link', async () => {
    const owner = await provisionedTenant(env.api.url) // the export is written to the tenant's export bucket
    await patFor(owner.client, ['tenant:read'])
    await onConsolePage(env, owner.email, 'Audit log', async (g) => {
      const { page } = g
      await page.getByRole('cell', { name: 'tenant.created' }).waitFor()
      const listed = await owner.client.get(
        `/tenants/current/audit-log?from=${new Date(Date.now() - 86_400_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}&pageSize=50`,
      )
      expect(await page.locator('tbody tr').count()).toBe(listed.json.data.length)
      await auditPage(g, 'audit')

      await page.getByLabel(/^Action or prefix/).fill('api_key.')
      await page.getByRole('button', { name: 'Show' }).click()
      await page.waitForFunction(() => Array.from(document.querySelectorAll('tbody tr td:nth-child(4)')).every((td) => td.textContent!.startsWith('api_key.')))
      expect(await page.locator('tbody tr').count()).toBeGreaterThan(0)

      await page.getByRole('button', { name: 'Verify the chain' }).click()
      await page
        .getByRole('status')
        .filter({ hasText: /^Intact: \d+ entries/ })
        .waitFor()
      await page.getByRole('button', { name: 'Export' }).click()
      await page.locator('#export-state', { hasText: 'Export succeeded' }).waitFor({ timeout: 30_000 })
      const href = await page.getByRole('link', { name: 'Download (gzip NDJSON)' }).getAttribute('href')
      expect(href).toStartWith(process.env.S3_ENDPOINT!)
    })
  }, 60_000)

  test('the paging buttons walk the window 50 entries at a time, and back', async () => {
    const owner = await tenantOwner(env.api.url)
    for (let i = 0; i < 60; i++) await patFor(owner.client, ['tenant:read'], { name: `key ${i}` })
    const window = `from=${new Date(Date.now() - 86_400_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}&pageSize=50`
    const first = (await owner.client.get(`/tenants/current/audit-log?${window}`)).json
    const second = (await owner.client.get(`/tenants/current/audit-log?${window}&pageToken=${encodeURIComponent(first.nextPageToken)}`)).json
    const seqs = (page: { data: { seq: number }[] }) => page.data.map((a) => String(a.seq))
    await onConsolePage(env, owner.email, 'Audit log', async (g) => {
      const { page } = g
      const shown = () => page.locator('tbody tr td:first-child').allTextContents()
      await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 50)
      expect(await shown()).toEqual(seqs(first))
      expect(await page.getByRole('button', { name: 'Previous page' }).isDisabled()).toBe(true)

      await page.getByRole('button', { name: 'Next page' }).click()
      await page.waitForFunction((s) => document.querySelector('tbody tr td')?.textContent === s, seqs(second)[0])
      expect(await shown()).toEqual(seqs(second))
      expect(second.nextPageToken ?? null).toBeNull() // 60 keys and the tenant's own entries fit in two pages
      expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true)

      await page.getByRole('button', { name: 'Previous page' }).click()
      await page.waitForFunction((s) => document.querySelector('tbody tr td')?.textContent === s, seqs(first)[0])
      expect(await shown()).toEqual(seqs(first))
      expect(await page.getByRole('button', { name: 'Previous page' }).isDisabled()).toBe(true)
    })
  }, 60_000)
})
