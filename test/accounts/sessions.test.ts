import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startApi, type TestApi } from '../support/api'
import { Client } from '../support/client'
import { PASSWORD, patFor, signedUpUser, tenantOwner, uniqueEmail, uniqueSlug } from '../support/fixtures'
import { memberOf, signIn } from './helpers'

let api: TestApi
// Small throttle numbers, on a server of their own, so its counters cannot disturb the other tests.
let strict: TestApi
beforeAll(async () => {
  ;[api, strict] = await Promise.all([startApi(), startApi({ SIGNIN_ACCOUNT_LOCK_FAILURES: '5', SIGNIN_IP_LOCK_FAILURES: '12', SIGNIN_DELAY_BASE_MS: '150' })])
})
afterAll(async () => {
  await Promise.all([api.stop(), strict.stop()])
})

const anon = (base = api.url) => new Client(base)
const tokenOf = (c: Client) => c.cookie!.split('=')[1]!
// Issue 12: a tenant's domain claims count only once it proved control of the domain. The row is what a passed
// POST /tenants/current/domains/{id}/verifications leaves; the DNS TXT flow itself is in test/tenancy/sso-takeover.test.ts.
const verifiedDomain = (tenantId: string, domain: string) =>
  api.sql`insert into tenant_domains (tenant_id, domain, challenge_token, verified_at) values (${tenantId}, ${domain}, 'fixture', now())`

describe('sign-in', () => {
  test('an unknown email and a wrong password answer the same 401 UNAUTHORIZED', async () => {
    const { email } = await signedUpUser(api.url)
    const wrongPassword = await anon().post('/sessions', { email, password: 'not the password at all' })
    const unknownEmail = await anon().post('/sessions', { email: uniqueEmail('ghost'), password: PASSWORD })
    expect(wrongPassword.status).toBe(401)
    expect(unknownEmail.status).toBe(401)
    const strip = (j: any) => ({ ...j, requestId: undefined })
    expect(strip(wrongPassword.json)).toEqual(strip(unknownEmail.json))
  })

  test('failed attempts per account: free, then delayed exponentially, then 429 even with the right password', async () => {
    const { email } = await signedUpUser(strict.url)
    const attempt = async (password: string) => {
      const t = performance.now()
      const res = await anon(strict.url).post('/sessions', { email, password })
      return { res, ms: performance.now() - t }
    }
    const free = []
    for (let i = 0; i < 3; i++) free.push(await attempt('wrong password here'))
    // 3 failures: the 4th attempt waits the base delay, the 5th twice that.
    const fourth = await attempt('wrong password here')
    const fifth = await attempt('wrong password here')
    expect([...free, fourth, fifth].map((a) => a.res.json.code)).toEqual(Array(5).fill('UNAUTHORIZED'))
    expect(fourth.ms).toBeGreaterThanOrEqual(150)
    expect(fifth.ms).toBeGreaterThanOrEqual(300)
    const locked = await attempt(PASSWORD)
    expect(locked.res.status).toBe(429)
    expect(locked.res.json.code).toBe('RATE_LIMITED')
    expect(Number(locked.res.headers.get('retry-after'))).toBeGreaterThan(0)
    // Another account from the same address is not locked (its count is its own).
    const other = await signedUpUser(strict.url)
    expect((await anon(strict.url).post('/sessions', { email: other.email, password: PASSWORD })).status).toBe(201)
  })

  test('a success clears the account count', async () => {
    const { email } = await signedUpUser(strict.url)
    for (let i = 0; i < 3; i++) await anon(strict.url).post('/sessions', { email, password: 'wrong password here' })
    expect((await anon(strict.url).post('/sessions', { email, password: PASSWORD })).status).toBe(201)
    for (let i = 0; i < 3; i++) expect((await anon(strict.url).post('/sessions', { email, password: 'wrong password here' })).status).toBe(401)
    expect((await anon(strict.url).post('/sessions', { email, password: PASSWORD })).status).toBe(201)
  })

  test('failed attempts per address: spraying many accounts from one address ends in 429', async () => {
    // A fresh server: the address counter is shared by every test on it.
    const own = await startApi({ SIGNIN_ACCOUNT_LOCK_FAILURES: '100', SIGNIN_IP_LOCK_FAILURES: '4', SIGNIN_DELAY_BASE_MS: '1' })
    try {
      const codes = []
      for (let i = 0; i < 5; i++) codes.push((await anon(own.url).post('/sessions', { email: uniqueEmail('spray'), password: PASSWORD })).json.code)
      expect(codes).toEqual(['UNAUTHORIZED', 'UNAUTHORIZED', 'UNAUTHORIZED', 'UNAUTHORIZED', 'RATE_LIMITED'])
    } finally {
      await own.stop()
    }
  })

  test("lifetimes come from the tenant's auth policy", async () => {
    const owner = await tenantOwner(api.url)
    expect((await owner.client.patch('/tenants/current/auth-policy', { sessionAbsoluteMinutes: 120, sessionIdleMinutes: 15 })).status).toBe(200)
    const fresh = await signIn(api.url, owner.email, PASSWORD)
    const self = await fresh.get('/tokens/self')
    const left = new Date(self.json.data.expiresAt).getTime() - Date.now()
    // The idle deadline (15 minutes) comes first.
    expect(left).toBeLessThanOrEqual(15 * 60_000)
    expect(left).toBeGreaterThan(14 * 60_000)
    const [row] =
      await api.sql`select expires_at - created_at as absolute, idle_timeout_seconds from sessions where user_id = ${owner.userId} order by created_at desc limit 1`
    expect(row!.idle_timeout_seconds).toBe(15 * 60)
    expect(String(row!.absolute)).toBe('02:00:00')
  })

  test('a tenant that allows no password sign-in (or enforces SSO) refuses it', async () => {
    const owner = await tenantOwner(api.url)
    const domain = `${uniqueSlug('corp')}.example`
    const member = await memberOf(api.url, owner.client, 'viewer', `viewer@${domain}`)
    expect((await owner.client.patch('/tenants/current/auth-policy', { ssoEnforced: true })).status).toBe(200)
    // Issue 12: SSO is enforced only on members whose email domain the tenant verified.
    expect((await anon().post('/sessions', { email: member.email, password: PASSWORD })).status).toBe(201)
    await verifiedDomain(owner.tenantId, domain)
    const res = await anon().post('/sessions', { email: member.email, password: PASSWORD })
    expect(res.status).toBe(401)
    expect(res.json.code).toBe('UNAUTHORIZED')
  })
})

describe('session management', () => {
  test('DELETE /sessions/{id}: another device ends at once; the current one is 409; another user’s is 404', async () => {
    const { client, email } = await tenantOwner(api.url)
    const phone = await signIn(api.url, email, PASSWORD)
    const list = await client.get('/users/me/sessions')
    const phoneId = list.json.data.find((s: any) => !s.current).id
    const currentId = list.json.data.find((s: any) => s.current).id

    expect((await phone.get('/users/me')).status).toBe(200)
    const del = await client.delete(`/sessions/${phoneId}`)
    expect(del.status).toBe(204)
    expect((await phone.get('/users/me')).json.code).toBe('TOKEN_REVOKED')
    expect((await anon().withBearer(tokenOf(phone)).get('/users/me')).json.code).toBe('TOKEN_REVOKED')

    const self = await client.delete(`/sessions/${currentId}`)
    expect(self.status).toBe(409)
    expect(self.json.code).toBe('CURRENT_SESSION_NOT_REVOCABLE')

    const stranger = await tenantOwner(api.url)
    const theirs = (await stranger.client.get('/users/me/sessions')).json.data[0].id
    for (const id of [theirs, phoneId, crypto.randomUUID(), 'nope']) {
      const res = await client.delete(`/sessions/${id}`)
      expect(res.status).toBe(404)
      expect(res.json.code).toBe('SESSION_NOT_FOUND')
    }
    expect((await stranger.client.get('/users/me')).status).toBe(200)
  })

  test('other-session invalidation keeps this one; bulk invalidation ends all, this one included', async () => {
    const { client, email } = await tenantOwner(api.url)
    const others = [await signIn(api.url, email, PASSWORD), await signIn(api.url, email, PASSWORD)]
    const res = await client.post('/users/me/other-session-invalidation-requests')
    expect(res.status).toBe(200)
    expect(res.json.data).toEqual({ invalidated: 2 })
    for (const o of others) expect((await o.get('/users/me')).json.code).toBe('TOKEN_REVOKED')
    expect((await client.get('/users/me')).status).toBe(200)

    const again = await signIn(api.url, email, PASSWORD)
    const bulk = await client.post('/sessions/bulk-invalidation-requests')
    expect(bulk.status).toBe(201)
    expect(bulk.json.data).toEqual({ invalidated: 2 })
    expect((await client.get('/users/me')).status).toBe(401)
    expect((await again.get('/users/me')).json.code).toBe('TOKEN_REVOKED')
  })

  test('membership switch: to another of my memberships, with that tenant’s lifetimes; not to anyone else’s', async () => {
    const a = await tenantOwner(api.url)
    const b = await tenantOwner(api.url)
    const inB = await memberOf(api.url, b.client, 'admin')
    expect((await b.client.patch('/tenants/current/auth-policy', { sessionAbsoluteMinutes: 30, sessionIdleMinutes: 10 })).status).toBe(200)
    // Provisioning cannot add an existing account to another tenant.
    expect((await a.client.post('/users', { mode: 'create', role: 'viewer', email: inB.email })).json.code).toBe('EMAIL_ALREADY_REGISTERED')
    const me = await inB.client.get('/users/me')
    expect(me.json.data.currentMembership.tenantId).toBe(b.tenantId)

    const owner = a.client
    const created = await owner.post('/tenants', { name: 'Second', slug: uniqueSlug() })
    expect(created.status).toBe(201)
    const first = a.membershipId
    const switched = await owner.post('/sessions/current-membership-switches', { membershipId: first })
    expect(switched.status).toBe(201)
    expect(switched.json.data.currentMembership.id).toBe(first)
    expect((await owner.get('/users/me')).json.data.currentMembership.id).toBe(first)

    const notMine = await owner.post('/sessions/current-membership-switches', { membershipId: inB.membershipId })
    expect(notMine.status).toBe(403)
    expect(notMine.json.code).toBe('MEMBERSHIP_NOT_FOUND')

    // Into B's policy: the absolute deadline shrinks to B's 30 minutes.
    const [m] = await api.sql`insert into memberships (tenant_id, user_id, role) values (${b.tenantId}, ${a.userId}, 'viewer') returning id`
    expect((await owner.post('/sessions/current-membership-switches', { membershipId: m!.id })).status).toBe(201)
    const left = new Date((await owner.get('/tokens/self')).json.data.expiresAt).getTime() - Date.now()
    expect(left).toBeLessThanOrEqual(10 * 60_000)

    await api.sql`update memberships set status = 'disabled' where id = ${m!.id}`
    expect((await owner.post('/sessions/current-membership-switches', { membershipId: m!.id })).json.code).toBe('MEMBERSHIP_DISABLED')
    await api.sql`update memberships set status = 'active', expires_at = now() - interval '1 minute' where id = ${m!.id}`
    expect((await owner.post('/sessions/current-membership-switches', { membershipId: m!.id })).json.code).toBe('MEMBERSHIP_EXPIRED')
    const { token } = await patFor(inB.client, ['tenant:read'])
    expect((await anon().withBearer(token).post('/sessions/current-membership-switches', { membershipId: inB.membershipId })).json.code).toBe('BAD_REQUEST')
  })
})

describe('login options', () => {
  test('public; by the email domain only: a tenant enforcing SSO for its domain closes password and passkey', async () => {
    const plain = await anon().get('/auth/login-options')
    expect(plain.status).toBe(200)
    expect(plain.json.data).toEqual({ password: true, passkey: true, ssoEnforced: false, sso: [] })
    const owner = await tenantOwner(api.url)
    const domain = `${uniqueSlug('corp')}.example`
    expect((await owner.client.patch('/tenants/current/auth-policy', { allowedEmailDomains: [domain], ssoEnforced: true })).status).toBe(200)
    // Issue 12: an unverified claim changes nothing; the tenant's proven domain does.
    const unproven = await anon().get(`/auth/login-options?email=${encodeURIComponent(`anyone@${domain}`)}`)
    expect(unproven.json.data).toEqual({ password: true, passkey: true, ssoEnforced: false, sso: [] })
    await verifiedDomain(owner.tenantId, domain)
    const corp = await anon().get(`/auth/login-options?email=${encodeURIComponent(`anyone@${domain}`)}`)
    expect(corp.json.data).toEqual({ password: false, passkey: false, ssoEnforced: true, sso: [] })
    expect((await anon().get(`/auth/login-options?email=someone@elsewhere.example`)).json.data.password).toBe(true)
  })

  test('offers the enabled SSO connections that claim the email domain, and only those', async () => {
    const owner = await tenantOwner(api.url)
    const domain = `${uniqueSlug('sso')}.example`
    const create = (name: string, emailDomains: string[]) =>
      owner.client.post('/tenants/current/sso-connections', {
        name,
        issuer: 'https://idp.example.test',
        clientId: 'rcp',
        clientSecret: 'not-used-here',
        emailDomains,
        defaultRole: 'viewer',
      })
    const claimed = await create('Corp IdP', [domain])
    expect(claimed.status).toBe(201)
    expect((await create('Any address', [])).status).toBe(201)
    const off = await create('Disabled', [domain])
    expect((await owner.client.patch(`/tenants/current/sso-connections/${off.json.data.id}`, { enabled: false })).status).toBe(200)
    // Issue 12: connections are offered only for a domain their tenant verified.
    expect((await anon().get(`/auth/login-options?email=${encodeURIComponent(`ada@${domain}`)}`)).json.data.sso).toEqual([])
    await verifiedDomain(owner.tenantId, domain)
    const res = await anon().get(`/auth/login-options?email=${encodeURIComponent(`ada@${domain}`)}`)
    expect(res.json.data.sso).toEqual([{ connectionId: claimed.json.data.id, name: 'Corp IdP' }])
    expect((await anon().get('/auth/login-options?email=ada@elsewhere.example')).json.data.sso).toEqual([])
  })
})

describe('GET /sessions/current (the CSRF token of a session the SSO redirect opened)', () => {
  test("answers the session's own CSRF token, not stored, to its cookie only: a leaked PAT and another site get nothing", async () => {
    const owner = await tenantOwner(api.url)
    const page = await owner.client.get('/sessions/current', { origin: 'https://evil.example' })
    expect(page.status).toBe(200)
    expect(page.json.data.csrfToken).toBe(owner.client.csrf)
    expect(page.headers.get('cache-control')).toBe('no-store')
    // No CORS: a page on another origin can send the request but never read the answer.
    expect(page.headers.get('access-control-allow-origin')).toBeNull()
    const { token } = await patFor(owner.client, ['tenant:read', 'tenant:manage'])
    const byPat = await anon().withBearer(token).get('/sessions/current')
    expect([401, 403]).toContain(byPat.status)
    expect(byPat.text).not.toContain(owner.client.csrf!)
    expect((await anon().get('/sessions/current')).status).toBe(401)
  })
})
