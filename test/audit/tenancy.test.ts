// The trail of a tenant's people, policies and sign-in integrations: who gave whom which role and from where,
// every invitation's life, the auth policy and SSO connections before and after, domain claims and their failed
// verifications; never a token, password or client secret, and nothing of it visible to another tenant.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { linkSsoIdentity } from '../../api/sso/service'
import { startApi, type TestApi } from '../support/api'
import { Client } from '../support/client'
import { startDns, type TestDns } from '../support/dns'
import { PASSWORD, patFor, signedUpUser, tenantOwner, uniqueEmail, uniqueSlug } from '../support/fixtures'
import { waitForMail } from '../support/mailbox'
import { initialPasswordFrom } from '../accounts/helpers'
import { memberOf } from '../tenancy/members'
import { auditWindow, sealAudit } from '../support/audit'

let api: TestApi
let dns: TestDns

beforeAll(async () => {
  dns = await startDns()
  api = await startApi({ DOMAIN_VERIFICATION_DNS_SERVERS: dns.server })
})
afterAll(async () => {
  dns?.stop()
  await api?.stop()
})

type Entry = {
  id: string
  action: string
  actor: { type: string; id: string | null }
  target: { type: string; id: string } | null
  outcome: string
  reason: string | null
  ip: string | null
  userAgent: string | null
  requestId: string | null
  changes: Record<string, { before: unknown; after: unknown }> | null
  details: Record<string, unknown> | null
  tenantId: string | null
}

/** The tenant's entries through the API, newest first, with optional filters (`action` is a prefix). */
async function trail(client: Client, filters: Record<string, string> = {}): Promise<Entry[]> {
  const res = await client.get(`/tenants/current/audit-log?${auditWindow()}&pageSize=100&${new URLSearchParams(filters)}`)
  if (res.status !== 200) throw new Error(`audit log: ${res.status} ${res.text}`)
  return res.json.data
}

/** Every row of the given chains (a tenant, an account), as text: what a search for a leaked secret reads. */
const rawChains = async (...chains: string[]) =>
  JSON.stringify(await sealAudit(api.sql).then(() => api.sql`select to_jsonb(a) as row from audit_log a where chain = any(${chains}) order by occurred_at`))
/** The audit.entry events that carry the same entries to webhook endpoints. */
const rawEvents = async (tenantId: string) => JSON.stringify(await api.sql`select data from events where tenant_id = ${tenantId} and type = 'audit.entry'`)

const tokenIn = (text: string) => decodeURIComponent(/[?&]token=([^\s&]+)/.exec(text)![1]!)

const accountEntries = async (userId: string, action: string) =>
  sealAudit(api.sql).then(
    () => api.sql<{ actor_type: string; actor_id: string | null; tenant_id: string | null; target_id: string | null; details: any; ip: string | null }[]>`
    select actor_type, actor_id, tenant_id, target_id, details, ip from audit_log where chain = ${userId} and action = ${action}`,
  )

describe('memberships', () => {
  test('who gave this person admin, and from where: one filtered query answers with the actor, before/after, IP and request id', async () => {
    const owner = await tenantOwner(api.url)
    const member = await memberOf(api.url, api.sql, owner.tenantId, 'researcher')
    const path = `/tenants/current/memberships/${member.membershipId}`
    const res = await owner.client.call('PATCH', path, {
      body: { role: 'admin' },
      headers: { 'user-agent': 'console/2.3', 'x-request-id': 'req-grant-admin-1' },
    })
    expect(res.status).toBe(200)

    const entries = await trail(owner.client, { action: 'membership.', targetId: member.membershipId })
    expect(entries.length).toBe(1)
    expect(entries[0]).toMatchObject({
      action: 'membership.updated',
      tenantId: owner.tenantId,
      outcome: 'success',
      target: { type: 'membership', id: member.membershipId },
      actor: { type: 'user', id: owner.userId },
      ip: '127.0.0.1',
      userAgent: 'console/2.3',
      requestId: 'req-grant-admin-1',
      changes: { role: { before: 'researcher', after: 'admin' } },
    })
    expect(Object.keys(entries[0]!.changes!)).toEqual(['role'])
    const [row] = await api.sql`select subject_user_id from audit_log where id = ${entries[0]!.id}`
    expect(row!.subject_user_id).toBe(member.userId)
  })

  test('status and expiry changes show before and after; a restated value records nothing; a stale If-Match leaves no entry', async () => {
    const owner = await tenantOwner(api.url)
    const member = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    const path = `/tenants/current/memberships/${member.membershipId}`
    const expiresAt = new Date(Date.now() + 7 * 86_400_000).toISOString()
    const etag = (await owner.client.get(path)).headers.get('etag')!
    expect((await owner.client.patch(path, { status: 'disabled', expiresAt }, { 'if-match': etag })).status).toBe(200)
    expect((await owner.client.patch(path, { role: 'viewer' })).status).toBe(200) // the role it has: no change
    expect((await owner.client.patch(path, { role: 'admin' }, { 'if-match': etag })).status).toBe(412)

    const entries = await trail(owner.client, { action: 'membership.', targetId: member.membershipId })
    expect(entries.length).toBe(1)
    expect(entries[0]!.changes).toEqual({ status: { before: 'active', after: 'disabled' }, expiresAt: { before: null, after: expiresAt } })
  })

  test("revoking a member's keys and removing the member are recorded about that member", async () => {
    const owner = await tenantOwner(api.url)
    const member = await memberOf(api.url, api.sql, owner.tenantId, 'researcher')
    await patFor(member.client, ['model:read'])
    await patFor(member.client, ['model:read'])
    const revoked = await owner.client.post(`/api-keys/memberships/${member.membershipId}/revocations`)
    expect(revoked.status).toBe(201)
    expect((await owner.client.delete(`/tenants/current/memberships/${member.membershipId}`)).status).toBe(200)

    const [removed, keys] = await trail(owner.client, { targetId: member.membershipId })
    expect(keys).toMatchObject({
      action: 'api_key.member_keys_revoked',
      actor: { id: owner.userId },
      target: { type: 'membership', id: member.membershipId },
      details: { count: 2 },
    })
    expect(removed).toMatchObject({ action: 'membership.removed', actor: { id: owner.userId }, details: { role: 'researcher', revokedKeys: 0 } })
    const subjects = await api.sql`select distinct subject_user_id from audit_log where chain = ${owner.tenantId} and target_id = ${member.membershipId}`
    expect(subjects.map((r) => r.subject_user_id)).toEqual([member.userId])
  })
})

describe('tenant and accounts', () => {
  test('tenant.created names the creator; self-registration is the new account acting on itself', async () => {
    const owner = await tenantOwner(api.url)
    expect(await trail(owner.client, { action: 'tenant.' })).toMatchObject([
      { action: 'tenant.created', actor: { type: 'user', id: owner.userId }, target: { type: 'tenant', id: owner.tenantId } },
    ])
    expect(await accountEntries(owner.userId, 'user.registered')).toMatchObject([
      { actor_type: 'user', actor_id: owner.userId, tenant_id: null, target_id: owner.userId, details: { via: 'self_registration' }, ip: '127.0.0.1' },
    ])
  })

  test('a completed registration invitation is user.registered; its token is in no entry', async () => {
    const email = uniqueEmail('reg')
    expect((await new Client(api.url).post('/registration-invitations', { email })).status).toBe(201)
    const token = tokenIn((await waitForMail(email, { subject: /Create your/, timeoutMs: 30_000 })).text)
    const done = await new Client(api.url).post('/registration-invitations/completions', { token, password: PASSWORD })
    expect(done.status).toBe(201)
    const userId = done.json.data.user.id as string
    expect(await accountEntries(userId, 'user.registered')).toMatchObject([{ actor_id: userId, details: { via: 'registration_invitation' } }])
    const raw = await rawChains(userId)
    expect(raw).not.toContain(token)
    expect(raw).not.toContain(PASSWORD)
  })

  test('a provisioned account is recorded in the tenant about the new user, never with its initial password', async () => {
    const owner = await tenantOwner(api.url)
    const email = uniqueEmail('prov')
    const since = new Date(Date.now() - 1000)
    const res = await owner.client.post('/users', { mode: 'create', role: 'viewer', email })
    expect(res.status).toBe(201)
    const userId = res.json.data.user.id as string
    const initial = initialPasswordFrom((await waitForMail(email, { subject: /Your account/, after: since, timeoutMs: 30_000 })).text)
    expect(await trail(owner.client, { action: 'user.provisioned' })).toMatchObject([
      {
        actor: { id: owner.userId },
        target: { type: 'user', id: userId },
        details: { email, role: 'viewer', mode: 'create' },
      },
    ])
    const [row] = await api.sql`select subject_user_id from audit_log where chain = ${owner.tenantId} and action = 'user.provisioned'`
    expect(row!.subject_user_id).toBe(userId)
    const raw = (await rawChains(owner.tenantId, userId)) + (await rawEvents(owner.tenantId))
    expect(raw).not.toContain(initial)
  })
})

describe('invitations', () => {
  test('created, superseded, revoked and accepted: each recorded with the role; the tokens appear nowhere', async () => {
    const owner = await tenantOwner(api.url)
    const seen = new Set<string>()
    const invite = async (email: string, role: string) => {
      const res = await owner.client.post('/tenant-invitations', { email, role })
      expect(res.status).toBe(201)
      for (;;) {
        // the newest mail to the address, once the one for this invitation has arrived
        const token = tokenIn((await waitForMail(email, { subject: /invited/, timeoutMs: 30_000 })).text)
        if (!seen.has(token)) {
          seen.add(token)
          return { id: res.json.data.id as string, token }
        }
        await Bun.sleep(100)
      }
    }
    const joinerEmail = uniqueEmail('joiner')
    const first = await invite(joinerEmail, 'viewer')
    const second = await invite(joinerEmail, 'researcher') // supersedes the first
    const other = await invite(uniqueEmail('other'), 'admin')
    expect((await owner.client.delete(`/tenant-invitations/${other.id}`)).status).toBe(200)
    expect((await owner.client.delete(`/tenant-invitations/${other.id}`)).status).toBe(200) // again: nothing new
    const accepted = await new Client(api.url).post('/tenant-invitations/acceptance-records', { token: second.token, password: PASSWORD })
    expect(accepted.status).toBe(201)
    const joinerId = accepted.json.data.user.id as string

    const entries = (await trail(owner.client, { action: 'invitation.' })).reverse()
    expect(entries.map((e) => [e.action, e.target?.id])).toEqual([
      ['invitation.created', first.id],
      ['invitation.revoked', first.id],
      ['invitation.created', second.id],
      ['invitation.created', other.id],
      ['invitation.revoked', other.id],
      ['invitation.accepted', second.id],
    ])
    expect(entries[0]).toMatchObject({ actor: { id: owner.userId }, details: { role: 'viewer', email: joinerEmail } })
    expect(entries[1]).toMatchObject({ details: { supersededBy: second.id } })
    expect(entries[3]).toMatchObject({ details: { role: 'admin' } })
    expect(entries[5]).toMatchObject({ actor: { type: 'user', id: joinerId }, details: { role: 'researcher' } })
    expect(await accountEntries(joinerId, 'user.registered')).toMatchObject([{ actor_id: joinerId, details: { via: 'tenant_invitation' } }])

    const raw = (await rawChains(owner.tenantId, joinerId)) + (await rawEvents(owner.tenantId))
    for (const secret of [first.token, second.token, other.token, PASSWORD]) expect(raw).not.toContain(secret)
  })
})

describe('auth policy', () => {
  test('a change records every changed field before and after; a refused one records nothing', async () => {
    const owner = await tenantOwner(api.url)
    const path = '/tenants/current/auth-policy'
    const etag = (await owner.client.get(path)).headers.get('etag')!
    const res = await owner.client.patch(path, { passwordMinLength: 12, allowedEmailDomains: ['example.test'], ssoEnforced: false }, { 'if-match': etag })
    expect(res.status).toBe(200)
    expect((await owner.client.patch(path, { passwordMinLength: 20 }, { 'if-match': etag })).status).toBe(412)
    expect((await owner.client.patch(path, { sessionIdleMinutes: 500_000 })).status).toBe(400)

    const entries = await trail(owner.client, { action: 'auth_policy.' })
    expect(entries.length).toBe(1)
    expect(entries[0]).toMatchObject({ action: 'auth_policy.updated', actor: { id: owner.userId }, target: { type: 'auth_policy', id: owner.tenantId } })
    expect(entries[0]!.changes).toEqual({
      passwordMinLength: { before: 8, after: 12 },
      allowedEmailDomains: { before: [], after: ['example.test'] },
    })
  })
})

describe('SSO connections and identities', () => {
  test('create and update are recorded before and after; the client secret is in no entry, only that it changed', async () => {
    const owner = await tenantOwner(api.url)
    const secrets = [`first-secret-${crypto.randomUUID()}`, `second-secret-${crypto.randomUUID()}`]
    const created = await owner.client.post('/tenants/current/sso-connections', {
      issuer: 'https://idp.example.test',
      clientId: 'rcp',
      clientSecret: secrets[0],
      emailDomains: ['example.test'],
      defaultRole: 'researcher',
    })
    expect(created.status).toBe(201)
    const id = created.json.data.id as string
    const path = `/tenants/current/sso-connections/${id}`
    expect((await owner.client.patch(path, { defaultRole: 'viewer', clientSecret: secrets[1] })).status).toBe(200)
    expect((await owner.client.patch(path, { name: 'Corporate IdP', clientSecret: secrets[1] })).status).toBe(200) // the same secret again

    const [renamed, rotated, made] = await trail(owner.client, { targetId: id })
    expect(made).toMatchObject({
      action: 'sso_connection.created',
      actor: { id: owner.userId },
      details: { issuer: 'https://idp.example.test', clientId: 'rcp', emailDomains: ['example.test'], defaultRole: 'researcher', enabled: true },
    })
    expect(rotated).toMatchObject({
      action: 'sso_connection.updated',
      changes: { defaultRole: { before: 'researcher', after: 'viewer' } },
      details: { clientSecretChanged: true },
    })
    expect(Object.keys(rotated!.changes!)).toEqual(['defaultRole'])
    expect(renamed).toMatchObject({
      action: 'sso_connection.updated',
      changes: { name: { before: 'idp.example.test', after: 'Corporate IdP' } },
      details: null,
    })

    const raw = (await rawChains(owner.tenantId)) + (await rawEvents(owner.tenantId))
    for (const secret of secrets) expect(raw).not.toContain(secret)
  })

  test("an identity linked at sign-in and unlinked by its owner are in the account's own trail", async () => {
    const owner = await tenantOwner(api.url)
    const c = await owner.client.post('/tenants/current/sso-connections', { issuer: 'https://idp.example.test', clientId: 'rcp', clientSecret: 's3cret-value' })
    const user = await signedUpUser(api.url)
    const subject = `sub-${crypto.randomUUID()}`
    const ctx = { principal: null, membership: null, ip: '192.0.2.7', userAgent: 'browser', requestId: 'req-callback', traceId: null, system: null } as const
    const conn = { id: c.json.data.id as string, tenant_id: owner.tenantId, name: c.json.data.name as string }
    await api.sql.begin((tx) => linkSsoIdentity(tx, ctx, conn, subject, user.userId))
    await api.sql.begin((tx) => linkSsoIdentity(tx, ctx, conn, subject, user.userId)) // a later sign-in links nothing new
    const [linked] = await accountEntries(user.userId, 'user.sso_identity_linked')
    expect(await accountEntries(user.userId, 'user.sso_identity_linked')).toHaveLength(1)
    expect(linked).toMatchObject({
      actor_type: 'user',
      actor_id: user.userId,
      tenant_id: null,
      ip: '192.0.2.7',
      details: { connectionId: conn.id, tenantId: owner.tenantId },
    })

    const identityId = linked!.target_id!
    expect((await user.client.delete(`/users/me/sso-identities/${identityId}`)).status).toBe(200)
    expect(await accountEntries(user.userId, 'user.sso_identity_unlinked')).toMatchObject([
      { actor_id: user.userId, target_id: identityId, details: { connectionId: conn.id } },
    ])
    const activity = await user.client.get('/users/me/security-activity')
    expect(activity.json.data.map((e: Entry) => e.action)).toEqual(expect.arrayContaining(['user.sso_identity_linked', 'user.sso_identity_unlinked']))
    expect(await trail(owner.client, { action: 'user.sso_identity' })).toEqual([]) // account actions stay out of the tenant's log
  })
})

describe('domains', () => {
  test('added, a verification that finds no or the wrong TXT record recorded as a failure, then verified and removed', async () => {
    const owner = await tenantOwner(api.url)
    const domain = `${uniqueSlug('corp')}.test`
    const claim = await owner.client.post('/tenants/current/domains', { domain })
    expect(claim.status).toBe(201)
    const { id, verificationRecord } = claim.json.data
    expect((await owner.client.post('/tenants/current/domains', { domain })).status).toBe(201) // the same claim: nothing new
    const verify = () => owner.client.post(`/tenants/current/domains/${id}/verifications`, undefined, { 'idempotency-key': crypto.randomUUID() })
    expect((await verify()).status).toBe(400)
    dns.txt.set(verificationRecord.name, ['rcp-domain-verification=someone-elses-value'])
    expect((await verify()).status).toBe(400)
    dns.txt.set(verificationRecord.name, [verificationRecord.value])
    expect((await verify()).status).toBe(201)
    expect((await owner.client.delete(`/tenants/current/domains/${id}`)).status).toBe(200)

    const entries = (await trail(owner.client, { targetId: id })).reverse()
    expect(entries.map((e) => [e.action, e.outcome, e.reason])).toEqual([
      ['domain.added', 'success', null],
      ['domain.verified', 'failure', 'no_record'],
      ['domain.verified', 'failure', 'record_mismatch'],
      ['domain.verified', 'success', null],
      ['domain.removed', 'success', null],
    ])
    expect(entries.every((e) => e.actor.id === owner.userId && e.details?.domain === domain)).toBe(true)
    expect((await trail(owner.client, { action: 'domain.', outcome: 'failure' })).length).toBe(2)
  })
})

describe('who may read it', () => {
  test("another tenant's admin sees none of it and gets 404 for its ids; viewers and researchers get 403", async () => {
    const owner = await tenantOwner(api.url)
    const member = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    expect((await owner.client.patch(`/tenants/current/memberships/${member.membershipId}`, { role: 'researcher' })).status).toBe(200)
    const domain = await owner.client.post('/tenants/current/domains', { domain: `${uniqueSlug('iso')}.test` })
    const conn = await owner.client.post('/tenants/current/sso-connections', { issuer: 'https://idp.example.test', clientId: 'rcp', clientSecret: 'x-secret' })
    expect((await owner.client.patch('/tenants/current/auth-policy', { passwordMinLength: 10 })).status).toBe(200)
    expect((await trail(owner.client)).length).toBeGreaterThanOrEqual(5)

    const stranger = await tenantOwner(api.url)
    for (const targetId of [member.membershipId, domain.json.data.id, conn.json.data.id, owner.tenantId]) {
      expect(await trail(stranger.client, { targetId })).toEqual([])
    }
    // What making a tenant records: the tenant and its subscription (api/billing), nothing of the other tenant.
    expect((await trail(stranger.client)).map((e) => e.action).sort()).toEqual(['subscription.created', 'tenant.created'])
    expect((await stranger.client.get(`/tenants/current/memberships/${member.membershipId}`)).status).toBe(404)
    expect((await stranger.client.get(`/tenants/current/sso-connections/${conn.json.data.id}`)).status).toBe(404)
    expect((await stranger.client.delete(`/tenants/current/domains/${domain.json.data.id}`)).status).toBe(404)
    expect((await stranger.client.post(`/api-keys/memberships/${member.membershipId}/revocations`)).status).toBe(404)
    expect(await trail(stranger.client, { action: 'domain.' })).toEqual([]) // the refused delete recorded nothing

    const researcher = member // now a researcher
    const viewer = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    for (const who of [researcher, viewer]) {
      const res = await who.client.get(`/tenants/current/audit-log?${auditWindow()}`)
      expect({ status: res.status, code: res.json.code }).toEqual({ status: 403, code: 'PERMISSION_DENIED' })
    }
  })
})
