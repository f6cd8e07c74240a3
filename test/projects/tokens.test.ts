// Tokens that say what they may do (issue 36): PERMISSION_NOT_DECLARED when only a PAT's scopes lack the point its
// operation needs, PERMISSION_DENIED when the member's role does; and project-scoped tokens.
import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { patFor, tenantOwner } from '../support/fixtures'
import { holdRows } from '../support/row-hold'
import { bearer, memberOf } from '../tenancy/members'

const api = useApi()

describe('PERMISSION_NOT_DECLARED and PERMISSION_DENIED', () => {
  test("not declared: the role gives the point, the token's scopes do not; denied: the role does not give it", async () => {
    const owner = await tenantOwner(api.url)
    const viewer = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    const pat = bearer(api.url, (await patFor(viewer.client, ['tenant:read'])).token)
    // A viewer's role gives model:read and apikey:read; this token declares neither.
    for (const res of [await pat.get('/embodiment-profiles'), await pat.get('/api-keys')]) {
      expect([res.status, res.json.code]).toEqual([403, 'PERMISSION_NOT_DECLARED'])
    }
    // A viewer's role gives neither model:write nor tenant:manage: the same token, and the viewer's session, are denied.
    for (const c of [pat, viewer.client]) {
      for (const res of [await c.post('/projects', { name: 'x', slug: 'x' }), await c.get('/tenants/current/memberships')]) {
        expect([res.status, res.json.code]).toEqual([403, 'PERMISSION_DENIED'])
      }
    }
    // A session never has undeclared points: what its role lacks is denied.
    expect((await viewer.client.get('/api-keys')).status).toBe(200)
  })

  test("each operation's description says which 403 codes it can answer", async () => {
    const doc = (await (await fetch(`${api.url}/v1/openapi.json`)).json()) as any
    const ops = Object.values(doc.paths as Record<string, Record<string, any>>).flatMap((o) => Object.values(o))
    // Those whose auth names permission points (POST /tenants names one in x-permissions but admits any user).
    const permissioned = ops.filter((op) => op['x-permissions']?.length > 0 && /^(Credential optional\. )?Requires /.test(op.description))
    expect(permissioned.length).toBeGreaterThan(50)
    for (const op of permissioned) {
      expect({ op: op.operationId, says: /PERMISSION_DENIED.*PERMISSION_NOT_DECLARED/.test(op.description) }).toEqual({ op: op.operationId, says: true })
    }
  })
})

describe('project-scoped tokens', () => {
  async function setting() {
    const owner = await tenantOwner(api.url)
    const [p, q] = await Promise.all(
      ['p', 'q'].map(async (n) => (await owner.client.post('/projects', { name: n, slug: `${n}-${crypto.randomUUID()}` })).json.data),
    )
    // A billing admin holds no project point by role: whatever it holds in p, its project membership gives.
    const member = await memberOf(api.url, api.sql, owner.tenantId, 'billing_admin')
    const added = await owner.client.post(`/projects/${p.id}/members`, { userId: member.userId, role: 'contributor' })
    expect(added.status).toBe(201)
    return { owner, p, q, member }
  }

  test('scopes within what the caller holds in the project, project points only; the project must be of this tenant', async () => {
    const { owner, p, member } = await setting()
    const make = (body: Record<string, unknown>) => member.client.post('/api-keys', { name: 'project token', ...body })
    const codes = [
      await make({ scopes: ['model:read', 'tenant:read'], projectId: p.id }),
      await make({ scopes: ['model:read', 'project:manage'], projectId: p.id }),
      await make({ scopes: ['model:read'], projectId: crypto.randomUUID() }),
      await make({ scopes: ['model:read'], projectId: (await tenantOwner(api.url)).tenantId }),
    ].map((r) => `${r.status} ${r.json.code}`)
    expect(codes).toEqual(['400 INVALID_PERMISSION_OVERLAY', '400 INVALID_PERMISSION_OVERLAY', '400 VALIDATION_ERROR', '400 VALIDATION_ERROR'])
    // A tenant-wide token of a billing admin cannot carry model points at all.
    expect((await make({ scopes: ['model:read'] })).json.code).toBe('INVALID_PERMISSION_OVERLAY')

    const made = await make({ scopes: ['model:read', 'model:write'], projectId: p.id })
    expect(made.status).toBe(201)
    expect(made.json.data.apiKey).toMatchObject({ projectId: p.id, scopes: ['model:read', 'model:write'] })
    const self = (await bearer(api.url, made.json.data.token).get('/tokens/self')).json.data
    expect([self.projectScope, self.effectivePermissions]).toEqual([{ projectId: p.id, membershipExpiresAt: null }, ['model:read', 'model:write']])
    // A tenant-wide token answers null.
    expect((await bearer(api.url, (await patFor(owner.client, ['tenant:read'])).token).get('/tokens/self')).json.data.projectScope).toBeNull()
  })

  test('a project token acts only in its project: another project, a new API key or webhook endpoint, tenant-wide work are 403', async () => {
    const { owner, p, q, member } = await setting()
    const mine = bearer(api.url, (await patFor(member.client, ['model:read', 'model:write'], { projectId: p.id })).token)
    const boss = bearer(api.url, (await patFor(owner.client, ['model:read', 'model:write', 'project:manage'], { projectId: p.id })).token)
    // A tenant-wide profile keeps the tenant's rules: a project token is refused it (a list answers its own project's work).
    const FEATURE = [{ name: 'state', dtype: 'float32', shape: [7] }]
    const tenantWide = (
      await owner.client.post('/embodiment-profiles', {
        name: 'arm',
        robotType: 'so100',
        controlRateHz: 30,
        observationFeatures: FEATURE,
        actionFeatures: FEATURE,
      })
    ).json.data
    expect((await mine.get(`/projects/${p.id}/members`)).status).toBe(200)
    expect((await boss.get(`/projects/${p.id}/members`)).status).toBe(200)
    const outside = async (c: typeof mine) =>
      [
        await c.get(`/projects/${q.id}/members`),
        await c.post('/api-keys', { name: 'escape', scopes: ['model:read'] }),
        await c.post('/api-keys', { name: 'escape', scopes: ['model:read'], projectId: p.id }),
        await c.post('/webhook-endpoints', { url: 'https://hooks.example.test/x', events: ['training_job.completed'] }),
        await c.get(`/embodiment-profiles/${tenantWide.id}`),
      ].map((r) => `${r.status} ${r.json.code}`)
    // The owner's role would allow each of them: the token does not declare them.
    expect(await outside(boss)).toEqual(Array(5).fill('403 PERMISSION_NOT_DECLARED'))
    // The billing admin's role gives API keys (not declared), but nothing in q, nor webhooks, nor models (denied).
    expect(await outside(mine)).toEqual([
      '403 PERMISSION_DENIED',
      '403 PERMISSION_NOT_DECLARED',
      '403 PERMISSION_NOT_DECLARED',
      '403 PERMISSION_DENIED',
      '403 PERMISSION_DENIED',
    ])
    const [keys] = await api.sql`select count(*)::int as n from api_keys where tenant_id = ${owner.tenantId} and name = 'escape'`
    const [hooks] = await api.sql`select count(*)::int as n from webhook_endpoints where tenant_id = ${owner.tenantId}`
    expect([keys!.n, hooks!.n]).toEqual([0, 0])
  })

  test('an expired or removed project membership stops the cached token at once', async () => {
    const { owner, p, member } = await setting()
    await owner.client.patch(`/projects/${p.id}/members/${member.userId}`, { expiresAt: new Date(Date.now() + 3_600_000).toISOString() })
    const token = bearer(api.url, (await patFor(member.client, ['model:read'], { projectId: p.id })).token)
    expect((await token.get(`/projects/${p.id}/members`)).status).toBe(200)
    expect((await token.get('/tokens/self')).json.data.effectivePermissions).toEqual(['model:read'])

    // Expired a second ago, with triggers off: nothing evicts the cached token. Held out of the housekeeping purge,
    // which may run at any moment on the shared database, while it is read (a PATCH locks the row for update, so it
    // comes after the release).
    const { release } = await holdRows(api.deps.config.DATABASE_URL, (tx) => tx`select 1 from project_members where user_id = ${member.userId} for key share`)
    try {
      await api.sql.begin(async (tx) => {
        await tx`set local session_replication_role = replica`
        await tx`update project_members set expires_at = now() - interval '1 second' where user_id = ${member.userId}`
      })
      // A project route reads the membership fresh (the cached token's own copy of expiresAt is compared with the
      // clock on every use: test/unit/project-tokens.test.ts).
      const expired = await token.get(`/projects/${p.id}/members`)
      expect([expired.status, expired.json.code]).toEqual([403, 'PROJECT_MEMBERSHIP_EXPIRED'])
    } finally {
      await release()
    }

    // Renewed, then removed: the removal answers after the fence, and the very next use is refused.
    expect((await owner.client.patch(`/projects/${p.id}/members/${member.userId}`, { expiresAt: null })).status).toBe(200)
    expect((await token.get(`/projects/${p.id}/members`)).status).toBe(200)
    expect((await owner.client.delete(`/projects/${p.id}/members/${member.userId}`)).status).toBe(200)
    const removed = await token.get(`/projects/${p.id}/members`)
    expect([removed.status, removed.json.code]).toEqual([403, 'PERMISSION_DENIED'])
    expect((await token.get('/tokens/self')).json.data.effectivePermissions).toEqual([])
  })
})
