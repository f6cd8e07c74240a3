import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { Client } from '../support/client'
import { PASSWORD, signedUpUser, tenantOwner, uniqueEmail } from '../support/fixtures'
import { waitForMail } from '../support/mailbox'
import { memberOf } from './members'

const api = useApi()

const tokenIn = (text: string) => decodeURIComponent(/[?&]token=([^\s&]+)/.exec(text)![1]!)

async function invite(owner: { client: Client }, email: string, role = 'researcher') {
  const res = await owner.client.post('/tenant-invitations', { email, role }, { 'idempotency-key': crypto.randomUUID() })
  if (res.status !== 201) throw new Error(`invite failed: ${res.status} ${res.text}`)
  const mail = await waitForMail(email.toLowerCase(), { subject: /invited/ })
  return { invitation: res.json.data, token: tokenIn(mail.text), mail }
}

describe('tenant invitations', () => {
  test('a new address: the mailed link creates the account, joins it with the role and signs it in', async () => {
    const owner = await tenantOwner(api.url)
    const email = uniqueEmail('newcomer')
    const { invitation, token, mail } = await invite(owner, email, 'researcher')
    expect(invitation).toMatchObject({ email, role: 'researcher', status: 'pending', tenantId: owner.tenantId, invitedByUserId: owner.userId })
    expect(mail.text).toContain('/invitations/accept?token=')
    // Only the digest is stored.
    const [row] = await api.sql`select token_hash from tenant_invitations where id = ${invitation.id}`
    expect(Buffer.from(row!.token_hash).toString('hex')).toBe(new Bun.CryptoHasher('sha256').update(token).digest('hex'))

    const anon = new Client(api.url)
    const noPassword = await anon.post('/tenant-invitations/acceptance-records', { token })
    expect(noPassword.status).toBe(400)
    expect(noPassword.json.code).toBe('VALIDATION_ERROR')
    const res = await anon.post('/tenant-invitations/acceptance-records', { token, password: PASSWORD, displayName: 'Ada' })
    expect(res.status).toBe(201)
    expect(res.json.data.user).toMatchObject({ email, displayName: 'Ada' })
    expect(res.json.data.currentMembership).toMatchObject({ tenantId: owner.tenantId, role: 'researcher', status: 'active' })
    expect((await anon.get('/tokens/self')).json.data.tenantId).toBe(owner.tenantId)
    expect((await new Client(api.url).post('/sessions', { email, password: PASSWORD })).status).toBe(201)

    const again = await new Client(api.url).post('/tenant-invitations/acceptance-records', { token, password: PASSWORD })
    expect(again.status).toBe(409)
    expect(again.json.code).toBe('INVITATION_ALREADY_ACCEPTED')
    expect((await owner.client.get('/tenant-invitations?status=accepted')).json.data.map((i: any) => i.id)).toEqual([invitation.id])
  })

  test("a new account's password follows the inviting tenant's policy", async () => {
    const owner = await tenantOwner(api.url)
    expect((await owner.client.patch('/tenants/current/auth-policy', { passwordMinLength: 40 })).status).toBe(200)
    const { token } = await invite(owner, uniqueEmail('strict'))
    const short = await new Client(api.url).post('/tenant-invitations/acceptance-records', { token, password: PASSWORD })
    expect(short.status).toBe(400)
    expect(short.json).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ path: 'body.password' }] })
    const ok = await new Client(api.url).post('/tenant-invitations/acceptance-records', { token, password: `${PASSWORD} and a long tail` })
    expect(ok.status).toBe(201)
  })

  test('an existing account joins while signed in; another signed-in address is INVITATION_EMAIL_MISMATCH', async () => {
    const owner = await tenantOwner(api.url)
    const invitee = await signedUpUser(api.url)
    const stranger = await signedUpUser(api.url)
    const { token } = await invite(owner, invitee.email, 'viewer')
    const mismatch = await stranger.client.post('/tenant-invitations/acceptance-records', { token })
    expect(mismatch.status).toBe(409)
    expect(mismatch.json.code).toBe('INVITATION_EMAIL_MISMATCH')
    // Anonymous, for an address that has an account: sign in first.
    expect((await new Client(api.url).post('/tenant-invitations/acceptance-records', { token, password: PASSWORD })).status).toBe(401)
    const res = await invitee.client.post('/tenant-invitations/acceptance-records', { token })
    expect(res.status).toBe(201)
    expect(res.json.data.currentMembership).toMatchObject({ tenantId: owner.tenantId, role: 'viewer' })
    expect(res.json.data.session).toBeUndefined()
  })

  test('INVITATION_INVALID, INVITATION_EXPIRED and INVITATION_REVOKED; admins list and revoke pending ones', async () => {
    const owner = await tenantOwner(api.url)
    const anon = new Client(api.url)
    const invalid = await anon.post('/tenant-invitations/acceptance-records', { token: 'not-a-token', password: PASSWORD })
    expect(invalid.status).toBe(400)
    expect(invalid.json.code).toBe('INVITATION_INVALID')

    const expiring = await invite(owner, uniqueEmail('late'))
    await api.sql`update tenant_invitations set expires_at = now() - interval '1 second' where id = ${expiring.invitation.id}`
    const expired = await anon.post('/tenant-invitations/acceptance-records', { token: expiring.token, password: PASSWORD })
    expect(expired.status).toBe(400)
    expect(expired.json.code).toBe('INVITATION_EXPIRED')

    const email = uniqueEmail('withdrawn')
    const pending = await invite(owner, email)
    const listed = await owner.client.get('/tenant-invitations')
    expect(listed.json.data.map((i: any) => i.id)).toEqual([pending.invitation.id])
    expect((await owner.client.get('/tenant-invitations?status=expired')).json.data.map((i: any) => i.id)).toEqual([expiring.invitation.id])
    const revoked = await owner.client.delete(`/tenant-invitations/${pending.invitation.id}`)
    expect(revoked.status).toBe(200)
    expect(revoked.json.data.status).toBe('revoked')
    const refused = await anon.post('/tenant-invitations/acceptance-records', { token: pending.token, password: PASSWORD })
    expect(refused.status).toBe(409)
    expect(refused.json.code).toBe('INVITATION_REVOKED')
    expect((await owner.client.get('/tenant-invitations')).json.data).toEqual([])
    expect((await owner.client.delete(`/tenant-invitations/${crypto.randomUUID()}`)).status).toBe(404)

    // A new invitation to the same address supersedes the open one.
    const first = await invite(owner, uniqueEmail('twice'))
    const second = await owner.client.post('/tenant-invitations', { email: first.invitation.email, role: 'viewer' })
    expect(second.status).toBe(201)
    expect((await anon.post('/tenant-invitations/acceptance-records', { token: first.token, password: PASSWORD })).json.code).toBe('INVITATION_REVOKED')
  })

  test('sending needs tenant:manage; owners only invite owners; members are USER_ALREADY_MEMBER; replays are idempotent', async () => {
    const owner = await tenantOwner(api.url)
    const admin = await memberOf(api.url, api.sql, owner.tenantId, 'admin')
    const viewer = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    expect((await viewer.client.post('/tenant-invitations', { email: uniqueEmail(), role: 'viewer' })).json.code).toBe('PERMISSION_DENIED')
    const asOwner = await admin.client.post('/tenant-invitations', { email: uniqueEmail(), role: 'owner' })
    expect(asOwner.status).toBe(400)
    expect(asOwner.json.code).toBe('INVALID_ROLE_TRANSITION')
    const member = await owner.client.post('/tenant-invitations', { email: viewer.email, role: 'admin' })
    expect(member.status).toBe(409)
    expect(member.json.code).toBe('USER_ALREADY_MEMBER')
    const key = crypto.randomUUID()
    const body = { email: uniqueEmail('idem'), role: 'viewer' }
    const a = await owner.client.post('/tenant-invitations', body, { 'idempotency-key': key })
    const b = await owner.client.post('/tenant-invitations', body, { 'idempotency-key': key })
    expect(b.headers.get('idempotent-replayed')).toBe('true')
    expect(b.json.data.id).toBe(a.json.data.id)
    expect((await owner.client.get('/tenant-invitations')).json.data.length).toBe(1)
  })

  test('a removed member comes back through an invitation, with the invited role', async () => {
    const owner = await tenantOwner(api.url)
    const m = await memberOf(api.url, api.sql, owner.tenantId, 'admin')
    await owner.client.delete(`/tenants/current/memberships/${m.membershipId}`)
    const { token } = await invite(owner, m.email, 'viewer')
    const res = await m.client.post('/tenant-invitations/acceptance-records', { token })
    expect(res.status).toBe(201)
    expect(res.json.data.currentMembership).toMatchObject({ id: m.membershipId, role: 'viewer', status: 'active' })
  })
})

describe('registration invitations', () => {
  test('mail a token; validation shows the address; completion creates the account and a session', async () => {
    const email = uniqueEmail('reg')
    const anon = new Client(api.url)
    const created = await anon.post('/registration-invitations', { email }, { 'idempotency-key': crypto.randomUUID() })
    expect(created.status).toBe(201)
    expect(created.json.data).toMatchObject({ email })
    const token = tokenIn((await waitForMail(email, { subject: /account/ })).text)
    const [row] = await api.sql`select token_hash from registration_invitations where lower(email) = ${email}`
    expect(Buffer.from(row!.token_hash).toString('hex')).toBe(new Bun.CryptoHasher('sha256').update(token).digest('hex'))

    expect((await anon.get(`/registration-invitations/validation?token=${encodeURIComponent(token)}`)).json.data).toEqual({ email })
    expect((await anon.get('/registration-invitations/validation?token=unknown')).json.data).toBeNull()
    expect((await anon.get('/registration-invitations/validation')).json.code).toBe('VALIDATION_ERROR')
    expect((await anon.get('/registration-invitations/validation?token=')).json.code).toBe('VALIDATION_ERROR')
    expect((await anon.post('/registration-invitations/completions', { token, password: 'short' })).json.code).toBe('PASSWORD_POLICY_VIOLATION')

    const done = await anon.post('/registration-invitations/completions', { token, password: PASSWORD, displayName: 'Reg' })
    expect(done.status).toBe(201)
    expect(done.json.data.user).toMatchObject({ email, displayName: 'Reg' })
    expect(done.json.data.session.csrfToken).toEqual(expect.any(String))
    expect((await anon.get('/users/me')).json.data.user.email).toBe(email)
    expect((await anon.get(`/registration-invitations/validation?token=${encodeURIComponent(token)}`)).json.data).toBeNull()
    const reused = await new Client(api.url).post('/registration-invitations/completions', { token, password: PASSWORD })
    expect(reused.status).toBe(409)
    expect(reused.json.code).toBe('INVITATION_ALREADY_ACCEPTED')
    const registered = await new Client(api.url).post('/registration-invitations', { email })
    expect(registered.status).toBe(409)
    expect(registered.json.code).toBe('EMAIL_ALREADY_REGISTERED')
  })

  test('unknown tokens are INVITATION_INVALID; expired ones REGISTRATION_INVITATION_EXPIRED', async () => {
    const email = uniqueEmail('regexp')
    const anon = new Client(api.url)
    await anon.post('/registration-invitations', { email })
    const token = tokenIn((await waitForMail(email, { subject: /account/ })).text)
    await api.sql`update registration_invitations set expires_at = now() - interval '1 second' where lower(email) = ${email}`
    expect((await anon.get(`/registration-invitations/validation?token=${encodeURIComponent(token)}`)).json.data).toBeNull()
    const expired = await anon.post('/registration-invitations/completions', { token, password: PASSWORD })
    expect(expired.status).toBe(400)
    expect(expired.json.code).toBe('REGISTRATION_INVITATION_EXPIRED')
    const invalid = await anon.post('/registration-invitations/completions', { token: 'nope', password: PASSWORD })
    expect(invalid.status).toBe(400)
    expect(invalid.json.code).toBe('INVITATION_INVALID')
  })
})
