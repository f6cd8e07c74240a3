// Tokens that say what they may do (issue 36): PERMISSION_NOT_DECLARED when only a PAT's scopes lack the point its
// operation needs, PERMISSION_DENIED when the member's role does; and project-scoped tokens.
import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { patFor, tenantOwner } from '../support/fixtures'
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
