// The trail of tokens and its listing filters: a token revoked by an administrator versus by its owner, the listing's
// actorId and targetType filters, and who a token's change is recorded as (its name at that moment, its id). Every
// change goes through the HTTP API as the console makes it (cookie session with its CSRF header, or a Bearer PAT) and
// every entry is read back through GET /v1/tenants/current/audit-log as the tenant's owner.
import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { auditWindow, hourAgo, inAnHour, sealAudit } from '../support/audit'
import type { Client } from '../support/client'
import { patFor, tenantOwner } from '../support/fixtures'
import { bearer, memberOf } from '../tenancy/members'

const api = useApi()

type Entry = {
  id: string
  seq: number
  action: string
  tenantId: string | null
  outcome: string
  actor: { type: string; id: string | null; label: string | null; credentialId: string | null }
  target: { type: string; id: string } | null
  details: Record<string, unknown> | null
}

/** The tenant's entries through the API, newest first, with the listing's own filters. */
async function trail(client: Client, filters: Record<string, string> = {}): Promise<Entry[]> {
  const res = await client.get(`/tenants/current/audit-log?${auditWindow()}&pageSize=100&${new URLSearchParams(filters)}`)
  if (res.status !== 200) throw new Error(`audit log: ${res.status} ${res.text}`)
  return res.json.data
}

/** The credential a client presents (its session's id, or its token's). */
const credentialOf = async (client: Client) => (await client.get('/tokens/self')).json.data.credentialId as string

/** Everything stored about one target, sealed rows and their audit.entry events, as text to search for a secret. */
const storedAbout = async (tenantId: string, targetId: string) => {
  await sealAudit(api.sql)
  const rows = await api.sql`select to_jsonb(a) as row from audit_log a where chain = ${tenantId} and target_id = ${targetId}`
  const events = await api.sql`select data from events where tenant_id = ${tenantId} and type = 'audit.entry' and data->'target'->>'id' = ${targetId}`
  return JSON.stringify([rows, events])
}

async function keyOf(client: Client, name: string, scopes: string[] = ['model:read']) {
  const res = await client.post('/api-keys', { name, scopes })
  expect(res.status).toBe(201)
  return { id: res.json.data.apiKey.id as string, token: res.json.data.token as string }
}

/** A key's entries, newest first: its revocation as `action`, by `by` (with the session it acted through), then its
 *  creation. */
async function revocationOf(
  owner: { client: Client; tenantId: string },
  keyId: string,
  action: string,
  by: { userId: string; email: string; session: string },
  name: string,
): Promise<Entry[]> {
  const entries = await trail(owner.client, { targetId: keyId })
  expect(entries.map((e) => e.action)).toEqual([action, 'api_key.created'])
  expect(entries[0]).toEqual(
    expect.objectContaining({
      action,
      tenantId: owner.tenantId,
      outcome: 'success',
      actor: { type: 'user', id: by.userId, label: by.email, credentialId: by.session },
      target: { type: 'api_key', id: keyId },
      details: { name },
    }),
  )
  return entries
}

describe('token revocation: by its owner or by an administrator', () => {
  test("an administrator revoking a member's token is api_key.revoked_by_admin, by the admin, about the key, in the member's activity; the token is nowhere", async () => {
    const owner = await tenantOwner(api.url)
    const admin = await memberOf(api.url, api.sql, owner.tenantId, 'admin')
    const member = await memberOf(api.url, api.sql, owner.tenantId, 'researcher')
    const key = await keyOf(member.client, 'member laptop')
    const adminSession = await credentialOf(admin.client)

    const res = await admin.client.delete(`/api-keys/${key.id}`)
    expect(res.status).toBe(200)
    expect(res.json.data.revokedAt).not.toBeNull()
    expect((await bearer(api.url, key.token).get('/tokens/self')).status).toBe(401)

    const entries = await revocationOf(owner, key.id, 'api_key.revoked_by_admin', { ...admin, session: adminSession }, 'member laptop')
    // The entry is about the member whose token it was: their own security activity shows it, the admin's does not.
    const activity = async (c: Client) => ((await c.get('/users/me/security-activity')).json.data as Entry[]).map((e) => e.id)
    expect(await activity(member.client)).toContain(entries[0]!.id)
    expect(await activity(admin.client)).not.toContain(entries[0]!.id)

    expect(JSON.stringify(entries)).not.toContain(key.token)
    expect(await storedAbout(owner.tenantId, key.id)).not.toContain(key.token)
  })

  test('a member revoking their own token is api_key.revoked (an administrator revoking their own too); another member cannot, and records nothing', async () => {
    const owner = await tenantOwner(api.url)
    const admin = await memberOf(api.url, api.sql, owner.tenantId, 'admin')
    const member = await memberOf(api.url, api.sql, owner.tenantId, 'researcher')
    const other = await memberOf(api.url, api.sql, owner.tenantId, 'researcher')
    const memberKey = await keyOf(member.client, 'my notebook')
    const adminKey = await keyOf(admin.client, 'admin script')
    const memberSession = await credentialOf(member.client)

    const refused = await other.client.delete(`/api-keys/${memberKey.id}`) // no apikey:manage: not even its existence
    expect(refused.status).toBe(404)
    expect((await member.client.delete(`/api-keys/${memberKey.id}`)).status).toBe(200)
    expect((await member.client.delete(`/api-keys/${memberKey.id}`)).status).toBe(200) // again: nothing new
    expect((await admin.client.delete(`/api-keys/${adminKey.id}`)).status).toBe(200)

    const ofMember = await revocationOf(owner, memberKey.id, 'api_key.revoked', { ...member, session: memberSession }, 'my notebook')
    const ofAdmin = await trail(owner.client, { targetId: adminKey.id })
    expect(ofAdmin.map((e) => [e.action, e.actor.id])).toEqual([
      ['api_key.revoked', admin.userId],
      ['api_key.created', admin.userId],
    ])
    expect(await trail(owner.client, { action: 'api_key.revoked_by_admin' })).toEqual([])

    expect(JSON.stringify([ofMember, ofAdmin])).not.toContain(memberKey.token)
    expect(await storedAbout(owner.tenantId, memberKey.id)).not.toContain(memberKey.token)
    expect(await storedAbout(owner.tenantId, adminKey.id)).not.toContain(adminKey.token)
  })
})

describe('the listing filters', () => {
  test("actorId returns only that actor's entries, whether they acted with a session or a token", async () => {
    const owner = await tenantOwner(api.url)
    const admin = await memberOf(api.url, api.sql, owner.tenantId, 'admin')
    const ownerKey = await keyOf(owner.client, 'owner key')
    const adminKey = await keyOf(admin.client, 'admin key')
    expect((await admin.client.patch('/tenants/current/auth-policy', { passwordMinLength: 11 })).status).toBe(200)
    const pat = await patFor(owner.client, ['apikey:write', 'model:read'])
    const viaToken = await keyOf(bearer(api.url, pat.token), 'made by a token')

    const all = await trail(owner.client)
    expect(new Set(all.map((e) => e.actor.id))).toEqual(new Set([owner.userId, admin.userId]))

    const byAdmin = await trail(owner.client, { actorId: admin.userId })
    expect(byAdmin.map((e) => [e.action, e.target?.id])).toEqual([
      ['auth_policy.updated', owner.tenantId],
      ['api_key.created', adminKey.id],
    ])
    const byOwner = await trail(owner.client, { actorId: owner.userId })
    expect(byOwner.map((e) => [e.action, e.actor.type, e.target?.id])).toEqual([
      ['api_key.created', 'api_key', viaToken.id],
      ['api_key.created', 'user', pat.id],
      ['api_key.created', 'user', ownerKey.id],
      // Making the tenant records it and the subscription it starts on (api/billing), both by its creator.
      ['subscription.created', 'user', expect.any(String)],
      ['tenant.created', 'user', owner.tenantId],
    ])
    expect(byAdmin.length + byOwner.length).toBe(all.length)

    const stranger = await tenantOwner(api.url)
    expect(await trail(owner.client, { actorId: stranger.userId })).toEqual([])
    expect(await trail(stranger.client, { actorId: owner.userId })).toEqual([]) // another tenant's actor: nothing of this one
  })

  test('targetType returns only entries about that type of target; with targetId, only that target of that type', async () => {
    const owner = await tenantOwner(api.url)
    const member = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    const first = await keyOf(owner.client, 'first')
    const second = await keyOf(owner.client, 'second')
    expect((await owner.client.patch(`/tenants/current/memberships/${member.membershipId}`, { role: 'researcher' })).status).toBe(200)
    expect((await owner.client.delete(`/api-keys/${first.id}`)).status).toBe(200)

    const all = await trail(owner.client)
    expect(new Set(all.map((e) => e.target?.type))).toEqual(new Set(['tenant', 'subscription', 'api_key', 'membership']))

    const keys = await trail(owner.client, { targetType: 'api_key' })
    expect(keys.map((e) => [e.action, e.target?.id])).toEqual([
      ['api_key.revoked', first.id],
      ['api_key.created', second.id],
      ['api_key.created', first.id],
    ])
    const memberships = await trail(owner.client, { targetType: 'membership' })
    expect(memberships.map((e) => [e.action, e.target?.id])).toEqual([['membership.updated', member.membershipId]])
    expect(await trail(owner.client, { targetType: 'domain' })).toEqual([])

    expect((await trail(owner.client, { targetType: 'api_key', targetId: first.id })).map((e) => e.action)).toEqual(['api_key.revoked', 'api_key.created'])
    expect(await trail(owner.client, { targetType: 'membership', targetId: first.id })).toEqual([]) // both must hold
    expect(await trail(owner.client, { targetType: 'api_key', targetId: member.membershipId })).toEqual([])
  })
})

describe('who acted: a token or a session', () => {
  test("a change made with a token records actor api_key, the token's name at that moment and its id; a session's records the email and the session", async () => {
    const owner = await tenantOwner(api.url)
    const session = await credentialOf(owner.client)
    const pat = await patFor(owner.client, ['apikey:write', 'model:read'], { name: 'deploy bot' })
    const viaToken = bearer(api.url, pat.token)
    const before = await keyOf(viaToken, 'child one')

    // The API offers no rename: the token's name is changed in the table, as a future rename would, and like every
    // change to a token it evicts the token from every replica's cache (migrations/0026) by the fence's end.
    await api.sql`update api_keys set name = 'deploy bot (renamed)' where id = ${pat.id}`
    await api.deps.pats.fence()
    const after = await keyOf(viaToken, 'child two')

    const [bySession] = await trail(owner.client, { targetId: pat.id })
    expect(bySession).toEqual(
      expect.objectContaining({
        action: 'api_key.created',
        actor: { type: 'user', id: owner.userId, label: owner.email, credentialId: session },
      }),
    )
    const [first] = await trail(owner.client, { targetId: before.id })
    expect(first).toEqual(
      expect.objectContaining({
        action: 'api_key.created',
        actor: { type: 'api_key', id: owner.userId, label: 'deploy bot', credentialId: pat.id },
      }),
    )
    const [second] = await trail(owner.client, { targetId: after.id })
    expect(second!.actor).toEqual({ type: 'api_key', id: owner.userId, label: 'deploy bot (renamed)', credentialId: pat.id })

    for (const token of [pat.token, before.token, after.token]) {
      expect(JSON.stringify([bySession, first, second])).not.toContain(token)
    }
    // The labels are part of the chain: the stored entries still verify.
    const check = await owner.client.post('/tenants/current/audit-log/verifications', {
      from: hourAgo(),
      to: inAnHour(),
    })
    expect(check.json.data).toMatchObject({ intact: true, verified: 5 }) // with the tenant's subscription.created
  })
})
