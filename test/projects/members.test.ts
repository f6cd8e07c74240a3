// Project memberships (issue 36): who may act in a project, with the attacker's view written first: a contributor
// granting themselves more, another tenant's admin reading the members, overlays of unknown points or of 10,000
// entries, grants beyond the granter's own.
import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { sealAudit } from '../support/audit'
import { patFor, tenantOwner } from '../support/fixtures'
import { holdRows } from '../support/row-hold'
import { bearer, memberOf } from '../tenancy/members'

const api = useApi()
const slug = () => `p-${crypto.randomUUID().slice(0, 8)}`

async function projectWith(role: 'viewer' | 'researcher' | 'billing_admin' | 'admin' = 'viewer') {
  const owner = await tenantOwner(api.url)
  const project = (await owner.client.post('/projects', { name: 'Arm', slug: slug() })).json.data
  const member = await memberOf(api.url, api.sql, owner.tenantId, role)
  return { owner, project, member, members: `/projects/${project.id}/members` }
}

describe('the attacker', () => {
  test('a contributor cannot grant themselves maintainer, by role or by overlay, nor change anyone', async () => {
    const { owner, member, members } = await projectWith('viewer')
    expect((await owner.client.post(members, { userId: member.userId, role: 'contributor' })).status).toBe(201)
    const self = `${members}/${member.userId}`
    for (const body of [{ role: 'maintainer' }, { overlay: { grant: ['project:manage'], deny: [] } }]) {
      const res = await member.client.patch(self, body)
      expect([res.status, res.json.code]).toEqual([403, 'PERMISSION_DENIED'])
    }
    const viaPat = bearer(api.url, (await patFor(member.client, ['model:read'])).token)
    expect((await viaPat.patch(self, { role: 'maintainer' })).json.code).toBe('PERMISSION_DENIED')
    const add = await member.client.post(members, { userId: owner.userId, role: 'reader' })
    expect([add.status, add.json.code]).toEqual([403, 'PERMISSION_DENIED'])
    const row = (await owner.client.get(self)).json.data
    expect([row.role, row.overlay, row.version]).toEqual(['contributor', { grant: [], deny: [] }, 1])
  })

  test("another tenant's admin gets 404 listing, reading, adding, changing or removing a project's members", async () => {
    const { owner, project, member, members } = await projectWith('viewer')
    await owner.client.post(members, { userId: member.userId, role: 'reader' })
    const other = await tenantOwner(api.url)
    const admin = await memberOf(api.url, api.sql, other.tenantId, 'admin')
    for (const c of [other.client, admin.client]) {
      const answers = [
        await c.get(members),
        await c.get(`${members}/${member.userId}`),
        await c.post(members, { userId: admin.userId, role: 'reader' }),
        await c.patch(`${members}/${member.userId}`, { role: 'maintainer' }),
        await c.delete(`${members}/${member.userId}`),
      ]
      expect(answers.map((r) => `${r.status} ${r.json.code}`)).toEqual(Array(5).fill('404 NOT_FOUND'))
      expect(answers.map((r) => r.text.includes(member.email))).toEqual(Array(5).fill(false))
    }
    const [row] = await api.sql`select role, version from project_members where project_id = ${project.id}`
    expect(row).toEqual({ role: 'reader', version: 1 })
  })

  test('an overlay with unknown points is 400 VALIDATION_ERROR naming them; 10,000 entries is 400, never a 5xx', async () => {
    const { owner, member, members } = await projectWith('viewer')
    const unknown = await owner.client.post(members, { userId: member.userId, role: 'reader', overlay: { grant: ['model:delete'], deny: [] } })
    expect([unknown.status, unknown.json.code]).toEqual([400, 'VALIDATION_ERROR'])
    expect(JSON.stringify(unknown.json.errors)).toContain('model:delete')
    for (const overlay of [{ grant: Array(10_000).fill('model:write') }, { deny: Array.from({ length: 10_000 }, (_, i) => `p${i}:x`) }]) {
      const res = await owner.client.post(members, { userId: member.userId, role: 'reader', overlay })
      expect([res.status, res.json.code]).toEqual([400, 'VALIDATION_ERROR'])
    }
    expect((await owner.client.get(members)).json.data).toEqual([])
  })

  test('INVALID_PERMISSION_OVERLAY: a tenant-scope point, a point granted and denied, an unmet requires, a grant beyond your own', async () => {
    const { owner, project, member, members } = await projectWith('viewer')
    const refused = async (overlay: unknown, role = 'contributor', c = owner.client, userId = member.userId) => {
      const res = await c.post(members, { userId, role, overlay })
      return `${res.status} ${res.json.code}`
    }
    expect(await refused({ grant: ['tenant:manage'] })).toBe('400 INVALID_PERMISSION_OVERLAY')
    expect(await refused({ deny: ['apikey:write'] })).toBe('400 INVALID_PERMISSION_OVERLAY')
    expect(await refused({ grant: ['project:manage'], deny: ['project:manage'] })).toBe('400 INVALID_PERMISSION_OVERLAY')
    // A contributor denied model:read would write what it cannot read.
    expect(await refused({ deny: ['model:read'] })).toBe('400 INVALID_PERMISSION_OVERLAY')

    // A maintainer who is a tenant viewer, acting through a PAT that declares model:read and project:manage only:
    // it holds model:read and project:manage here, so it can neither grant model:write nor make a contributor.
    const maintainer = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    expect((await owner.client.post(members, { userId: maintainer.userId, role: 'maintainer' })).status).toBe(201)
    const third = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    // A tenant-wide PAT's scopes lack project:manage, which the maintainer's project role gives: not declared, not denied.
    const tenantWide = bearer(api.url, (await patFor(maintainer.client, ['model:read'])).token)
    expect(await refused({}, 'reader', tenantWide, third.userId)).toBe('403 PERMISSION_NOT_DECLARED')
    const narrow = bearer(api.url, (await patFor(maintainer.client, ['model:read', 'project:manage'], { projectId: project.id })).token)
    expect(await refused({ grant: ['model:write'] }, 'reader', narrow, third.userId)).toBe('400 INVALID_PERMISSION_OVERLAY')
    expect(await refused({}, 'contributor', narrow, third.userId)).toBe('400 INVALID_ROLE_TRANSITION')
    expect(await refused({}, 'reader', narrow, third.userId)).toBe('201 undefined')
    const rows = await api.sql`select user_id from project_members where project_id = ${project.id} order by created_at`
    expect(rows.map((r) => r.user_id)).toEqual([maintainer.userId, third.userId])
  })
})

describe('project members', () => {
  test('add, read with its ETag, list, change with If-Match, remove; each change audited', async () => {
    const { owner, project, member, members } = await projectWith('viewer')
    const added = await owner.client.post(
      members,
      { userId: member.userId, role: 'contributor', overlay: { grant: ['project:manage'] }, expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
      { 'idempotency-key': crypto.randomUUID() },
    )
    expect(added.status).toBe(201)
    expect(added.headers.get('etag')).toBe('"v1"')
    expect(added.json.data).toMatchObject({
      projectId: project.id,
      userId: member.userId,
      membershipId: member.membershipId,
      tenantRole: 'viewer',
      role: 'contributor',
      overlay: { grant: ['project:manage'], deny: [] },
      effectivePermissions: ['model:read', 'model:write', 'project:manage'],
      expired: false,
      grantedBy: owner.userId,
      version: 1,
    })
    const past = await owner.client.post(members, { userId: member.userId, role: 'reader', expiresAt: new Date(Date.now() - 1000).toISOString() })
    expect([past.status, past.json.code, past.json.errors?.[0]?.path]).toEqual([400, 'VALIDATION_ERROR', 'body.expiresAt'])
    const again = await owner.client.post(members, { userId: member.userId, role: 'reader' })
    expect([again.status, again.json.code]).toEqual([409, 'USER_ALREADY_MEMBER'])
    const stranger = await tenantOwner(api.url)
    const outsider = await owner.client.post(members, { userId: stranger.userId, role: 'reader' })
    expect([outsider.status, outsider.json.code]).toEqual([404, 'SUBJECT_NOT_IN_TENANT'])

    const one = await member.client.get(`${members}/${member.userId}`)
    expect([one.status, one.headers.get('etag')]).toEqual([200, '"v1"'])
    expect((await member.client.get(members)).json.data.map((m: { userId: string }) => m.userId)).toEqual([member.userId])

    const stale = await owner.client.patch(`${members}/${member.userId}`, { role: 'reader' }, { 'if-match': '"v9"' })
    expect([stale.status, stale.json.code]).toEqual([412, 'PRECONDITION_FAILED'])
    const changed = await owner.client.patch(
      `${members}/${member.userId}`,
      { overlay: { grant: [], deny: ['model:write'] }, expiresAt: null },
      { 'if-match': '"v1"' },
    )
    expect(changed.status).toBe(200)
    expect(changed.json.data).toMatchObject({ role: 'contributor', effectivePermissions: ['model:read'], expiresAt: null, version: 2 })
    expect(changed.headers.get('etag')).toBe('"v2"')

    const removed = await owner.client.delete(`${members}/${member.userId}`)
    expect([removed.status, removed.json.data.userId]).toEqual([200, member.userId])
    expect((await owner.client.get(`${members}/${member.userId}`)).status).toBe(404)

    await sealAudit(api.sql)
    const audit = await api.sql<{ action: string; subject_user_id: string; changes: any }[]>`
      select action, subject_user_id, changes from audit_log where chain = ${owner.tenantId} and target_id = ${project.id} and action like 'project_member.%' order by seq`
    expect(audit.map((a) => [a.action, a.subject_user_id])).toEqual([
      ['project_member.added', member.userId],
      ['project_member.updated', member.userId],
      ['project_member.removed', member.userId],
    ])
    expect(Object.keys(audit[1]!.changes).sort()).toEqual(['expiresAt', 'overlay'])
  })

  test('effective permissions: tenant role ∪ project role ∪ grant − deny; a viewer can contribute; owners and admins keep their reach', async () => {
    const { owner, member, members } = await projectWith('viewer')
    const admin = await memberOf(api.url, api.sql, owner.tenantId, 'admin')
    const billing = await memberOf(api.url, api.sql, owner.tenantId, 'billing_admin')
    const researcher = await memberOf(api.url, api.sql, owner.tenantId, 'researcher')
    // A billing admin holds no project point by role: without a membership it cannot even read the members.
    expect((await billing.client.get(members)).json.code).toBe('PERMISSION_DENIED')
    const add = (userId: string, role: string, overlay?: unknown) => owner.client.post(members, { userId, role, overlay })
    expect((await add(member.userId, 'contributor')).json.data.effectivePermissions).toEqual(['model:read', 'model:write'])
    expect((await add(billing.userId, 'reader', { grant: ['model:write'] })).json.data.effectivePermissions).toEqual(['model:read', 'model:write'])
    expect((await billing.client.get(members)).status).toBe(200)
    // A project role below what the tenant role gives everywhere is refused (GitLab's rule); equal or above is fine.
    expect((await add(researcher.userId, 'reader')).json.code).toBe('INVALID_ROLE_TRANSITION')
    expect((await add(admin.userId, 'contributor')).json.code).toBe('INVALID_ROLE_TRANSITION')
    expect((await add(researcher.userId, 'contributor', { deny: ['model:write'] })).json.data.effectivePermissions).toEqual(['model:read'])
    expect((await add(admin.userId, 'maintainer', { deny: ['model:write'] })).json.data.effectivePermissions).toEqual([
      'model:read',
      'model:write',
      'project:manage',
    ])
    // A maintainer who is a tenant viewer manages the project's members; a tenant admin does without any membership.
    const lead = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    expect((await add(lead.userId, 'maintainer')).status).toBe(201)
    expect((await lead.client.patch(`${members}/${member.userId}`, { role: 'maintainer' })).json.data.role).toBe('maintainer')
    const admin2 = await memberOf(api.url, api.sql, owner.tenantId, 'admin')
    expect((await admin2.client.delete(`${members}/${billing.userId}`)).status).toBe(200)
  })

  test('a member cannot change or remove a membership that gives more than they hold', async () => {
    const { owner, member, members } = await projectWith('viewer')
    const lead = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    await owner.client.post(members, { userId: lead.userId, role: 'reader', overlay: { grant: ['project:manage'] } })
    await owner.client.post(members, { userId: member.userId, role: 'contributor' })
    // lead holds model:read and project:manage here, not model:write, which member's contributor role gives.
    expect((await lead.client.patch(`${members}/${member.userId}`, { role: 'reader' })).json.code).toBe('INVALID_ROLE_TRANSITION')
    expect((await lead.client.delete(`${members}/${member.userId}`)).json.code).toBe('INVALID_ROLE_TRANSITION')
    expect((await owner.client.get(`${members}/${member.userId}`)).json.data.role).toBe('contributor')
  })
})

describe('expiry', () => {
  test('one second after expiresAt a project member is 403 PROJECT_MEMBERSHIP_EXPIRED, by session and by a cached PAT, with no eviction to help', async () => {
    const { owner, member, members } = await projectWith('viewer')
    const soon = new Date(Date.now() + 3_600_000).toISOString()
    expect((await owner.client.post(members, { userId: member.userId, role: 'maintainer', expiresAt: soon })).status).toBe(201)
    const pat = bearer(api.url, (await patFor(member.client, ['tenant:read', 'model:read'])).token)
    const third = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    const add = (c: typeof pat) => c.post(members, { userId: third.userId, role: 'reader' })
    // Live: the session manages members; the PAT (now in this replica's cache) does not declare project:manage.
    expect((await pat.get(members)).status).toBe(200)
    expect((await add(pat)).json.code).toBe('PERMISSION_NOT_DECLARED')
    expect((await add(member.client)).status).toBe(201)
    await owner.client.delete(`${members}/${third.userId}`)

    // Expired a second ago, written with triggers off: no change notification evicts anything. Held out of the
    // housekeeping purge, which may run at any moment on the shared database, while it is read.
    const { release } = await holdRows(api.deps.config.DATABASE_URL, (tx) => tx`select 1 from project_members where user_id = ${member.userId} for key share`)
    try {
      await api.sql.begin(async (tx) => {
        await tx`set local session_replication_role = replica`
        await tx`update project_members set expires_at = now() - interval '1 second' where user_id = ${member.userId}`
      })
      for (const c of [member.client, pat]) {
        const res = await add(c)
        expect([res.status, res.json.code]).toEqual([403, 'PROJECT_MEMBERSHIP_EXPIRED'])
      }
      // What the tenant role gives (a viewer reads models) stays; the membership's points are gone.
      const self = (await member.client.get(`${members}/${member.userId}`)).json.data
      expect([self.expired, self.effectivePermissions]).toEqual([true, ['model:read']])
      expect((await owner.client.get(members)).json.data.map((m: { userId: string }) => m.userId)).toEqual([member.userId])
    } finally {
      await release()
    }
  })
})

describe('the tenant membership underneath', () => {
  test('a member removed from the tenant leaves its projects: re-invited, they do not get the old project role back', async () => {
    const { owner, project, member, members } = await projectWith('viewer')
    await owner.client.post(members, { userId: member.userId, role: 'maintainer', overlay: { grant: [], deny: [] } })
    expect((await owner.client.delete(`/tenants/current/memberships/${member.membershipId}`)).status).toBe(200)
    expect((await owner.client.get(members)).json.data).toEqual([])
    // The same memberships row comes back active (as an accepted invitation makes it): no project membership with it.
    await api.sql`update memberships set status = 'active' where id = ${member.membershipId}`
    const [n] = await api.sql`select count(*)::int as n from project_members where project_id = ${project.id}`
    expect(n!.n).toBe(0)
  })
})
