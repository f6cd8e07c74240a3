import { describe, expect, test } from 'bun:test'
import { PERMISSIONS } from '../../api/identity/permissions'
import { useApi } from '../support/api'
import { patFor, tenantOwner, uniqueEmail } from '../support/fixtures'
import { bearer, memberOf } from './members'

const api = useApi()

describe('tenant isolation', () => {
  test("every authenticated route, called with another tenant's credential on this tenant's ids, yields nothing of it", async () => {
    // Tenant A and its resources.
    const a = await tenantOwner(api.url)
    const member = await memberOf(api.url, api.sql, a.tenantId, 'researcher', uniqueEmail('isolated'))
    const key = await patFor(member.client, ['tenant:read'])
    const invited = uniqueEmail('isolated-invite')
    const invitation = (await a.client.post('/tenant-invitations', { email: invited, role: 'viewer' })).json.data
    const claimedDomain = `${uniqueEmail('isolated').split('@')[0]}.example`
    const domain = (await a.client.post('/tenants/current/domains', { domain: claimedDomain })).json.data
    const hookUrl = `https://127.0.0.1/${claimedDomain}/hook`
    const hook = (await a.client.post('/webhook-endpoints', { url: hookUrl, events: ['run.finished'] })).json.data.endpoint
    const secrets = [a.tenantId, a.membershipId, a.email, member.userId, member.membershipId, member.email, key.id, invitation.id, invited,
      domain.id, claimedDomain, domain.verificationRecord.value, hook.id, hookUrl]
    const before = await api.sql`select (select version from memberships where id = ${member.membershipId}) as v,
      (select revoked_at from api_keys where id = ${key.id}) as k, (select revoked_at from tenant_invitations where id = ${invitation.id}) as i,
      (select version from webhook_endpoints where id = ${hook.id}) as w`

    // Tenant B's owner: every permission, as a PAT (no CSRF, no session to end by accident).
    const b = await tenantOwner(api.url)
    const other = bearer(api.url, (await patFor(b.client, [...PERMISSIONS])).token)

    const doc = await (await fetch(`${api.url}/v1/openapi.json`)).json() as any
    const idFor = (name: string) =>
      ({ membershipId: member.membershipId, apiKeyId: key.id, invitationId: invitation.id, userId: member.userId, domainId: domain.id, endpointId: hook.id })[name] ?? a.tenantId
    let walked = 0
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      if (!path.startsWith('/v1/')) continue
      for (const [method, op] of Object.entries(ops)) {
        if (!op.security?.length) continue // public operations hold no tenant data
        const concrete = path.replace(/\{(\w+)\}/g, (_, name: string) => idFor(name)).slice('/v1'.length)
        const res = await other.call(method.toUpperCase(), concrete, method === 'get' || method === 'delete' ? {} : { body: {} })
        walked++
        const label = `${method.toUpperCase()} ${path} → ${res.status}`
        // A value the caller sent may be echoed (a 404 naming the id asked for); nothing else of A may appear.
        for (const s of secrets) expect({ label, leaks: res.text.includes(s) && !concrete.includes(s) ? s : null }).toEqual({ label, leaks: null })
        if (/\{(membershipId|apiKeyId|invitationId|domainId|endpointId)\}/.test(path)) expect({ label, refused: [403, 404].includes(res.status) || res.status === 400 }).toEqual({ label, refused: true })
      }
    }
    expect(walked).toBeGreaterThan(10)
    const after = await api.sql`select (select version from memberships where id = ${member.membershipId}) as v,
      (select revoked_at from api_keys where id = ${key.id}) as k, (select revoked_at from tenant_invitations where id = ${invitation.id}) as i,
      (select version from webhook_endpoints where id = ${hook.id}) as w`
    expect(after).toEqual(before)

    // And the id routes answer 404 exactly, with valid bodies (not a validation error hiding a leak).
    expect((await other.patch(`/tenants/current/memberships/${member.membershipId}`, { role: 'viewer' })).status).toBe(404)
    expect((await other.get(`/tenants/current/memberships/${member.membershipId}`)).status).toBe(404)
    expect((await other.delete(`/tenants/current/memberships/${member.membershipId}`)).status).toBe(404)
    expect((await other.delete(`/api-keys/${key.id}`)).status).toBe(404)
    expect((await other.post(`/api-keys/memberships/${member.membershipId}/revocations`)).status).toBe(404)
    expect((await other.delete(`/tenant-invitations/${invitation.id}`)).status).toBe(404)
    expect((await other.delete(`/tenants/current/domains/${domain.id}`)).status).toBe(404)
    expect((await other.post(`/tenants/current/domains/${domain.id}/verifications`)).status).toBe(404)
    expect((await a.client.get('/tenants/current/domains')).json.data.map((d: any) => d.id)).toEqual([domain.id])
    // A's own PAT still works: nothing was revoked.
    expect((await bearer(api.url, key.token).get('/tokens/self')).status).toBe(200)
  })
})
