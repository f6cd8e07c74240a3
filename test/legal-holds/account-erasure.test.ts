import { describe, expect, test } from 'bun:test'
import { verifyChain } from '../../api/audit/queries'
import { useApi } from '../support/api'
import { sealAudit } from '../support/audit'
import { Client } from '../support/client'
import { PASSWORD, patFor, tenantOwner } from '../support/fixtures'
import { waitForMail } from '../support/mailbox'
import { memberOf } from '../tenancy/members'

const api = useApi()
const HOLDS = '/tenants/current/legal-holds'
const DAY = 86_400_000

describe('account erasure: the attacker first', () => {
  test('the sole owner of a tenant is refused (409 naming the tenant) and keeps everything', async () => {
    const owner = await tenantOwner(api.url)
    const res = await owner.client.delete('/users/me')
    expect([res.status, res.json.code]).toEqual([409, 'LAST_OWNER_PROTECTION'])
    expect(res.json.message).toContain(owner.tenantId)
    expect(res.json.errors).toEqual([{ path: `tenants.${owner.tenantId}`, message: 'the only owner of Test tenant' }])
    const me = await owner.client.get('/users/me')
    expect([me.status, me.json.data.user.email]).toEqual([200, owner.email])
    // With a second owner, the first may go.
    const second = await memberOf(api.url, api.sql, owner.tenantId, 'owner')
    expect((await second.client.get('/users/me')).status).toBe(200)
    expect((await owner.client.delete('/users/me')).status).toBe(200)
  })

  test("a member under a hold (their own, or their tenant's) is refused with LEGAL_HOLD_ACTIVE, naming neither tenant nor matter", async () => {
    const owner = await tenantOwner(api.url)
    const member = await memberOf(api.url, api.sql, owner.tenantId, 'researcher')
    const hold = (await owner.client.post(HOLDS, { matter: 'Secret matter', reason: 'r', scope: { kind: 'member', userId: member.userId } })).json.data
    const refused = await member.client.delete('/users/me')
    expect([refused.status, refused.json.code]).toEqual([409, 'LEGAL_HOLD_ACTIVE'])
    expect(refused.text).not.toContain('Secret matter')
    expect(refused.text).not.toContain(owner.tenantId)
    await owner.client.post(`${HOLDS}/${hold.id}/release`)
    const whole = (await owner.client.post(HOLDS, { matter: 'Whole', reason: 'r', scope: { kind: 'tenant' } })).json.data
    expect((await member.client.delete('/users/me')).json.code).toBe('LEGAL_HOLD_ACTIVE')
    await owner.client.post(`${HOLDS}/${whole.id}/release`)
    expect((await member.client.delete('/users/me')).status).toBe(200)
  })

  test('a PAT, or a session that last signed in more than 5 minutes ago, cannot erase the account', async () => {
    const owner = await tenantOwner(api.url)
    const member = await memberOf(api.url, api.sql, owner.tenantId, 'researcher')
    const pat = member.client.withBearer((await patFor(member.client, ['tenant:read'])).token)
    const viaPat = await pat.delete('/users/me')
    expect([viaPat.status, viaPat.json.code]).toEqual([403, 'FORBIDDEN'])
    await api.sql`update sessions set authenticated_at = now() - interval '6 minutes' where user_id = ${member.userId}`
    const stale = await member.client.delete('/users/me')
    expect([stale.status, stale.json.code]).toEqual([403, 'FORBIDDEN'])
    const [user] = await api.sql<{ status: string }[]>`select status from users where id = ${member.userId}`
    expect(user!.status).toBe('active')
    // Signing in again proves presence: then it works.
    const fresh = new Client(api.url)
    expect((await fresh.post('/sessions', { email: member.email, password: PASSWORD })).status).toBe(201)
    expect((await fresh.delete('/users/me')).status).toBe(200)
  })
})

describe('account erasure', () => {
  test('ends every session and token, removes memberships, erases factors and personal data; audited under a pseudonym; mailed; the address waits', async () => {
    const owner = await tenantOwner(api.url)
    const member = await memberOf(api.url, api.sql, owner.tenantId, 'researcher')
    await member.client.patch('/users/me', { displayName: 'Ada Lovelace' })
    const pat = member.client.withBearer((await patFor(member.client, ['tenant:read'])).token)
    const other = new Client(api.url)
    expect((await other.post('/sessions', { email: member.email, password: PASSWORD })).status).toBe(201)
    await api.sql`
      insert into webauthn_credentials (user_id, credential_id, public_key, sign_count, device_type, backed_up)
      values (${member.userId}, ${crypto.randomUUID()}, '\\x00'::bytea, 0, 'singleDevice', false)`
    const before = new Date()

    const res = await member.client.delete('/users/me')
    expect(res.status).toBe(200)
    expect(res.json.data).toMatchObject({ userId: member.userId, sessionsEnded: 2, tokensRevoked: 1, membershipsRemoved: 1 })
    expect(new Date(res.json.data.addressReusableAt).getTime() - new Date(res.json.data.erasedAt).getTime()).toBe(30 * DAY)
    expect(res.headers.get('set-cookie')).toContain('Max-Age=0')
    for (const c of [member.client, other, pat]) expect((await c.get('/users/me')).status).toBe(401)
    expect((await new Client(api.url).post('/sessions', { email: member.email, password: PASSWORD })).status).toBe(401)

    const pseudonym = `erased-${member.userId.replaceAll('-', '')}@erased.invalid`
    const [row] = await api.sql<{ email: string; display_name: string | null; password_hash: string | null; status: string }[]>`
      select email, display_name, password_hash, status from users where id = ${member.userId}`
    expect(row).toEqual({ email: pseudonym, display_name: null, password_hash: null, status: 'erased' })
    const left = await api.sql<{ n: number }[]>`
      select (select count(*) from webauthn_credentials where user_id = ${member.userId})
           + (select count(*) from memberships where user_id = ${member.userId} and status <> 'removed')
           + (select count(*) from sessions where user_id = ${member.userId} and revoked_at is null)
           + (select count(*) from api_keys where user_id = ${member.userId} and revoked_at is null) as n`
    expect(Number(left[0]!.n)).toBe(0)

    await sealAudit(api.sql)
    const entries = await api.sql<{ chain: string; action: string; actor_label: string | null; details: Record<string, unknown> }[]>`
      select chain, action, actor_label, details from audit_log where action in ('user.erased', 'membership.removed') and subject_user_id = ${member.userId} order by chain`
    expect(entries.map((e) => [e.chain, e.action, e.actor_label]).sort()).toEqual(
      [
        [member.userId, 'user.erased', pseudonym],
        [owner.tenantId, 'membership.removed', pseudonym],
      ].sort(),
    )
    // Nothing recorded from the erasure on carries the address; the tenant's sealed chain still verifies.
    const since = await api.sql<
      { n: number }[]
    >`select count(*)::int as n from audit_log where occurred_at >= ${before} and (actor_label = ${member.email} or details::text like ${`%${member.email}%`})`
    expect(since[0]!.n).toBe(0)
    const check = await verifyChain(api.sql, owner.tenantId, new Date(Date.now() - DAY), new Date(Date.now() + DAY))
    expect(check).toMatchObject({ first_broken_seq: null })
    expect(check.verified).toBeGreaterThan(1)

    const mail = await waitForMail(member.email, { subject: /erased/ })
    expect(mail.subject).toBe('Your Robot Control Plane account was erased')

    // The address is refused to a new account during the window, and free after it.
    const again = await new Client(api.url).post('/users', { email: member.email, password: PASSWORD })
    expect([again.status, again.json.code]).toEqual([409, 'EMAIL_ALREADY_REGISTERED'])
    await api.sql`update erased_addresses set reusable_at = now() - interval '1 second' where address_hash = sha256(convert_to(lower(${member.email}), 'UTF8'))`
    const later = await new Client(api.url).post('/users', { email: member.email, password: PASSWORD })
    expect(later.status).toBe(201)
    expect(later.json.data.user.id).not.toBe(member.userId)
  })
})

describe('personal data export', () => {
  test("a person's own data as JSON: profile, memberships, sessions, token and factor metadata, the entries they acted in; no secret, nothing of others", async () => {
    const owner = await tenantOwner(api.url)
    const member = await memberOf(api.url, api.sql, owner.tenantId, 'researcher')
    const pat = await patFor(owner.client, ['tenant:read'])
    const project = (await owner.client.post('/projects', { name: 'Mine', slug: 'mine' })).json.data
    await patFor(member.client, ['tenant:read'])
    await api.sql`
      insert into webauthn_credentials (user_id, credential_id, public_key, sign_count, device_type, backed_up, name)
      values (${owner.userId}, ${crypto.randomUUID()}, '\\x0102'::bytea, 0, 'singleDevice', false, 'laptop')`

    const res = await owner.client.get('/users/me/export')
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const x = res.json.data
    expect(x.profile).toMatchObject({ id: owner.userId, email: owner.email, status: 'active' })
    expect(x.memberships).toEqual([expect.objectContaining({ tenantId: owner.tenantId, role: 'owner', status: 'active' })])
    expect(x.sessions).toEqual([expect.objectContaining({ current: true })])
    expect(x.tokens).toEqual([expect.objectContaining({ id: pat.id, userId: owner.userId, scopes: ['tenant:read'] })])
    expect(x.secondFactors).toMatchObject({ totp: null, recoveryCodesLeft: 0, passkeys: [expect.objectContaining({ name: 'laptop' })] })
    const actions = x.auditEntries.map((e: { action: string; actor: { id: string } }) => [e.action, e.actor.id])
    expect(actions).toContainEqual(['api_key.created', owner.userId])
    expect(actions).toContainEqual(['project.created', owner.userId])
    expect(x.auditEntries.every((e: { actor: { id: string } }) => e.actor.id === owner.userId)).toBe(true)
    expect(x.auditEntries.some((e: { target: { id: string } | null }) => e.target?.id === project.id)).toBe(true)
    expect(x.auditEntriesTruncated).toBe(false)
    // No secret: not the token or its hash, not the session cookie, no factor secret, not the passkey public key (an audit entry hash is its chain link, not a secret).
    expect(res.text).not.toContain(pat.token)
    expect(res.text).not.toContain(owner.client.cookie!.split('=')[1]!)
    expect(res.text).not.toMatch(/token_?hash|code_?hash|publicKey|public_key|secret/i)

    const theirs = (await member.client.get('/users/me/export')).json.data
    expect(theirs.profile.id).toBe(member.userId)
    expect(theirs.tokens.map((t: { userId: string }) => t.userId)).toEqual([member.userId])
    expect(JSON.stringify(theirs)).not.toContain(owner.email)
  })
})
