import { describe, expect, test } from 'bun:test'
import { activeHolds, activeHoldsOnUser } from '../../api/legal-holds/queries'
import { useApi } from '../support/api'
import { sealAudit } from '../support/audit'
import { patFor, tenantOwner } from '../support/fixtures'
import { memberOf } from '../tenancy/members'

const api = useApi()
const PATH = '/tenants/current/legal-holds'
const hold = (scope: unknown, matter = 'Acme v. Robots') => ({ matter, reason: 'Litigation expected; preserve everything', scope })

describe('legal holds: the attacker first', () => {
  test('an admin (not an owner) can neither place, list, read nor release a hold; nor can an owner token without the scope', async () => {
    const owner = await tenantOwner(api.url)
    const admin = await memberOf(api.url, api.sql, owner.tenantId, 'admin')
    const placed = (await owner.client.post(PATH, hold({ kind: 'tenant' }))).json.data
    for (const res of [
      await admin.client.post(PATH, hold({ kind: 'tenant' })),
      await admin.client.get(PATH),
      await admin.client.get(`${PATH}/${placed.id}`),
      await admin.client.post(`${PATH}/${placed.id}/release`),
    ]) {
      expect([res.status, res.json.code]).toEqual([403, 'PERMISSION_DENIED'])
    }
    const narrow = owner.client.withBearer((await patFor(owner.client, ['tenant:read', 'tenant:manage'])).token)
    expect((await narrow.post(PATH, hold({ kind: 'tenant' }))).status).toBe(403)
    const count = async () => (await api.sql<{ n: number }[]>`select count(*)::int as n from legal_holds where tenant_id = ${owner.tenantId}`)[0]!.n
    expect(await count()).toBe(1)
    expect((await owner.client.get(`${PATH}/${placed.id}`)).json.data.status).toBe('active')
  })

  test("another tenant's owner cannot read, list or release our hold (404), nor hold our member or project", async () => {
    const ours = await tenantOwner(api.url)
    const theirs = await tenantOwner(api.url)
    const member = await memberOf(api.url, api.sql, ours.tenantId, 'researcher')
    const project = (await ours.client.post('/projects', { name: 'Ours', slug: `p-${crypto.randomUUID().slice(0, 8)}` })).json.data
    const placed = (await ours.client.post(PATH, hold({ kind: 'member', userId: member.userId }))).json.data

    const read = await theirs.client.get(`${PATH}/${placed.id}`)
    expect([read.status, read.json.code]).toEqual([404, 'LEGAL_HOLD_NOT_FOUND'])
    const release = await theirs.client.post(`${PATH}/${placed.id}/release`)
    expect([release.status, release.json.code]).toEqual([404, 'LEGAL_HOLD_NOT_FOUND'])
    expect((await theirs.client.get(PATH)).json.data).toEqual([])
    expect((await ours.client.get(`${PATH}/${placed.id}`)).json.data.status).toBe('active')

    const onOurMember = await theirs.client.post(PATH, hold({ kind: 'member', userId: member.userId }))
    expect([onOurMember.status, onOurMember.json.code]).toEqual([404, 'SUBJECT_NOT_IN_TENANT'])
    // Our project and a project that never existed answer alike: the id is not confirmed across tenants.
    const onOurProject = await theirs.client.post(PATH, hold({ kind: 'project', projectId: project.id }))
    const onNoProject = await theirs.client.post(PATH, hold({ kind: 'project', projectId: crypto.randomUUID() }))
    expect([onOurProject.status, onOurProject.json.code]).toEqual([404, 'LEGAL_HOLD_SCOPE_NOT_FOUND'])
    expect([onNoProject.status, onNoProject.json.code, onNoProject.json.detail]).toEqual([404, 'LEGAL_HOLD_SCOPE_NOT_FOUND', onOurProject.json.detail])
  })

  test('the held member is not told: nothing of the hold in their security activity, no mail', async () => {
    const owner = await tenantOwner(api.url)
    const member = await memberOf(api.url, api.sql, owner.tenantId, 'admin')
    const before = (await member.client.get('/users/me/security-activity')).json.data
    const placed = (await owner.client.post(PATH, hold({ kind: 'member', userId: member.userId }))).json.data
    expect((await owner.client.post(`${PATH}/${placed.id}/release`)).status).toBe(200)
    await owner.client.post(PATH, hold({ kind: 'tenant' }))
    await sealAudit(api.sql)
    const after = (await member.client.get('/users/me/security-activity')).json.data
    expect(after).toEqual(before)
    expect(JSON.stringify(after)).not.toContain('legal_hold')
    // The tenant's own trail names the hold and its kind, never whom it holds (an admin reads that trail).
    const trail = await api.sql<{ action: string; subject_user_id: string | null; details: unknown }[]>`
      select action, subject_user_id, details from audit_log where chain = ${owner.tenantId} and action like 'legal_hold.%' order by seq`
    expect([...trail]).toEqual([
      { action: 'legal_hold.placed', subject_user_id: null, details: { scopeKind: 'member' } },
      { action: 'legal_hold.released', subject_user_id: null, details: { scopeKind: 'member' } },
      { action: 'legal_hold.placed', subject_user_id: null, details: { scopeKind: 'tenant' } },
    ])
    expect(JSON.stringify(trail)).not.toContain(member.userId)
    const mails = (await (await fetch(`${process.env.MAIL_CATCHER_URL}/api/messages?to=${encodeURIComponent(member.email)}`)).json()) as unknown[]
    expect(mails).toEqual([])
  })
})

describe('legal holds', () => {
  test('place, read, list, release (twice: 409), audited', async () => {
    const owner = await tenantOwner(api.url)
    const c = owner.client
    const created = await c.post(PATH, hold({ kind: 'tenant' }))
    expect(created.status).toBe(201)
    const h = created.json.data
    expect(h).toMatchObject({
      tenantId: owner.tenantId,
      matter: 'Acme v. Robots',
      scope: { kind: 'tenant', userId: null, projectId: null },
      status: 'active',
      createdBy: owner.userId,
      releasedAt: null,
      releasedBy: null,
    })
    expect((await c.get(`${PATH}/${h.id}`)).json.data).toEqual(h)
    const released = await c.post(`${PATH}/${h.id}/release`)
    expect(released.status).toBe(200)
    expect(released.json.data).toMatchObject({ id: h.id, status: 'released', releasedBy: owner.userId })
    const again = await c.post(`${PATH}/${h.id}/release`)
    expect([again.status, again.json.code]).toEqual([409, 'LEGAL_HOLD_ALREADY_RELEASED'])
    for (const id of [crypto.randomUUID(), 'not-a-uuid']) {
      expect((await c.get(`${PATH}/${id}`)).json.code).toBe('LEGAL_HOLD_NOT_FOUND')
      expect((await c.post(`${PATH}/${id}/release`)).json.code).toBe('LEGAL_HOLD_NOT_FOUND')
    }
    await sealAudit(api.sql)
    const audit = await api.sql<{ action: string }[]>`select action from audit_log where chain = ${owner.tenantId} and target_id = ${h.id} order by seq`
    expect(audit.map((a) => a.action)).toEqual(['legal_hold.placed', 'legal_hold.released'])
  })

  test('exactly one scope: none, two or an unknown kind is LEGAL_HOLD_SCOPE_INVALID; a non-member SUBJECT_NOT_IN_TENANT', async () => {
    const owner = await tenantOwner(api.url)
    const member = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    const project = (await owner.client.post('/projects', { name: 'P', slug: `p-${crypto.randomUUID().slice(0, 8)}` })).json.data
    const stranger = await tenantOwner(api.url)
    const invalid = [
      undefined,
      { kind: 'organisation' },
      { kind: 'tenant', userId: member.userId },
      { kind: 'member', userId: member.userId, projectId: project.id },
      { kind: 'member' },
      { kind: 'project' },
      { kind: 'project', projectId: project.id, userId: member.userId },
    ]
    for (const scope of invalid) {
      const res = await owner.client.post(PATH, hold(scope))
      expect({ scope, status: res.status, code: res.json.code }).toEqual({ scope, status: 400, code: 'LEGAL_HOLD_SCOPE_INVALID' })
    }
    const outsider = await owner.client.post(PATH, hold({ kind: 'member', userId: stranger.userId }))
    expect([outsider.status, outsider.json.code]).toEqual([404, 'SUBJECT_NOT_IN_TENANT'])
    await api.sql`update memberships set status = 'removed' where id = ${member.membershipId}`
    expect((await owner.client.post(PATH, hold({ kind: 'member', userId: member.userId }))).json.code).toBe('SUBJECT_NOT_IN_TENANT')
    const count = async () => (await api.sql<{ n: number }[]>`select count(*)::int as n from legal_holds where tenant_id = ${owner.tenantId}`)[0]!.n
    expect(await count()).toBe(0)
    const onProject = await owner.client.post(PATH, hold({ kind: 'project', projectId: project.id }))
    expect([onProject.status, onProject.json.data.scope]).toEqual([201, { kind: 'project', userId: null, projectId: project.id }])
  })

  test('an Idempotency-Key replays the first placement; lists page and filter by status', async () => {
    const owner = await tenantOwner(api.url)
    const key = crypto.randomUUID()
    const first = await owner.client.post(PATH, hold({ kind: 'tenant' }), { 'idempotency-key': key })
    const second = await owner.client.post(PATH, hold({ kind: 'tenant' }), { 'idempotency-key': key })
    expect([first.status, second.status, second.json.data.id]).toEqual([201, 201, first.json.data.id])
    const other = (await owner.client.post(PATH, hold({ kind: 'tenant' }, 'Second matter'))).json.data
    await owner.client.post(`${PATH}/${first.json.data.id}/release`)
    const p1 = await owner.client.get(`${PATH}?pageSize=1`)
    expect(p1.json.data.map((h: { id: string }) => h.id)).toEqual([other.id])
    const p2 = await owner.client.get(`${PATH}?pageSize=1&pageToken=${p1.json.nextPageToken}`)
    expect(p2.json.data.map((h: { id: string }) => h.id)).toEqual([first.json.data.id])
    expect((await owner.client.get(`${PATH}?status=active`)).json.data.map((h: { id: string }) => h.id)).toEqual([other.id])
    expect((await owner.client.get(`${PATH}?status=released`)).json.data.map((h: { id: string }) => h.id)).toEqual([first.json.data.id])
  })

  test('activeHolds names the holds covering a subject (a tenant hold covers all); activeHoldsOnUser spans tenants', async () => {
    const owner = await tenantOwner(api.url)
    const a = await memberOf(api.url, api.sql, owner.tenantId, 'researcher')
    const b = await memberOf(api.url, api.sql, owner.tenantId, 'researcher')
    const project = (await owner.client.post('/projects', { name: 'P', slug: `p-${crypto.randomUUID().slice(0, 8)}` })).json.data
    const onA = (await owner.client.post(PATH, hold({ kind: 'member', userId: a.userId }))).json.data
    const onP = (await owner.client.post(PATH, hold({ kind: 'project', projectId: project.id }))).json.data
    const ids = (rows: { id: string }[]) => rows.map((r) => r.id)
    expect(ids(await activeHolds(api.sql, owner.tenantId, { userId: a.userId }))).toEqual([onA.id])
    expect(ids(await activeHolds(api.sql, owner.tenantId, { userId: b.userId }))).toEqual([])
    expect(ids(await activeHolds(api.sql, owner.tenantId, { projectId: project.id }))).toEqual([onP.id])
    expect(ids(await activeHolds(api.sql, owner.tenantId))).toEqual([onA.id, onP.id])
    expect(ids(await activeHoldsOnUser(api.sql, a.userId))).toEqual([onA.id])
    expect(ids(await activeHoldsOnUser(api.sql, b.userId))).toEqual([])

    const whole = (await owner.client.post(PATH, hold({ kind: 'tenant' }))).json.data
    expect(ids(await activeHolds(api.sql, owner.tenantId, { userId: b.userId }))).toEqual([whole.id])
    expect(ids(await activeHoldsOnUser(api.sql, b.userId))).toEqual([whole.id])
    await owner.client.post(`${PATH}/${whole.id}/release`)
    await owner.client.post(`${PATH}/${onA.id}/release`)
    expect(ids(await activeHolds(api.sql, owner.tenantId, { userId: a.userId }))).toEqual([])
    expect(ids(await activeHoldsOnUser(api.sql, a.userId))).toEqual([])
  })
})
