// The role ceiling: no caller grants a role (or a PAT scope set) above their own, on any path. "Above" is by
// permission points: a role is within a caller's reach when every permission it carries is one the caller holds
// now (so an admin, who lacks billing:write, reaches neither owner nor billing_admin). The walk covers every
// caller role × every target role on every path that grants one.
import { describe, expect, test } from 'bun:test'
import { ROLE_PERMISSIONS, ROLES, type Role } from '../../api/identity/permissions'
import type { Client } from '../support/client'
import { useApi } from '../support/api'
import { patFor, tenantOwner, uniqueEmail } from '../support/fixtures'
import { bearer, memberOf } from './members'

const api = useApi()

type Outcome = 'ok' | string // the problem's code otherwise

const within = (target: Role, held: readonly string[]) => ROLE_PERMISSIONS[target].every((p) => held.includes(p))
const manages = (held: readonly string[]) => held.includes('tenant:manage')

/** A member of the tenant with `role`, signed in nowhere: enough to be a target of a PATCH. */
async function bareMember(tenantId: string, role: Role): Promise<string> {
  const [u] = await api.sql<{ id: string }[]>`insert into users (email) values (${uniqueEmail('target')}) returning id`
  const [m] = await api.sql<{ id: string }[]>`insert into memberships (tenant_id, user_id, role) values (${tenantId}, ${u!.id}, ${role}) returning id`
  return m!.id
}

const outcome = (res: { status: number; json: any }, success: number): Outcome => (res.status === success ? 'ok' : `${res.status} ${res.json?.code}`)

async function walk(caller: Client, held: readonly string[], tenantId: string) {
  const cells: { path: string; target: Role; got: Outcome; want: Outcome }[] = []
  const denied = (grantCode: string): Outcome => (manages(held) ? `400 ${grantCode}` : '403 PERMISSION_DENIED')
  for (const target of ROLES) {
    const reach = within(target, held)
    cells.push({
      path: 'POST /users',
      target,
      want: manages(held) && reach ? 'ok' : denied('INVALID_ROLE_TRANSITION'),
      got: outcome(await caller.post('/users', { mode: 'invite', role: target, email: uniqueEmail('prov') }), 201),
    })
    cells.push({
      path: 'POST /tenant-invitations',
      target,
      want: manages(held) && reach ? 'ok' : denied('INVALID_ROLE_TRANSITION'),
      got: outcome(await caller.post('/tenant-invitations', { role: target, email: uniqueEmail('inv') }), 201),
    })
    const promote = await bareMember(tenantId, 'viewer')
    cells.push({
      path: 'PATCH membership viewer→role',
      target,
      want: manages(held) && reach ? 'ok' : denied('INVALID_ROLE_TRANSITION'),
      got: outcome(await caller.patch(`/tenants/current/memberships/${promote}`, { role: target }), 200),
    })
    // Changing a member who sits above you is granting their role as much as taking it away.
    const demote = await bareMember(tenantId, target)
    cells.push({
      path: 'PATCH membership role→viewer',
      target,
      want: manages(held) && reach ? 'ok' : denied('INVALID_ROLE_TRANSITION'),
      got: outcome(await caller.patch(`/tenants/current/memberships/${demote}`, { role: 'viewer' }), 200),
    })
    const remove = await bareMember(tenantId, target)
    cells.push({
      path: 'DELETE membership of role',
      target,
      want: manages(held) && reach ? 'ok' : denied('INVALID_ROLE_TRANSITION'),
      got: outcome(await caller.delete(`/tenants/current/memberships/${remove}`), 200),
    })
    // Everyone the provider signs in gets the connection's default role (never owner: the schema refuses it).
    cells.push({
      path: 'POST sso-connections defaultRole',
      target,
      want:
        target === 'owner'
          ? manages(held)
            ? '400 VALIDATION_ERROR'
            : '403 PERMISSION_DENIED'
          : manages(held) && reach
            ? 'ok'
            : denied('INVALID_ROLE_TRANSITION'),
      got: outcome(
        await caller.post('/tenants/current/sso-connections', {
          issuer: 'https://idp.example.test',
          clientId: 'c',
          clientSecret: 's',
          defaultRole: target,
        }),
        201,
      ),
    })
    cells.push({
      path: 'POST /api-keys scopes',
      target,
      want: !held.includes('apikey:write') ? '403 PERMISSION_DENIED' : reach ? 'ok' : '400 INVALID_PERMISSION_OVERLAY',
      got: outcome(await caller.post('/api-keys', { name: `as ${target}`, scopes: [...ROLE_PERMISSIONS[target]] }), 201),
    })
  }
  return cells
}

const wrongCells = (cells: Awaited<ReturnType<typeof walk>>) =>
  cells.filter((c) => c.got !== c.want).map((c) => `${c.path} → ${c.target}: got ${c.got}, want ${c.want}`)

describe('role ceiling', () => {
  test('every caller role × every target role on every granting path', async () => {
    const owner = await tenantOwner(api.url)
    const wrong: string[] = []
    for (const role of ROLES) {
      const caller = role === 'owner' ? owner.client : (await memberOf(api.url, api.sql, owner.tenantId, role)).client
      wrong.push(...wrongCells(await walk(caller, ROLE_PERMISSIONS[role], owner.tenantId)).map((w) => `${role}: ${w}`))
    }
    const bad = wrong
    if (bad.length > 0) console.error(`role ceiling: wrong cells\n${bad.join('\n')}`)
    expect(bad).toEqual([])
  }, 120_000)

  test("a PAT's ceiling is its scopes: an owner's token without billing points makes researchers and viewers, nobody above", async () => {
    const owner = await tenantOwner(api.url)
    const held = ['tenant:read', 'tenant:manage', 'apikey:read', 'apikey:write']
    const pat = bearer(api.url, (await patFor(owner.client, held)).token)
    const bad = wrongCells(await walk(pat, held, owner.tenantId))
    if (bad.length > 0) console.error(`role ceiling (PAT): wrong cells\n${bad.join('\n')}`)
    expect(bad).toEqual([])
  }, 60_000)
})
