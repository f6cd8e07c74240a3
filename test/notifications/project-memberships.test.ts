// The project memberships' notices (issue 36): added (the add's transaction), expiring 7 days ahead (once for each
// expiry, written by the housekeeping schedule's batches) and expired (the removal's transaction). The clock is moved
// in the database: expires_at is set relative to now(), never waited for. The batches run here as the housekeeping
// activities run them (test/temporal/housekeeping.test.ts runs them on the worker).
import { describe, expect, test } from 'bun:test'
import { removeExpiredProjectMembers, warnExpiringProjectMembers } from '../../activities/project-member-expiry'
import type { Client } from '../support/client'
import { useApi } from '../support/api'
import { tenantOwner } from '../support/fixtures'
import { memberOf } from '../tenancy/members'

const api = useApi()
const slug = () => `pn-${crypto.randomUUID().slice(0, 8)}`
const PROJECT_KINDS = ['project.membership_added', 'project.membership_expiring', 'project.membership_expired']

type Note = { kind: string; tenantId: string; fields: Record<string, unknown>; text: string }
const projectNotes = async (client: Client): Promise<Note[]> =>
  ((await client.get('/users/me/notifications?pageSize=100')).json.data as Note[]).filter((n) => PROJECT_KINDS.includes(n.kind)).reverse()

const warn = () => warnExpiringProjectMembers(api.deps, 1000)
const removeExpired = () => removeExpiredProjectMembers(api.deps, 1000)
/** The membership's expiry, moved in database time. */
const expireIn = (projectId: string, userId: string, interval: string) =>
  api.sql`update project_members set expires_at = date_trunc('milliseconds', now() + ${interval}::interval) where project_id = ${projectId} and user_id = ${userId}`
const expiryOf = async (projectId: string, userId: string) =>
  (await api.sql<{ e: Date }[]>`select expires_at as e from project_members where project_id = ${projectId} and user_id = ${userId}`)[0]?.e ?? null

async function projectWith(...roles: string[]) {
  const owner = await tenantOwner(api.url)
  const project = (await owner.client.post('/projects', { name: `Arm ${slug()}`, slug: slug() })).json.data as { id: string; name: string }
  const members = []
  for (const role of roles) members.push(await memberOf(api.url, api.sql, owner.tenantId, role))
  const add = async (userId: string, body: Record<string, unknown> = {}) => {
    const res = await owner.client.post(`/projects/${project.id}/members`, { userId, role: 'contributor', ...body })
    expect(res.status).toBe(201)
    return res.json.data
  }
  return { owner, project, members, add }
}

describe('project membership notices', () => {
  test('added: the member is told in the add, with who granted it; a refused add tells no one', async () => {
    const { owner, project, members, add } = await projectWith('viewer')
    const m = members[0]!
    const expiresAt = new Date(Date.now() + 30 * 86_400_000).toISOString()
    await add(m.userId, { expiresAt })
    const again = await owner.client.post(`/projects/${project.id}/members`, { userId: m.userId, role: 'reader' })
    expect([again.status, again.json.code]).toEqual([409, 'USER_ALREADY_MEMBER'])
    const notes = await projectNotes(m.client)
    expect(notes.map((n) => [n.kind, n.tenantId, n.fields])).toEqual([
      [
        'project.membership_added',
        owner.tenantId,
        { projectId: project.id, projectName: project.name, role: 'contributor', expiresAt, grantedBy: owner.userId },
      ],
    ])
    expect(notes[0]!.text).toBe(`You were added to the project ${project.name} as contributor until ${expiresAt}`)
    expect(await projectNotes(owner.client)).toEqual([])
  })

  test('expiring: one warning 7 days ahead, however often the schedule runs; a moved expiry is warned again', async () => {
    const { owner, project, members, add } = await projectWith('viewer', 'viewer')
    const [m, later] = members as [(typeof members)[0], (typeof members)[0]]
    await add(m.userId, { expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString() })
    await add(later.userId, { expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString() })
    // Eight days out is not due yet; six is.
    await expireIn(project.id, later.userId, '8 days')
    await expireIn(project.id, m.userId, '6 days')
    await warn()
    await warn()
    const first = (await expiryOf(project.id, m.userId))!.toISOString()
    const expiring = async (c: Client) => (await projectNotes(c)).filter((n) => n.kind === 'project.membership_expiring')
    expect((await expiring(m.client)).map((n) => n.fields)).toEqual([
      { projectId: project.id, projectName: project.name, role: 'contributor', expiresAt: first },
    ])
    expect(await expiring(later.client)).toEqual([])
    // The warning is mailed by default (the add is not): its hour's mail slot was taken.
    const mailed = await api.sql<{ kind: string }[]>`select kind from notification_mail_throttle where user_id = ${m.userId} order by kind`
    expect(mailed.map((r) => r.kind)).toEqual(['project.membership_expiring'])

    // The clock moves a day: the later one is due now, and the first is not warned twice.
    await expireIn(project.id, later.userId, '7 days')
    await warn()
    expect((await expiring(later.client)).length).toBe(1)
    expect((await expiring(m.client)).length).toBe(1)

    // The owner moves the first expiry: a warning is due for the new date, once.
    const moved = new Date(Date.now() + 3 * 86_400_000).toISOString()
    expect((await owner.client.patch(`/projects/${project.id}/members/${m.userId}`, { expiresAt: moved })).status).toBe(200)
    await warn()
    await warn()
    expect((await expiring(m.client)).map((n) => n.fields.expiresAt)).toEqual([first, moved])
    // ... and back to where it was: that is a move too.
    expect((await owner.client.patch(`/projects/${project.id}/members/${m.userId}`, { expiresAt: first })).status).toBe(200)
    await warn()
    expect((await expiring(m.client)).map((n) => n.fields.expiresAt)).toEqual([first, moved, first])
  })

  test('no warning for a member removed from the project or the tenant, or disabled in it, before it was due', async () => {
    const { owner, project, members, add } = await projectWith('viewer', 'viewer', 'viewer')
    const [fromProject, fromTenant, disabled] = members as [(typeof members)[0], (typeof members)[0], (typeof members)[0]]
    for (const m of members) await add(m.userId, { expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString() })
    expect((await owner.client.delete(`/projects/${project.id}/members/${fromProject.userId}`)).status).toBe(200)
    expect((await owner.client.delete(`/tenants/current/memberships/${fromTenant.membershipId}`)).status).toBe(200)
    await api.sql`update memberships set status = 'disabled' where id = ${disabled.membershipId}`
    await api.sql`update project_members set expires_at = now() + interval '2 days' where project_id = ${project.id}`
    await warn()
    for (const m of members) expect((await projectNotes(m.client)).map((n) => n.kind)).toEqual(['project.membership_added'])
    // Enabled again before the expiry, the member is warned at the next run.
    await api.sql`update memberships set status = 'active' where id = ${disabled.membershipId}`
    await warn()
    expect((await projectNotes(disabled.client)).map((n) => n.kind)).toEqual(['project.membership_added', 'project.membership_expiring'])
  })

  test('expired: told in the removal, once, with when it ended', async () => {
    const { project, members, add } = await projectWith('viewer')
    const m = members[0]!
    await add(m.userId, { expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString() })
    await expireIn(project.id, m.userId, '-1 second')
    const ended = (await expiryOf(project.id, m.userId))!.toISOString()
    await removeExpired()
    await removeExpired()
    expect(await expiryOf(project.id, m.userId)).toBeNull()
    const notes = await projectNotes(m.client)
    expect(notes.map((n) => [n.kind, n.fields])).toEqual([
      ['project.membership_added', expect.anything()],
      ['project.membership_expired', { projectId: project.id, projectName: project.name, role: 'contributor', expiredAt: ended }],
    ])
  })

  test('a member under a legal hold is warned and told of the expiry as anyone else', async () => {
    const { owner, project, members, add } = await projectWith('viewer')
    const m = members[0]!
    const hold = await owner.client.post('/tenants/current/legal-holds', { matter: 'm', reason: 'r', scope: { kind: 'member', userId: m.userId } })
    expect(hold.status).toBe(201)
    await add(m.userId, { expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString() })
    await expireIn(project.id, m.userId, '1 day')
    await warn()
    await expireIn(project.id, m.userId, '-1 second')
    await removeExpired()
    expect((await projectNotes(m.client)).map((n) => n.kind)).toEqual(PROJECT_KINDS)
  })
})
