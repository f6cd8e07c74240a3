import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { patFor, tenantOwner, uniqueEmail } from '../support/fixtures'
import { bearer, memberOf } from './members'

const api = useApi()

describe('GET /tenants/current/memberships', () => {
  test('filters, q, sorts, totalCount and keyset pages bound to the query', async () => {
    const owner = await tenantOwner(api.url)
    const tag = `zq${Date.now().toString(36)}`
    const roles = ['viewer', 'viewer', 'researcher', 'admin', 'viewer', 'billing_admin']
    const members = []
    for (const [i, role] of roles.entries()) members.push(await memberOf(api.url, api.sql, owner.tenantId, role, `${tag}-${i}@example.test`))
    await api.sql`update users set display_name = 'Grace Hopper' where id = ${members[2]!.userId}`
    await api.sql`update memberships set status = 'disabled' where id = ${members[1]!.membershipId}`
    await api.sql`update memberships set expires_at = now() - interval '1 minute' where id = ${members[4]!.membershipId}`
    await api.sql`update memberships set status = 'removed' where id = ${members[5]!.membershipId}`
    const c = owner.client

    const all = await c.get('/tenants/current/memberships')
    expect(all.status).toBe(200)
    expect(all.json.meta).toMatchObject({ pageSize: 25, totalCount: 6 }) // the owner + 5 not removed
    expect(all.json.data[0]).toMatchObject({ userId: owner.userId, role: 'owner', status: 'active', email: owner.email })

    const viewers = await c.get('/tenants/current/memberships?role=viewer')
    expect(viewers.json.meta.totalCount).toBe(3)
    expect(viewers.json.data.map((m: any) => m.status).sort()).toEqual(['active', 'disabled', 'expired'])
    expect((await c.get('/tenants/current/memberships?status=expired')).json.data.map((m: any) => m.id)).toEqual([members[4]!.membershipId])
    expect((await c.get('/tenants/current/memberships?status=disabled')).json.data.map((m: any) => m.id)).toEqual([members[1]!.membershipId])
    expect((await c.get('/tenants/current/memberships?status=removed')).json.data.map((m: any) => m.id)).toEqual([members[5]!.membershipId])
    const active = await c.get('/tenants/current/memberships?status=active&role=viewer')
    expect(active.json.meta.totalCount).toBe(1)
    expect(active.json.data[0].id).toBe(members[0]!.membershipId)

    const byName = await c.get('/tenants/current/memberships?q=grace%20HOP')
    expect(byName.json.data.map((m: any) => m.id)).toEqual([members[2]!.membershipId])
    expect((await c.get(`/tenants/current/memberships?q=${tag}`)).json.meta.totalCount).toBe(5)
    // LIKE metacharacters are literal.
    expect((await c.get('/tenants/current/memberships?q=%25')).json.meta.totalCount).toBe(0)

    const byRole = await c.get('/tenants/current/memberships?sortBy=role')
    expect(byRole.json.data.map((m: any) => m.role)).toEqual(['owner', 'admin', 'researcher', 'viewer', 'viewer', 'viewer'])
    const byEmailDesc = await c.get(`/tenants/current/memberships?sortBy=email&sortOrder=desc&q=${tag}`)
    expect(byEmailDesc.json.data.map((m: any) => m.email)).toEqual([4, 3, 2, 1, 0].map((i) => `${tag}-${i}@example.test`))

    // Every sort pages through the same set, each item once, with totalCount on every page.
    for (const sort of ['sortBy=createdAt', 'sortBy=email', 'sortBy=role&sortOrder=desc', 'sortBy=displayName']) {
      const seen: string[] = []
      let token: string | undefined
      do {
        const res = await c.get(`/tenants/current/memberships?${sort}&pageSize=2${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`)
        expect(res.status).toBe(200)
        expect(res.json.meta.totalCount).toBe(6)
        seen.push(...res.json.data.map((m: any) => m.id))
        token = res.json.nextPageToken
      } while (token)
      expect({ sort, seen: seen.length, distinct: new Set(seen).size }).toEqual({ sort, seen: 6, distinct: 6 })
    }

    const first = await c.get('/tenants/current/memberships?pageSize=2&role=viewer')
    const token = encodeURIComponent(first.json.nextPageToken)
    for (const other of ['role=admin', 'sortBy=email&role=viewer', 'role=viewer&q=x', 'role=viewer&sortOrder=desc']) {
      const res = await c.get(`/tenants/current/memberships?pageSize=2&${other}&pageToken=${token}`)
      expect(res.status).toBe(400)
      expect(res.json.code).toBe('PAGE_TOKEN_QUERY_MISMATCH')
    }
    expect((await c.get(`/tenants/current/memberships?pageSize=2&role=viewer&pageToken=${token}`)).status).toBe(200)
    expect((await c.get('/tenants/current/memberships?pageToken=abc.def')).json.code).toBe('PAGE_TOKEN_INVALID')
    expect((await c.get('/tenants/current/memberships?pageSize=101')).json.code).toBe('PAGE_SIZE_TOO_LARGE')
    expect((await c.get('/tenants/current/memberships?sortBy=password')).json.code).toBe('VALIDATION_ERROR')
    // Another tenant's owner cannot replay the token: it is bound to the tenant.
    const other = await tenantOwner(api.url)
    expect((await other.client.get(`/tenants/current/memberships?pageSize=2&role=viewer&pageToken=${token}`)).json.code).toBe('PAGE_TOKEN_QUERY_MISMATCH')
  })

  test('needs tenant:manage', async () => {
    const owner = await tenantOwner(api.url)
    const viewer = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    const res = await viewer.client.get('/tenants/current/memberships')
    expect(res.status).toBe(403)
    expect(res.json.code).toBe('PERMISSION_DENIED')
  })
})

describe('PATCH /tenants/current/memberships/{id}', () => {
  test('changes role, status and expiry with If-Match; a stale tag is 412 and writes nothing', async () => {
    const owner = await tenantOwner(api.url)
    const m = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    const path = `/tenants/current/memberships/${m.membershipId}`
    const got = await owner.client.get(path)
    const etag = got.headers.get('etag')!
    expect(etag).toMatch(/^"v\d+"$/)
    const patched = await owner.client.patch(path, { role: 'researcher' }, { 'if-match': etag })
    expect(patched.status).toBe(200)
    expect(patched.json.data).toMatchObject({ id: m.membershipId, role: 'researcher', status: 'active' })
    expect(patched.headers.get('etag')).not.toBe(etag)
    const stale = await owner.client.patch(path, { role: 'admin' }, { 'if-match': etag })
    expect(stale.status).toBe(412)
    expect(stale.json.code).toBe('PRECONDITION_FAILED')
    expect((await owner.client.get(path)).json.data.role).toBe('researcher')
    expect((await owner.client.patch(path, { role: 'admin' }, { 'if-match': 'v1' })).json.code).toBe('IF_MATCH_INVALID')

    const later = new Date(Date.now() + 86_400_000).toISOString()
    expect((await owner.client.patch(path, { expiresAt: later }, { 'if-match': '*' })).json.data.expiresAt).toBe(later)
    expect((await owner.client.patch(path, { status: 'disabled' })).json.data.status).toBe('disabled')
    expect((await m.client.get('/tenants/current/memberships')).json.code).toBe('MEMBERSHIP_DISABLED')
    await owner.client.patch(path, { status: 'active', expiresAt: new Date(Date.now() - 1000).toISOString() })
    expect((await owner.client.get(path)).json.data.status).toBe('expired')
    expect((await m.client.patch('/users/me', { displayName: 'x' })).json.code).toBe('MEMBERSHIP_EXPIRED')
    expect((await owner.client.patch(path, { expiresAt: null })).json.data.status).toBe('active')

    expect((await owner.client.patch(path, {})).json.code).toBe('VALIDATION_ERROR')
    expect((await owner.client.patch(path, { status: 'removed' })).json.code).toBe('VALIDATION_ERROR')
    for (const id of [crypto.randomUUID(), 'not-a-uuid']) {
      const res = await owner.client.patch(`/tenants/current/memberships/${id}`, { role: 'viewer' })
      expect(res.status).toBe(404)
      expect(res.json.code).toBe('NOT_FOUND')
    }
  })

  test('role model: only owners touch the owner role; removed memberships are final (INVALID_ROLE_TRANSITION)', async () => {
    const owner = await tenantOwner(api.url)
    const admin = await memberOf(api.url, api.sql, owner.tenantId, 'admin')
    const viewer = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    const promote = await admin.client.patch(`/tenants/current/memberships/${viewer.membershipId}`, { role: 'owner' })
    expect(promote.status).toBe(400)
    expect(promote.json.code).toBe('INVALID_ROLE_TRANSITION')
    expect((await admin.client.patch(`/tenants/current/memberships/${owner.membershipId}`, { status: 'disabled' })).json.code).toBe('INVALID_ROLE_TRANSITION')
    expect((await admin.client.delete(`/tenants/current/memberships/${owner.membershipId}`)).json.code).toBe('INVALID_ROLE_TRANSITION')
    // An admin may manage non-owners; an owner may grant ownership.
    expect((await admin.client.patch(`/tenants/current/memberships/${viewer.membershipId}`, { role: 'researcher' })).status).toBe(200)
    expect((await owner.client.patch(`/tenants/current/memberships/${admin.membershipId}`, { role: 'owner' })).json.data.role).toBe('owner')
    expect((await owner.client.delete(`/tenants/current/memberships/${viewer.membershipId}`)).status).toBe(200)
    expect((await owner.client.patch(`/tenants/current/memberships/${viewer.membershipId}`, { role: 'viewer' })).json.code).toBe('INVALID_ROLE_TRANSITION')
  })

  test('the last active owner cannot be demoted, disabled, expired or removed (409 LAST_OWNER_PROTECTION)', async () => {
    const owner = await tenantOwner(api.url)
    const path = `/tenants/current/memberships/${owner.membershipId}`
    for (const body of [{ role: 'admin' }, { status: 'disabled' }, { expiresAt: new Date(Date.now() + 3600_000).toISOString() }]) {
      const res = await owner.client.patch(path, body)
      expect(res.status).toBe(409)
      expect(res.json.code).toBe('LAST_OWNER_PROTECTION')
    }
    expect((await owner.client.delete(path)).json.code).toBe('LAST_OWNER_PROTECTION')
    // A disabled second owner does not count as an active one.
    const second = await memberOf(api.url, api.sql, owner.tenantId, 'owner')
    await api.sql`update memberships set status = 'disabled' where id = ${second.membershipId}`
    expect((await owner.client.patch(path, { role: 'admin' })).json.code).toBe('LAST_OWNER_PROTECTION')
    await api.sql`update memberships set status = 'active' where id = ${second.membershipId}`
    expect((await owner.client.patch(path, { role: 'admin' })).status).toBe(200)
  })

  test('two owners cannot expire each other: an owner whose membership ends does not count as the one that remains', async () => {
    const a = await tenantOwner(api.url)
    const b = await memberOf(api.url, api.sql, a.tenantId, 'owner')
    const inAMonth = new Date(Date.now() + 30 * 86400_000).toISOString()
    expect((await a.client.patch(`/tenants/current/memberships/${b.membershipId}`, { expiresAt: inAMonth })).status).toBe(200)
    // Every reducing change of the one lasting owner is refused while the other owner's membership ends.
    for (const body of [{ expiresAt: inAMonth }, { role: 'admin' }, { status: 'disabled' }]) {
      const res = await b.client.patch(`/tenants/current/memberships/${a.membershipId}`, body)
      expect([res.status, res.json.code]).toEqual([409, 'LAST_OWNER_PROTECTION'])
    }
    expect((await b.client.delete(`/tenants/current/memberships/${a.membershipId}`)).json.code).toBe('LAST_OWNER_PROTECTION')
    const [row] = await api.sql<{ expires_at: Date | null; role: string }[]>`select expires_at, role from memberships where id = ${a.membershipId}`
    expect(row).toEqual({ expires_at: null, role: 'owner' })
    // Once the other owner lasts again, the change is allowed.
    expect((await a.client.patch(`/tenants/current/memberships/${b.membershipId}`, { expiresAt: null })).status).toBe(200)
    expect((await b.client.patch(`/tenants/current/memberships/${a.membershipId}`, { expiresAt: inAMonth })).status).toBe(200)
  })

  test('concurrent demotions of two owners: exactly one wins, one active owner remains', async () => {
    for (let round = 0; round < 5; round++) {
      const a = await tenantOwner(api.url)
      const b = await memberOf(api.url, api.sql, a.tenantId, 'owner')
      const results = await Promise.all([
        a.client.patch(`/tenants/current/memberships/${b.membershipId}`, { role: 'viewer' }),
        b.client.patch(`/tenants/current/memberships/${a.membershipId}`, { role: 'viewer' }),
        a.client.delete(`/tenants/current/memberships/${a.membershipId}`),
        b.client.delete(`/tenants/current/memberships/${b.membershipId}`),
      ])
      const [{ n }] = (await api.sql<
        { n: number }[]
      >`select count(*)::int as n from memberships where tenant_id = ${a.tenantId} and role = 'owner' and status = 'active'`) as unknown as [{ n: number }]
      expect(n).toBe(1)
      expect(results.filter((r) => r.status === 200).length).toBe(1)
      const refused = results.filter((r) => r.status !== 200).map((r) => r.json.code)
      // A request whose credential is read after the removal of its own membership committed finds its session out of
      // the tenant (the removal detaches it): TENANT_REQUIRED. Read before, the service's lock finds it removed.
      const allowed = ['LAST_OWNER_PROTECTION', 'PERMISSION_DENIED', 'MEMBERSHIP_NOT_FOUND', 'INVALID_ROLE_TRANSITION', 'TENANT_REQUIRED']
      expect({ refused, unexpected: refused.filter((code) => !allowed.includes(code)) }).toEqual({ refused, unexpected: [] })
    }
  })

  test('demoting a member shrinks their tokens at once', async () => {
    const owner = await tenantOwner(api.url)
    const m = await memberOf(api.url, api.sql, owner.tenantId, 'admin')
    const { token } = await patFor(m.client, ['tenant:read', 'tenant:manage', 'apikey:manage'])
    const pat = bearer(api.url, token)
    expect((await pat.get('/tenants/current/memberships')).status).toBe(200)
    await owner.client.patch(`/tenants/current/memberships/${m.membershipId}`, { role: 'viewer' })
    const denied = await pat.get('/tenants/current/memberships')
    expect(denied.status).toBe(403)
    expect(denied.json.code).toBe('PERMISSION_DENIED')
    expect((await pat.get('/tokens/self')).json.data.effectivePermissions).toEqual(['tenant:read'])
  })
})

describe('DELETE /tenants/current/memberships/{id}', () => {
  test('answers {removed: true}; sessions lose the tenant and PATs for it are revoked, together', async () => {
    const owner = await tenantOwner(api.url)
    const m = await memberOf(api.url, api.sql, owner.tenantId, 'researcher', uniqueEmail('leaver'))
    const { token } = await patFor(m.client, ['tenant:read'])
    expect((await bearer(api.url, token).get('/tokens/self')).status).toBe(200)
    const etag = (await owner.client.get(`/tenants/current/memberships/${m.membershipId}`)).headers.get('etag')!
    await api.sql`update memberships set version = version + 1 where id = ${m.membershipId}`
    expect((await owner.client.delete(`/tenants/current/memberships/${m.membershipId}`, { 'if-match': etag })).status).toBe(412)
    const res = await owner.client.delete(`/tenants/current/memberships/${m.membershipId}`)
    expect(res.status).toBe(200)
    expect(res.json.data).toEqual({ removed: true })
    expect((await bearer(api.url, token).get('/tokens/self')).json.code).toBe('TOKEN_REVOKED')
    const me = await m.client.get('/tokens/self')
    expect(me.status).toBe(200)
    expect(me.json.data.tenantId).toBeNull()
    expect((await m.client.get('/users/me')).json.data.memberships).toEqual([])
    expect((await owner.client.get('/tenants/current/memberships?status=removed')).json.data.map((x: any) => x.id)).toEqual([m.membershipId])
    expect((await owner.client.delete(`/tenants/current/memberships/${crypto.randomUUID()}`)).status).toBe(404)
  })

  test('a failed revocation rolls the removal back (one transaction)', async () => {
    const owner = await tenantOwner(api.url)
    const m = await memberOf(api.url, api.sql, owner.tenantId, 'researcher')
    const { token } = await patFor(m.client, ['tenant:read'])
    // A trigger that fails the PAT revocation, the last step: nothing of the removal may stay.
    const fn = `fail_revoke_${m.membershipId.replaceAll('-', '')}`
    await api.sql.unsafe(`create function ${fn}() returns trigger language plpgsql as $$ begin
      if new.membership_id = '${m.membershipId}' then raise exception 'boom'; end if; return new; end $$`)
    await api.sql.unsafe(`create trigger ${fn} before update on api_keys for each row execute function ${fn}()`)
    try {
      expect((await owner.client.delete(`/tenants/current/memberships/${m.membershipId}`)).status).toBe(500)
    } finally {
      await api.sql.unsafe(`drop trigger ${fn} on api_keys; drop function ${fn}()`)
    }
    const [row] = await api.sql`select status from memberships where id = ${m.membershipId}`
    expect(row!.status).toBe('active')
    expect((await m.client.get('/tokens/self')).json.data.tenantId).toBe(owner.tenantId)
    expect((await bearer(api.url, token).get('/tokens/self')).status).toBe(200)
  })
})
