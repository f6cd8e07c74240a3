// The members page in Chromium: server search, paging and the total count; role change with the ETag (a concurrent
// change shows the 412 and reloads); the last owner's protection shown as the server says it; an invitation made with
// the keyboard alone, and revoked. A member named with markup renders as text.
import { describe, expect, test } from 'bun:test'
import { tenantOwner, uniqueEmail } from '../support/fixtures'
import { memberOf } from '../tenancy/members'
import { auditPage, expectClean, guardedPage, HOSTILE, onConsolePage, openPage, signInAs, useConsole } from './browser'

const env = useConsole()

async function tenantWithCrew() {
  const owner = await tenantOwner(env.api.url)
  const crew = []
  for (let i = 0; i < 23; i++) crew.push(await memberOf(env.api.url, env.api.sql, owner.tenantId, 'viewer', uniqueEmail('crew')))
  const hostile = await memberOf(env.api.url, env.api.sql, owner.tenantId, 'researcher', uniqueEmail('odd'))
  expect((await hostile.client.patch('/users/me', { displayName: HOSTILE })).status).toBe(200)
  return { owner, crew, hostile }
}

describe('console: members', () => {
  test('search, filters, paging and the count come from the server; role change, 412, disable, remove, last owner', async () => {
    const { owner, crew, hostile } = await tenantWithCrew()
    const g = await guardedPage(env.browser, env.origin)
    const { page } = g
    const rows = page.locator('tbody tr')
    const rowsAre = (n: number) => page.waitForFunction((n) => document.querySelectorAll('tbody tr').length === n, n)
    try {
      await signInAs(g, env.origin, owner.email)
      await openPage(g, 'Members')
      await page.locator('#member-count', { hasText: '25 members' }).waitFor()
      expect(await rows.count()).toBe(20)
      await page.getByRole('button', { name: 'Next page' }).click()
      await rowsAre(5)
      await page.getByRole('button', { name: 'Previous page' }).click()
      await rowsAre(20)

      await page.getByLabel('Search by name or email').fill('crew-')
      await page.locator('#member-count', { hasText: '23 members' }).waitFor()
      await page.getByLabel('Search by name or email').fill('')
      await page.locator('#member-role').selectOption('researcher')
      await page.locator('#member-count', { hasText: /^1 member$/ }).waitFor()
      expect(await rows.first().textContent()).toContain(HOSTILE)
      expect(await page.locator('img[src="x"]').count()).toBe(0)
      await auditPage(g, 'members')

      // A role change sends the ETag the member was read with.
      await page.getByRole('button', { name: `Manage ${hostile.email}` }).click()
      const expiry = new Date(Date.now() + 60 * 86_400_000).toISOString().slice(0, 10)
      await page.locator('#edit-role').selectOption('admin')
      await page.getByLabel(/^Membership expires on/).fill(expiry)
      await page.getByRole('button', { name: 'Save' }).click()
      await page.getByRole('heading', { name: /^Manage / }).waitFor({ state: 'detached' })
      const read = await owner.client.get(`/tenants/current/memberships/${hostile.membershipId}`)
      expect(read.json.data.role).toBe('admin')
      expect(read.json.data.expiresAt.slice(0, 10)).toBe(expiry)

      // Someone else changes the member between the read and the save: the 412 is shown and the member reloaded.
      await page.locator('#member-role').selectOption('')
      const target = crew[0]!
      await page.getByLabel('Search by name or email').fill(target.email)
      await page.getByRole('button', { name: `Manage ${target.email}` }).click()
      const editRole = page.locator('#edit-role')
      await editRole.waitFor()
      const asRead = (await owner.client.get(`/tenants/current/memberships/${target.membershipId}`)).headers.get('etag')!
      expect((await owner.client.patch(`/tenants/current/memberships/${target.membershipId}`, { role: 'researcher' })).status).toBe(200)
      const staleSave = g.expect4xx({ status: 412, method: 'PATCH', path: `/v1/tenants/current/memberships/${target.membershipId}` })
      await editRole.selectOption('billing_admin')
      await page.getByRole('button', { name: 'Save' }).click()
      const stale = page.getByRole('alert').filter({ hasText: 'changed meanwhile' })
      await stale.waitFor()
      staleSave()
      const refused = await owner.client.patch(`/tenants/current/memberships/${target.membershipId}`, { role: 'viewer' }, { 'if-match': asRead })
      expect(refused.status).toBe(412)
      expect(await stale.textContent()).toContain(refused.json.message)
      await page.waitForFunction(() => (document.getElementById('edit-role') as HTMLSelectElement | null)?.value === 'researcher')
      await auditPage(g, 'members-412')
      await editRole.selectOption('billing_admin')
      await page.getByRole('button', { name: 'Save' }).click()
      await page.getByRole('heading', { name: /^Manage / }).waitFor({ state: 'detached' })
      expect((await owner.client.get(`/tenants/current/memberships/${target.membershipId}`)).json.data.role).toBe('billing_admin')

      // Disable one member, remove another.
      const [quiet, leaving] = [crew[1]!, crew[2]!]
      await page.getByLabel('Search by name or email').fill(quiet.email)
      await page.getByRole('button', { name: `Manage ${quiet.email}` }).click()
      await page.locator('#edit-status').selectOption('disabled')
      await page.getByRole('button', { name: 'Save' }).click()
      await page.getByRole('heading', { name: /^Manage / }).waitFor({ state: 'detached' })
      expect((await owner.client.get(`/tenants/current/memberships/${quiet.membershipId}`)).json.data.status).toBe('disabled')
      await page.getByLabel('Search by name or email').fill(leaving.email)
      await page.getByRole('button', { name: `Manage ${leaving.email}` }).click()
      await page.getByRole('button', { name: 'Remove member' }).click()
      await page.getByRole('button', { name: 'Confirm removal' }).click()
      await page.getByText('No member matches.').waitFor()
      expect((await owner.client.get(`/tenants/current/memberships/${leaving.membershipId}`)).json.data.status).toBe('removed')

      // The last owner cannot be removed: the server's 409, as it is.
      await page.getByLabel('Search by name or email').fill(owner.email)
      await page.getByRole('button', { name: `Manage ${owner.email}` }).click()
      const lastOwner = g.expect4xx({ status: 409, method: 'DELETE', path: `/v1/tenants/current/memberships/${owner.membershipId}` })
      await page.getByRole('button', { name: 'Remove member' }).click()
      await page.getByRole('button', { name: 'Confirm removal' }).click()
      const alert = page.getByRole('alert')
      await alert.waitFor()
      lastOwner()
      const protectedOwner = await owner.client.delete(`/tenants/current/memberships/${owner.membershipId}`)
      expect(protectedOwner.status).toBe(409)
      expect(await alert.textContent()).toContain(protectedOwner.json.message)
      expect(await alert.textContent()).toContain('LAST_OWNER_PROTECTION')
      expectClean(g)
    } finally {
      await g.close()
    }
  }, 90_000)

  test('an invitation is made with the keyboard alone, listed as pending, and revoked', async () => {
    const owner = await tenantOwner(env.api.url)
    const invitee = uniqueEmail('invitee')
    await onConsolePage(env, owner.email, 'Members', async (g) => {
      const { page } = g
      await page.getByText('No pending invitation.').waitFor()
      await page.locator('#member-count').waitFor()
      const focused = () => page.evaluate(() => document.activeElement?.id ?? '')
      for (let i = 0; i < 40 && (await focused()) !== 'invite-email'; i++) await page.keyboard.press('Tab')
      expect(await focused()).toBe('invite-email')
      await page.keyboard.type(invitee)
      await page.keyboard.press('Tab')
      expect(await focused()).toBe('invite-role')
      await page.keyboard.type('researcher')
      await page.keyboard.press('Tab')
      await page.keyboard.press('Enter')
      await page
        .getByRole('status')
        .filter({ hasText: `Invitation sent to ${invitee}.` })
        .waitFor()
      const listed = page.locator('#invitations li', { hasText: invitee })
      await listed.waitFor()
      expect(await listed.textContent()).toContain('as researcher')
      const pending = await owner.client.get('/tenant-invitations')
      expect(pending.json.data.map((i: { email: string; role: string }) => [i.email, i.role])).toEqual([[invitee, 'researcher']])
      await auditPage(g, 'members-invitations')

      await page.getByRole('button', { name: `Revoke the invitation of ${invitee}` }).click()
      await page.getByText('No pending invitation.').waitFor()
      expect((await owner.client.get('/tenant-invitations')).json.data).toEqual([])
    })
  }, 60_000)
})
