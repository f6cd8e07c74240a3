// A session lands in, or moves to, a membership only when the way it authenticated satisfies that tenant's policy
// (allowed methods, SSO enforcement, MFA), and then takes that tenant's lifetimes: on a switch, on the acceptance of
// an invitation by a signed-in session, and on a fresh landing. Attacks first, then the decisions around them.
import { describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { sha256 } from '../../api/platform/crypto'
import { newSessionToken } from '../../api/identity/tokens'
import { useApi } from '../support/api'
import { Client } from '../support/client'
import { PASSWORD, tenantOwner } from '../support/fixtures'
import { codeAt, enrolTotp, signIn } from '../mfa/helpers'

const api = useApi()

/** `user` joins `owner`'s tenant as a researcher (the way an accepted invitation adds one), session untouched. */
async function joins(owner: { tenantId: string }, user: { userId: string }) {
  const [m] = await api.sql<{ id: string }[]>`
    insert into memberships (tenant_id, user_id, role) values (${owner.tenantId}, ${user.userId}, 'researcher') returning id`
  return m!.id
}

async function setPolicy(owner: { client: Client }, patch: Record<string, unknown>) {
  const res = await owner.client.patch('/tenants/current/auth-policy', patch)
  if (res.status !== 200) throw new Error(`policy: ${res.status} ${res.text}`)
}

/** An invitation of `email` to `owner`'s tenant whose token the test knows (the mail flow is in invitations.test.ts). */
async function invitation(owner: { tenantId: string; userId: string }, email: string) {
  const token = randomBytes(32).toString('base64url')
  await api.sql`insert into tenant_invitations (tenant_id, email, role, token_hash, invited_by, expires_at)
                values (${owner.tenantId}, ${email}, 'viewer', ${sha256(token)}, ${owner.userId}, now() + interval '1 day')`
  return token
}

/** What an SSO sign-in through a connection of `owner`'s tenant leaves behind: a session recorded as SSO, whose
 *  provider stood in for the second factor. (The provider round trip itself is in test/tenancy/sso.test.ts.) */
async function ssoSession(owner: { tenantId: string; membershipId?: string }, userId: string, membershipId: string) {
  const [c] = await api.sql<{ id: string }[]>`
    insert into sso_connections (tenant_id, name, issuer, client_id, client_secret_sealed, default_role)
    values (${owner.tenantId}, 'IdP', 'https://idp.example.test', 'client', ${Buffer.from('x')}, 'viewer') returning id`
  const { token, hash } = newSessionToken()
  await api.sql`
    insert into sessions (user_id, token_hash, membership_id, expires_at, idle_timeout_seconds, auth_method, sso_connection_id)
    values (${userId}, ${hash}, ${membershipId}, now() + interval '1 day', 3600, 'sso', ${c!.id})`
  return new Client(api.url).withBearer(token)
}

const currentTenant = async (c: Client) => (await c.get('/users/me')).json.data.currentMembership?.tenantId ?? null

describe("membership switches obey the target tenant's policy", () => {
  test('attack: a password session switches into a tenant that enforces SSO (or allows only passkeys)', async () => {
    const user = await tenantOwner(api.url)
    const sso = await tenantOwner(api.url)
    const passkeys = await tenantOwner(api.url)
    const inSso = await joins(sso, user)
    const inPasskeys = await joins(passkeys, user)
    await setPolicy(sso, { ssoEnforced: true })
    await setPolicy(passkeys, { allowedSignInMethods: ['passkey'] })

    const intoSso = await user.client.post('/sessions/current-membership-switches', { membershipId: inSso })
    expect({ status: intoSso.status, code: intoSso.json.code }).toEqual({ status: 403, code: 'FORBIDDEN' })
    const intoPasskeys = await user.client.post('/sessions/current-membership-switches', { membershipId: inPasskeys })
    expect({ status: intoPasskeys.status, code: intoPasskeys.json.code }).toEqual({ status: 403, code: 'FORBIDDEN' })
    expect(await currentTenant(user.client)).toBe(user.tenantId)
  })

  test("attack: an SSO session of another tenant's connection switches into an MFA-required tenant of a user who has TOTP", async () => {
    const user = await tenantOwner(api.url)
    const { secret } = await enrolTotp(user.client)
    const strict = await tenantOwner(api.url)
    const inStrict = await joins(strict, user)
    await setPolicy(strict, { mfaRequired: true })

    const viaSso = await ssoSession(user, user.userId, user.membershipId)
    const res = await viaSso.post('/sessions/current-membership-switches', { membershipId: inStrict })
    expect({ status: res.status, code: res.json.code }).toEqual({ status: 401, code: 'MFA_REQUIRED' })
    expect(await currentTenant(viaSso)).toBe(user.tenantId)

    // The same account signed in with its password and TOTP verified in this session switches in.
    const { client, session } = await signIn(api.url, user.email)
    const confirmed = await client.post('/sessions/mfa-challenges/confirmations', {
      challengeId: session.mfaChallenge.id,
      method: 'totp',
      code: await codeAt(secret),
    })
    expect(confirmed.status).toBe(201)
    expect((await client.post('/sessions/current-membership-switches', { membershipId: inStrict })).status).toBe(201)
    expect(await currentTenant(client)).toBe(strict.tenantId)
  })

  test('decision: an account without any second factor switches into an MFA-required tenant gated to enrolment', async () => {
    const user = await tenantOwner(api.url)
    const strict = await tenantOwner(api.url)
    const inStrict = await joins(strict, user)
    await setPolicy(strict, { mfaRequired: true })
    expect((await user.client.post('/sessions/current-membership-switches', { membershipId: inStrict })).status).toBe(201)
    const gated = await user.client.get('/tenants/current/storage-summary')
    expect({ status: gated.status, code: gated.json.code }).toEqual({ status: 401, code: 'MFA_REQUIRED' })
    expect((await user.client.get('/users/me/mfa')).status).toBe(200)
  })
})

describe('a second factor enrolled in a session counts as verified in it', () => {
  test('a session that has just enrolled TOTP switches into an MFA-required tenant without signing in again', async () => {
    const user = await tenantOwner(api.url)
    const strict = await tenantOwner(api.url)
    const inStrict = await joins(strict, user)
    await setPolicy(strict, { mfaRequired: true })
    await enrolTotp(user.client)
    const res = await user.client.post('/sessions/current-membership-switches', { membershipId: inStrict })
    expect({ status: res.status, tenant: res.json.data?.currentMembership?.tenantId }).toEqual({ status: 201, tenant: strict.tenantId })
  })
})

describe('invitation acceptance by a signed-in session', () => {
  test('attack: a password session accepts an invitation into an SSO-enforced tenant and lands in it', async () => {
    const user = await tenantOwner(api.url)
    const sso = await tenantOwner(api.url)
    await setPolicy(sso, { ssoEnforced: true })
    const res = await user.client.post('/tenant-invitations/acceptance-records', { token: await invitation(sso, user.email) })
    // The membership is made (the invitation is spent), but this session stays where it was.
    expect(res.status).toBe(201)
    expect(res.json.data.memberships.map((m: any) => m.tenantId)).toContain(sso.tenantId)
    expect(res.json.data.currentMembership.tenantId).toBe(user.tenantId)
    expect(await currentTenant(user.client)).toBe(user.tenantId)
  })

  test('attack: an SSO session of another tenant accepts into an MFA-required tenant without its second factor', async () => {
    const user = await tenantOwner(api.url)
    await enrolTotp(user.client)
    const strict = await tenantOwner(api.url)
    await setPolicy(strict, { mfaRequired: true })
    const viaSso = await ssoSession(user, user.userId, user.membershipId)
    const res = await viaSso.post('/tenant-invitations/acceptance-records', { token: await invitation(strict, user.email) })
    expect(res.status).toBe(201)
    expect(res.json.data.currentMembership.tenantId).toBe(user.tenantId)
    expect(await currentTenant(viaSso)).toBe(user.tenantId)
  })

  test("an admitted acceptance moves the session under the new tenant's lifetimes", async () => {
    const user = await tenantOwner(api.url)
    const short = await tenantOwner(api.url)
    await setPolicy(short, { sessionAbsoluteMinutes: 30, sessionIdleMinutes: 10 })
    const res = await user.client.post('/tenant-invitations/acceptance-records', { token: await invitation(short, user.email) })
    expect(res.json.data.currentMembership.tenantId).toBe(short.tenantId)
    const mine = (await user.client.get('/users/me/sessions')).json.data.find((s: any) => s.current)
    expect(Date.parse(mine.expiresAt) - Date.parse(mine.createdAt)).toBeLessThanOrEqual(30 * 60_000)
  })

  test('a new account accepting into an SSO-enforced tenant gets a session without a tenant, not one inside it', async () => {
    const owner = await tenantOwner(api.url)
    await setPolicy(owner, { ssoEnforced: true })
    const email = `newcomer-${Date.now().toString(36)}@example.test`
    const anon = new Client(api.url)
    const res = await anon.post('/tenant-invitations/acceptance-records', { token: await invitation(owner, email), password: PASSWORD })
    expect(res.status).toBe(201)
    expect(await currentTenant(anon)).toBeNull()
  })
})
