// Issue 12, account takeover through single sign-on: each attack runs against real servers (the API, a real
// OpenID Provider, Chromium, a UDP DNS responder) and must fail. A tenant owner controls their own connection's
// provider, so any claim it makes about an address is the attacker's word.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { startApi, type TestApi } from '../support/api'
import { releaseChromium, sharedChromium } from '../support/chromium'
import { Client } from '../support/client'
import { startDns, type TestDns } from '../support/dns'
import { PASSWORD, signedUpUser, tenantOwner, uniqueEmail, uniqueSlug } from '../support/fixtures'
import { browserLink, browserSignIn, CLIENT_ID, CLIENT_SECRET, startOidcProvider, type TestProvider } from '../support/oidc'
import { csrfTokenFor } from '../../api/identity/tokens'
import { enrolTotp } from '../mfa/helpers'

let api: TestApi
let idp: TestProvider
let dns: TestDns
let browser: Browser

beforeAll(async () => {
  dns = await startDns()
  api = await startApi({ DOMAIN_VERIFICATION_DNS_SERVERS: dns.server })
  idp = await startOidcProvider(api.url)
  browser = await sharedChromium()
})
afterAll(async () => {
  await releaseChromium(browser)
  idp?.stop()
  dns?.stop()
  await api.stop()
})

type Owner = Awaited<ReturnType<typeof tenantOwner>>

async function connection(owner: Owner, emailDomains: string[] = ['example.test'], defaultRole = 'viewer') {
  const res = await owner.client.post('/tenants/current/sso-connections', {
    issuer: idp.issuer,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    emailDomains,
    defaultRole,
  })
  if (res.status !== 201) throw new Error(`connection: ${res.status} ${res.text}`)
  return res.json.data as { id: string }
}

const startUrl = (c: { id: string }) => `${api.url}/v1/auth/sso/${c.id}/start`
const sessionRow = async (token: string | undefined) =>
  (await api.sql`select id, user_id from sessions where token_hash = sha256(convert_to(${token ?? ''}, 'UTF8'))`)[0] as
    | { id: string; user_id: string }
    | undefined
const sessionUser = async (token: string | undefined) => (await sessionRow(token))?.user_id

/** The session a browser got from the callback, as a client (its CSRF token is the MAC a page would be given). */
async function sessionClient(token: string | undefined) {
  const client = new Client(api.url)
  client.cookie = `rcp_session=${token}`
  client.csrf = csrfTokenFor(api.deps.keys.csrf, (await sessionRow(token))!.id)
  return client
}

/** The attacker's provider asserts `claims` when they log in as `login`. */
function assert(claims: Record<string, unknown>) {
  const login = `attacker-${crypto.randomUUID()}`
  idp.claims.set(login, { sub: login, ...claims }) // oidc-provider asserts the account id as sub
  return login
}

/** A tenant proves control of `domain` the real way: claim, publish the TXT record, verify. */
async function verifyDomain(owner: Owner, domain: string) {
  const claim = await owner.client.post('/tenants/current/domains', { domain })
  if (claim.status !== 201) throw new Error(`domain claim: ${claim.status} ${claim.text}`)
  dns.txt.set(claim.json.data.verificationRecord.name, [claim.json.data.verificationRecord.value])
  const verified = await owner.client.post(`/tenants/current/domains/${claim.json.data.id}/verifications`)
  if (verified.status !== 201) throw new Error(`domain verification: ${verified.status} ${verified.text}`)
  return claim.json.data.id as string
}

describe('claiming an existing account by email', () => {
  test("another tenant's provider asserting the address of an account made by SSO elsewhere gets OAUTH_ACCOUNT_LINK_REQUIRED", async () => {
    const victimTenant = await tenantOwner(api.url)
    const email = uniqueEmail('victim')
    const made = await browserSignIn(browser, api.url, startUrl(await connection(victimTenant)), email)
    expect(made.status).toBe(303)
    const victimId = await sessionUser(made.session)

    const attacker = await tenantOwner(api.url)
    const res = await browserSignIn(browser, api.url, startUrl(await connection(attacker)), assert({ email, email_verified: true }))
    expect({ status: res.status, code: res.body?.code, signedInAsVictim: (await sessionUser(res.session)) === victimId }).toEqual({
      status: 400,
      code: 'OAUTH_ACCOUNT_LINK_REQUIRED',
      signedInAsVictim: false,
    })
    // The account's own connection still signs it in.
    expect(
      (
        await browserSignIn(
          browser,
          api.url,
          startUrl((await api.sql`select created_by_sso_connection_id as id from users where id = ${victimId!}`)[0] as { id: string }),
          email,
        )
      ).status,
    ).toBe(303)
  })

  test('an account awaiting activation is never claimable by SSO, not even on a verified domain', async () => {
    const owner = await tenantOwner(api.url)
    const domain = `${uniqueSlug('corp')}.test`
    const c = await connection(owner, [domain])
    const email = `invited@${domain}`
    const [invited] = await api.sql`insert into users (email, password_hash, status) values (${email}, null, 'activation_required') returning id` // as provisioning leaves it
    const attempt = async () => {
      const res = await browserSignIn(browser, api.url, startUrl(c), assert({ email, email_verified: true }))
      return { status: res.status, code: res.body?.code, signedInAsInvited: (await sessionUser(res.session)) === invited!.id }
    }
    expect(await attempt()).toEqual({ status: 400, code: 'OAUTH_ACCOUNT_LINK_REQUIRED', signedInAsInvited: false })
    await verifyDomain(owner, domain)
    expect(await attempt()).toEqual({ status: 400, code: 'OAUTH_ACCOUNT_LINK_REQUIRED', signedInAsInvited: false })
  })

  test('on a domain the tenant verified, only an explicit email_verified: true claims the existing account', async () => {
    const owner = await tenantOwner(api.url)
    const domain = `${uniqueSlug('corp')}.test`
    const c = await connection(owner, [domain])
    const user = await signedUpUser(api.url, `ada@${domain}`)
    const before = await browserSignIn(browser, api.url, startUrl(c), assert({ email: user.email, email_verified: true }))
    expect(before.body?.code).toBe('OAUTH_ACCOUNT_LINK_REQUIRED') // not verified yet
    await verifyDomain(owner, domain)
    for (const claims of [{ email: user.email }, { email: user.email, email_verified: false }, { email: user.email, email_verified: 'true' }]) {
      const res = await browserSignIn(browser, api.url, startUrl(c), assert(claims))
      expect({ claims, status: res.status }).toEqual({ claims, status: 400 })
    }
    const ok = await browserSignIn(browser, api.url, startUrl(c), assert({ email: user.email, email_verified: true }))
    expect(ok.status).toBe(303)
    expect(await sessionUser(ok.session)).toBe(user.userId)
  })

  test('a new account is made just in time only for an address the provider says is verified', async () => {
    const owner = await tenantOwner(api.url)
    const c = await connection(owner)
    const email = uniqueEmail('unverified')
    const res = await browserSignIn(browser, api.url, startUrl(c), assert({ email }))
    expect({ status: res.status, code: res.body?.code }).toEqual({ status: 400, code: 'OAUTH_EXCHANGE_FAILED' })
    expect(await api.sql`select 1 from users where lower(email) = ${email}`).toHaveLength(0)
  })
})

describe('linking', () => {
  test('CSRF: a signed-in victim whose browser is sent to the start URL gets no identity linked', async () => {
    const victim = await signedUpUser(api.url)
    const attacker = await tenantOwner(api.url)
    const c = await connection(attacker)
    const cookie = [{ name: 'rcp_session', value: victim.client.cookie!.split('=')[1]! }]
    await browserSignIn(browser, api.url, startUrl(c), assert({ email: victim.email, email_verified: true }), cookie)
    const linked = await api.sql`select subject from sso_identities where user_id = ${victim.userId}`
    expect(linked.map((r) => r.subject)).toEqual([])
  })

  test('a link request needs a session, its CSRF header and a recent authentication; identities are listed and removed', async () => {
    const owner = await tenantOwner(api.url)
    const c = await connection(owner)
    const user = await signedUpUser(api.url)
    const body = { connectionId: c.id }
    expect((await user.client.post('/users/me/sso-identities/link-requests', body, { 'x-csrf-token': 'forged' })).json.code).toBe('CSRF_INVALID')
    await api.sql`update sessions set authenticated_at = now() - interval '6 minutes' where user_id = ${user.userId}`
    const stale = await user.client.post('/users/me/sso-identities/link-requests', body)
    expect({ status: stale.status, code: stale.json.code }).toEqual({ status: 403, code: 'FORBIDDEN' })

    const fresh = new Client(api.url)
    expect((await fresh.post('/sessions', { email: user.email, password: PASSWORD })).status).toBe(201)
    const login = assert({ email: user.email, email_verified: true })
    const done = await browserLink(browser, api.url, { cookie: fresh.cookie!.split('=')[1]!, csrf: fresh.csrf! }, c.id, login)
    expect(done.status).toBe(303)
    const listed = await fresh.get('/users/me/sso-identities')
    expect(listed.json.data).toMatchObject([{ connectionId: c.id, tenantId: owner.tenantId, subject: login }])
    expect((await owner.client.get('/users/me/sso-identities')).json.data).toEqual([])
    const id = listed.json.data[0].id
    expect((await owner.client.delete(`/users/me/sso-identities/${id}`)).status).toBe(404)
    expect((await fresh.delete(`/users/me/sso-identities/${id}`)).json.data.id).toBe(id)
    expect((await fresh.get('/users/me/sso-identities')).json.data).toEqual([])
    // Unlinked, that provider identity no longer reaches the account.
    expect((await browserSignIn(browser, api.url, startUrl(c), login)).body?.code).toBe('OAUTH_ACCOUNT_LINK_REQUIRED')
  })
})

describe('unlinking', () => {
  test('an account made by SSO that unlinks its identity is no longer claimable by that connection', async () => {
    const owner = await tenantOwner(api.url)
    const c = await connection(owner)
    const email = uniqueEmail('unlinks')
    const made = await browserSignIn(browser, api.url, startUrl(c), email)
    const user = await sessionClient(made.session)
    const [identity] = (await user.get('/users/me/sso-identities')).json.data
    expect((await user.delete(`/users/me/sso-identities/${identity.id}`)).status).toBe(200)
    expect((await browserSignIn(browser, api.url, startUrl(c), email)).body?.code).toBe('OAUTH_ACCOUNT_LINK_REQUIRED')
  })
})

describe('second factor across tenants', () => {
  test("an SSO sign-in through tenant A's connection is no second factor in tenant B", async () => {
    const a = await tenantOwner(api.url)
    const c = await connection(a, ['example.test'], 'admin')
    const email = uniqueEmail('two-tenants')
    const first = await browserSignIn(browser, api.url, startUrl(c), email)
    const user = await sessionClient(first.session)
    const b = await tenantOwner(api.url)
    const [inB] =
      await api.sql`insert into memberships (tenant_id, user_id, role) values (${b.tenantId}, ${(await sessionUser(first.session))!}, 'admin') returning id`
    await enrolTotp(user)

    const again = await browserSignIn(browser, api.url, startUrl(c), email) // signs in through A's IdP, factor on file
    const sso = await sessionClient(again.session)
    expect((await sso.get('/tenants/current/memberships')).status).toBe(200) // in A, the IdP stands in for the factor
    const sw = await sso.post('/sessions/current-membership-switches', { membershipId: inB!.id }, { 'idempotency-key': crypto.randomUUID() })
    const me = (await sso.get('/users/me')).json.data
    expect({ switch: sw.status === 201 ? 201 : sw.json.code, current: me.currentMembership.tenantId === b.tenantId ? 'B' : 'A' }).toEqual({
      switch: 'MFA_REQUIRED',
      current: 'A',
    })
  })
})

describe('domain verification (DNS TXT)', () => {
  test('claim, publish, verify; one tenant at a time holds a verified domain; another tenant sees none of it', async () => {
    const owner = await tenantOwner(api.url)
    const domain = `${uniqueSlug('proof')}.test`
    const claim = await owner.client.post('/tenants/current/domains', { domain: domain.toUpperCase() })
    expect(claim.status).toBe(201)
    const d = claim.json.data
    expect(d).toMatchObject({ domain, status: 'pending', verifiedAt: null, verificationRecord: { type: 'TXT', name: `_rcp-challenge.${domain}` } })
    expect((await owner.client.post('/tenants/current/domains', { domain })).json.data.verificationRecord).toEqual(d.verificationRecord)
    const verify = () => owner.client.post(`/tenants/current/domains/${d.id}/verifications`)
    const missing = await verify()
    expect({ status: missing.status, code: missing.json.code, says: missing.json.message.includes('No TXT record') }).toEqual({
      status: 400,
      code: 'BAD_REQUEST',
      says: true,
    })
    dns.txt.set(d.verificationRecord.name, ['v=spf1 -all', 'rcp-domain-verification=someone-else'])
    expect((await verify()).json.message).toContain('none with the expected value')
    dns.txt.set(d.verificationRecord.name, ['v=spf1 -all', d.verificationRecord.value])
    const ok = await verify()
    expect(ok.status).toBe(201)
    expect(ok.json.data).toMatchObject({ id: d.id, status: 'verified', verifiedAt: expect.any(String) })
    expect((await owner.client.get('/tenants/current/domains')).json.data.map((x: any) => [x.id, x.status])).toEqual([[d.id, 'verified']])

    const rival = await tenantOwner(api.url)
    expect((await rival.client.get('/tenants/current/domains')).json.data).toEqual([])
    expect((await rival.client.post(`/tenants/current/domains/${d.id}/verifications`)).status).toBe(404)
    expect((await rival.client.delete(`/tenants/current/domains/${d.id}`)).status).toBe(404)
    const theirs = (await rival.client.post('/tenants/current/domains', { domain })).json.data
    dns.txt.set(d.verificationRecord.name, [d.verificationRecord.value, theirs.verificationRecord.value])
    const held = await rival.client.post(`/tenants/current/domains/${theirs.id}/verifications`)
    expect({ status: held.status, says: held.json.message.includes('verified by another tenant') }).toEqual({ status: 400, says: true })
    expect((await owner.client.delete(`/tenants/current/domains/${d.id}`)).json.data.id).toBe(d.id)
    expect((await rival.client.post(`/tenants/current/domains/${theirs.id}/verifications`)).json.data.status).toBe('verified')
  })
})

describe('unverified domain claims', () => {
  test('are neither advertised in login options nor enforce SSO on anyone', async () => {
    const claimant = await tenantOwner(api.url)
    const domain = `${uniqueSlug('victim')}.test`
    const c = await connection(claimant, [domain])
    expect((await claimant.client.patch('/tenants/current/auth-policy', { allowedEmailDomains: [domain], ssoEnforced: true })).status).toBe(200)
    const options = () => new Client(api.url).get(`/auth/login-options?email=${encodeURIComponent(`ceo@${domain}`)}`).then((r) => r.json.data)
    expect(await options()).toEqual({ password: true, passkey: true, ssoEnforced: false, sso: [] })
    // A member on that domain still signs in with a password: the claim is unproven.
    const member = await signedUpUser(api.url, `member@${domain}`)
    await api.sql`insert into memberships (tenant_id, user_id, role) values (${claimant.tenantId}, ${member.userId}, 'viewer')`
    expect((await new Client(api.url).post('/sessions', { email: member.email, password: PASSWORD })).status).toBe(201)

    await verifyDomain(claimant, domain)
    expect(await options()).toEqual({ password: false, passkey: false, ssoEnforced: true, sso: [{ connectionId: c.id, name: expect.any(String) }] })
    expect((await new Client(api.url).post('/sessions', { email: member.email, password: PASSWORD })).json.code).toBe('UNAUTHORIZED')
  })
})
