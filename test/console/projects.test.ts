// The projects pages in Chromium: create and archive (archived listed apart); a project's members added with a role,
// an expiry and an overlay chosen from the project-scope points, the API's overlay refusal shown as it says it, a
// change sent with the ETag, an expired membership marked, a removal. A project maintainer who is a tenant viewer
// manages that project's members, and only that project's.
import { describe, expect, test } from 'bun:test'
import { removeExpiredProjectMembers } from '../../activities/project-member-expiry'
import { tenantOwner, uniqueSlug } from '../support/fixtures'
import { holdRows } from '../support/row-hold'
import { memberOf } from '../tenancy/members'
import { auditPage, HOSTILE, onConsolePage, useConsole } from './browser'

const env = useConsole()

const inDays = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10)

describe('console: projects', () => {
  test('create, archive apart; members with role, expiry and overlay; the refusal shown; change; expired marked; remove', async () => {
    const owner = await tenantOwner(env.api.url)
    const viewer = await memberOf(env.api.url, env.api.sql, owner.tenantId, 'viewer')
    const researcher = await memberOf(env.api.url, env.api.sql, owner.tenantId, 'researcher')
    const [slug, oldSlug] = [uniqueSlug('arm'), uniqueSlug('pilot')]
    await onConsolePage(env, owner.email, 'Projects', async (g) => {
      const { page } = g
      await page.getByText('No active project.').waitFor()
      await page.getByText('No archived project.').waitFor()
      await auditPage(g, 'projects-empty')

      for (const [name, s] of [
        [HOSTILE, slug],
        ['Old pilot', oldSlug],
      ]) {
        await page.getByLabel('Name', { exact: true }).fill(name!)
        await page.getByLabel(/^Slug/).fill(s!)
        await page.getByLabel(/^Description/).fill(`about ${s}`)
        await page.getByRole('button', { name: 'Create project' }).click()
        await page.locator('#active-projects').getByText(s!, { exact: true }).waitFor()
      }
      const listed = (await owner.client.get('/projects')).json.data
      expect(listed.map((p: { slug: string; description: string }) => [p.slug, p.description])).toEqual([
        [oldSlug, `about ${oldSlug}`],
        [slug, `about ${slug}`],
      ])
      const [old, project] = listed

      await page.getByRole('button', { name: 'Archive Old pilot' }).click()
      await page.getByRole('button', { name: 'Confirm archiving Old pilot' }).click()
      await page.locator('#archived-projects').getByText(oldSlug, { exact: true }).waitFor()
      expect(await page.locator('#active-projects').getByText(oldSlug, { exact: true }).count()).toBe(0)
      expect((await owner.client.get(`/projects/${old.id}`)).json.data.archived).toBe(true)
      expect(await page.locator('img[src="x"]').count()).toBe(0)
      await auditPage(g, 'projects')

      // The project's own page, by its link.
      await page.getByRole('link', { name: HOSTILE }).click()
      await page.getByRole('heading', { name: 'Project members' }).waitFor()
      await page.getByText(/^No project member yet/).waitFor()
      const add = page.getByRole('region', { name: 'Add a member to this project' })
      await add.getByLabel('Tenant member').selectOption({ label: `${viewer.email} (viewer)` })
      await add.getByLabel('Project role').selectOption('reader')
      await add.getByLabel(/^Project membership expires on/).fill(inDays(30))
      await add.getByRole('group', { name: 'Grant beyond the roles' }).getByLabel('model:write').check()
      await add.getByRole('button', { name: 'Add to project' }).click()
      const rowOf = (email: string) => page.locator('#project-members tr', { hasText: email })
      await rowOf(viewer.email).waitFor()
      const members = `/projects/${project.id}/members`
      const added = (await owner.client.get(`${members}/${viewer.userId}`)).json.data
      expect([added.role, added.overlay, added.effectivePermissions, added.expiresAt.slice(0, 10)]).toEqual([
        'reader',
        { grant: ['model:write'], deny: [] },
        ['model:read', 'model:write'],
        inDays(30),
      ])
      expect(await rowOf(viewer.email).textContent()).toContain('+model:write')

      // Granting and denying one point is the API's INVALID_PERMISSION_OVERLAY: its message and code, as it says them.
      const overlay = g.expect4xx({ status: 400, method: 'POST', path: `/v1${members}` })
      await add.getByLabel('Tenant member').selectOption({ label: `${researcher.email} (researcher)` })
      await add.getByLabel('Project role').selectOption('contributor')
      await add.getByRole('group', { name: 'Grant beyond the roles' }).getByLabel('project:manage').check()
      await add.getByRole('group', { name: 'Deny in this project' }).getByLabel('project:manage').check()
      await add.getByRole('button', { name: 'Add to project' }).click()
      const refusal = add.getByRole('alert')
      await refusal.waitFor()
      overlay()
      const refused = await owner.client.post(members, {
        userId: researcher.userId,
        role: 'contributor',
        overlay: { grant: ['project:manage'], deny: ['project:manage'] },
      })
      expect([refused.status, refused.json.code]).toEqual([400, 'INVALID_PERMISSION_OVERLAY'])
      expect(await refusal.textContent()).toContain(refused.json.message)
      expect(await refusal.textContent()).toContain('INVALID_PERMISSION_OVERLAY')
      await auditPage(g, 'project-refusal')
      await add.getByRole('group', { name: 'Deny in this project' }).getByLabel('project:manage').uncheck()
      await add.getByRole('button', { name: 'Add to project' }).click()
      await rowOf(researcher.email).waitFor()
      expect((await owner.client.get(`${members}/${researcher.userId}`)).json.data.effectivePermissions).toEqual([
        'model:read',
        'model:write',
        'project:manage',
      ])

      // A change goes with the ETag the membership was read with: the viewer becomes a contributor, the grant goes.
      await page.getByRole('button', { name: `Manage ${viewer.email} in this project` }).click()
      const edit = page.getByRole('region', { name: `Manage ${viewer.email} in this project` })
      await edit.getByLabel('Project role').selectOption('contributor')
      await edit.getByRole('group', { name: 'Grant beyond the roles' }).getByLabel('model:write').uncheck()
      await edit.getByRole('button', { name: 'Save' }).click()
      await edit.waitFor({ state: 'detached' })
      const changed = (await owner.client.get(`${members}/${viewer.userId}`)).json.data
      expect([changed.role, changed.overlay, changed.version]).toEqual(['contributor', { grant: [], deny: [] }, added.version + 1])

      // Expired (written a second back, as the clock would have it): the row is marked, its points gone. Until the
      // housekeeping purge removes it, which may come at any moment: the row is held out of it while the page is read.
      const { release } = await holdRows(
        env.api.deps.config.DATABASE_URL,
        (tx) => tx`select 1 from project_members where user_id = ${viewer.userId} for key share`,
      )
      try {
        await env.api.sql.begin(async (tx) => {
          await tx`set local session_replication_role = replica`
          await tx`update project_members set expires_at = now() - interval '1 second' where user_id = ${viewer.userId}`
        })
        expect(await rowOf(viewer.email).textContent()).not.toContain('expired')
        // A purge run now (as the housekeeping activity runs it) passes the held row by.
        await removeExpiredProjectMembers(env.api.deps, 1000)
        await page.reload()
        await rowOf(viewer.email).getByText('· expired').waitFor()
        expect(await rowOf(viewer.email).textContent()).toContain('model:read') // the tenant role's point stays
        expect(await rowOf(viewer.email).textContent()).not.toContain('model:write')
        await auditPage(g, 'project-members')

        // Removal, behind a confirmation (the expired row, still held, is the one left).
        await page.getByRole('button', { name: `Manage ${researcher.email} in this project` }).click()
        await page.getByRole('button', { name: 'Remove from project' }).click()
        await page.getByRole('button', { name: 'Confirm removal from the project' }).click()
        await rowOf(researcher.email).waitFor({ state: 'detached' })
        expect((await owner.client.get(members)).json.data.map((m: { userId: string }) => m.userId)).toEqual([viewer.userId])
      } finally {
        await release()
      }
    })
  }, 90_000)

  test("a tenant viewer who maintains one project manages that project's members, not another's", async () => {
    const owner = await tenantOwner(env.api.url)
    const maintainer = await memberOf(env.api.url, env.api.sql, owner.tenantId, 'viewer')
    const colleague = await memberOf(env.api.url, env.api.sql, owner.tenantId, 'viewer')
    for (const name of ['Mine', 'Other']) {
      const res = await owner.client.post('/projects', { name, slug: uniqueSlug(name.toLowerCase()) })
      expect(res.status).toBe(201)
    }
    const projects = (await owner.client.get('/projects')).json.data as { id: string; name: string }[]
    const id = (name: string) => projects.find((p) => p.name === name)!.id
    expect((await owner.client.post(`/projects/${id('Mine')}/members`, { userId: maintainer.userId, role: 'maintainer' })).status).toBe(201)

    await onConsolePage(env, maintainer.email, 'Projects', async (g) => {
      const { page } = g
      // Not a tenant manager: no create, no archive.
      await page.locator('#active-projects').waitFor()
      expect(await page.getByRole('button', { name: 'Create project' }).count()).toBe(0)
      expect(await page.getByRole('button', { name: /^Archive / }).count()).toBe(0)

      await page.getByRole('link', { name: 'Other' }).click()
      await page.getByText(/^No project member yet/).waitFor()
      expect(await page.getByRole('region', { name: 'Add a member to this project' }).count()).toBe(0)

      await page.getByRole('link', { name: 'All projects' }).click()
      await page.getByRole('link', { name: 'Mine' }).click()
      const add = page.getByRole('region', { name: 'Add a member to this project' })
      // Without tenant:manage the tenant's member list is not read: the member is named by user id.
      await add.getByLabel('User id of a tenant member').fill(colleague.userId)
      await add.getByLabel('Project role').selectOption('contributor')
      await add.getByRole('button', { name: 'Add to project' }).click()
      await page.locator('#project-members tr', { hasText: colleague.email }).waitFor()
      await auditPage(g, 'project-maintainer')
      const added = (await owner.client.get(`/projects/${id('Mine')}/members/${colleague.userId}`)).json.data
      expect([added.role, added.grantedBy]).toEqual(['contributor', maintainer.userId])
    })
  }, 60_000)
})
