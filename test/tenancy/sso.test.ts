// Single sign-on against a real OpenID Provider (oidc-provider with its development login and consent pages),
// driven by Debian Chromium under playwright-core: start → provider login form → consent → callback → session.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { startApi, type TestApi } from '../support/api'
import { releaseChromium, sharedChromium } from '../support/chromium'
import { Client } from '../support/client'
import { signedUpUser, tenantOwner, uniqueEmail } from '../support/fixtures'
import { browserLink, browserSignIn as signInWith, CLIENT_ID, CLIENT_SECRET, startOidcProvider, type TestProvider } from '../support/oidc'
import { memberOf } from './members'
import { auditWindow, sealAudit } from '../support/audit'

let api: TestApi
let issuer: string
let provider: TestProvider | undefined
let browser: Browser

beforeAll(async () => {
  api = await startApi()
  provider = await startOidcProvider(api.url)
  issuer = provider.issuer
  browser = await sharedChromium()
})
afterAll(async () => {
  await releaseChromium(browser)
  provider?.stop()
  await api.stop()
})

async function connection(owner: { client: Client }, extra: Record<string, unknown> = {}) {
  const res = await owner.client.post('/tenants/current/sso-connections', {
    issuer,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    emailDomains: ['example.test'],
    defaultRole: 'researcher',
    ...extra,
  })
  if (res.status !== 201) throw new Error(`connection: ${res.status} ${res.text}`)
  return res.json.data
}

const browserSignIn = (startUrl: string, email: string, cookies: { name: string; value: string }[] = []) =>
  signInWith(browser, api.url, startUrl, email, cookies)

/** The tenant's log as its owner reads it, for one action or prefix. */
const tenantLog = async (owner: { client: Client }, action: string) => {
  const res = await owner.client.get(`/tenants/current/audit-log?${auditWindow()}&action=${action}`)
  if (res.status !== 200) throw new Error(`audit log: ${res.status} ${res.text}`)
  return res.json.data as {
    action: string
    tenantId: string
    actor: { type: string; id: string }
    target: { type: string; id: string }
    details: Record<string, unknown>
  }[]
}
interface FailureRow {
  tenant_id: string | null
  subject_user_id: string | null
  actor_type: string
  outcome: string
  reason: string
  details: Record<string, unknown>
}
/** The SSO sign-in failures recorded for a connection (or, with no connection known, for a request id). */
const ssoFailures = async (by: { connectionId: string } | { requestId: string }): Promise<FailureRow[]> =>
  sealAudit(api.sql).then(async () => [
    ...(await api.sql<FailureRow[]>`
  select tenant_id, subject_user_id, actor_type, outcome, reason, details from audit_log
   where action = 'user.sign_in_failed' and details->>'method' = 'sso'
     and ${'connectionId' in by ? api.sql`details->>'ssoConnectionId' = ${by.connectionId}` : api.sql`request_id = ${by.requestId}`}
   order by occurred_at, seq`),
  ])

describe('SSO connections', () => {
  test('create, list, get and patch with If-Match; the client secret is write-only and encrypted at rest', async () => {
    const owner = await tenantOwner(api.url)
    const c = await connection(owner)
    expect(c).toMatchObject({
      protocol: 'oidc',
      issuer,
      clientId: CLIENT_ID,
      clientSecretSet: true,
      emailDomains: ['example.test'],
      defaultRole: 'researcher',
      enabled: true,
    })
    expect(JSON.stringify(c)).not.toContain(CLIENT_SECRET)
    const [row] = await api.sql`select client_secret_sealed from sso_connections where id = ${c.id}`
    expect(Buffer.from(row!.client_secret_sealed).toString('latin1')).not.toContain(CLIENT_SECRET)
    const listed = await owner.client.get('/tenants/current/sso-connections')
    expect(listed.json.data.map((x: any) => x.id)).toEqual([c.id])
    expect(listed.text).not.toContain(CLIENT_SECRET)
    const path = `/tenants/current/sso-connections/${c.id}`
    const etag = (await owner.client.get(path)).headers.get('etag')!
    const patched = await owner.client.patch(path, { defaultRole: 'viewer', clientSecret: 'rotated' }, { 'if-match': etag })
    expect(patched.status).toBe(200)
    expect(patched.json.data.defaultRole).toBe('viewer')
    expect(patched.headers.get('etag')).not.toBe(etag)
    expect((await owner.client.patch(path, { enabled: false }, { 'if-match': etag })).status).toBe(412)
    expect((await owner.client.patch(path, { defaultRole: 'owner' })).json.code).toBe('VALIDATION_ERROR')
    const other = await tenantOwner(api.url)
    expect((await other.client.patch(path, { enabled: false })).status).toBe(404)
    expect((await other.client.get('/tenants/current/sso-connections')).json.data).toEqual([])
    const viewer = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    expect((await viewer.client.get('/tenants/current/sso-connections')).json.code).toBe('PERMISSION_DENIED')
  })
})

describe('OIDC sign-in', () => {
  test('a new address signs in through the provider and joins just in time with the default role', async () => {
    const owner = await tenantOwner(api.url)
    const c = await connection(owner)
    const email = uniqueEmail('sso')
    const done = await browserSignIn(`${c.signInUrl.replace(/^https?:\/\/[^/]+/, api.url)}?returnTo=/account`, email)
    expect(done.status).toBe(303)
    expect(done.location).toBe('/account')
    const client = new Client(api.url)
    client.cookie = `rcp_session=${done.session}`
    const me = await client.get('/users/me')
    expect(me.json.data.user).toMatchObject({ email, displayName: `SSO ${email.split('@')[0]}` })
    expect(me.json.data.currentMembership).toMatchObject({ tenantId: owner.tenantId, role: 'researcher', status: 'active' })
    // A second sign-in finds the linked identity: same user, no new membership.
    const again = await browserSignIn(`${api.url}/v1/auth/sso/${c.id}/start`, email)
    expect(again.status).toBe(303)
    expect(again.location).toBe('/console#/account') // no returnTo: the console's My account
    const [{ n }] =
      (await api.sql`select count(*)::int as n from memberships m join users u on u.id = m.user_id where lower(u.email) = ${email}`) as unknown as [
        { n: number },
      ]
    expect(n).toBe(1)
    // Both sign-ins are in the account's trail (never the tenant's), naming the method and the connection.
    await sealAudit(api.sql)
    const signIns = await api.sql<{ tenant_id: string | null; details: { method: string; ssoConnectionId: string } }[]>`
      select tenant_id, details from audit_log where subject_user_id = ${me.json.data.user.id} and action = 'user.signed_in' order by seq`
    expect(signIns.map((r) => [r.tenant_id, r.details.method, r.details.ssoConnectionId])).toEqual([
      [null, 'sso', c.id],
      [null, 'sso', c.id],
    ])
    // The identity was linked once, by the first sign-in, in the same transaction as the link.
    const links = await api.sql<{ target_id: string; details: { connectionId: string } }[]>`
      select target_id, details from audit_log where subject_user_id = ${me.json.data.user.id} and action = 'user.sso_identity_linked'`
    const [identity] = await api.sql<{ id: string }[]>`select id from sso_identities where connection_id = ${c.id} and user_id = ${me.json.data.user.id}`
    expect(links.map((r) => [r.target_id, r.details.connectionId])).toEqual([[identity!.id, c.id]])
    // The account was registered by the sign-in, and the tenant's owner sees who gave the access: one provisioning
    // entry, by the user, naming the connection and the role; the second sign-in found the membership and added none.
    const userId = me.json.data.user.id
    const registered = [
      ...(await api.sql`select tenant_id, actor_id, target_id, details from audit_log where subject_user_id = ${userId} and action = 'user.registered'`),
    ]
    expect(registered).toEqual([{ tenant_id: null, actor_id: userId, target_id: userId, details: { via: 'sso', connectionId: c.id } }])
    expect(await tenantLog(owner, 'membership.')).toMatchObject([
      {
        action: 'membership.sso_provisioned',
        tenantId: owner.tenantId,
        actor: { type: 'user', id: userId },
        target: { type: 'membership', id: me.json.data.currentMembership.id },
        details: { connectionId: c.id, role: 'researcher', accountCreated: true },
      },
    ])
  })

  // Issue 12 changed the second half: linking starts from an explicit POST (CSRF header) of a recently
  // authenticated session, no longer from the start GET carrying the session cookie.
  test('OAUTH_ACCOUNT_LINK_REQUIRED for a password account; a link request from its session links the identity', async () => {
    const owner = await tenantOwner(api.url)
    const c = await connection(owner)
    const existing = await signedUpUser(api.url)
    const refused = await browserSignIn(`${api.url}/v1/auth/sso/${c.id}/start`, existing.email)
    expect(refused.status).toBe(400)
    expect(refused.body.code).toBe('OAUTH_ACCOUNT_LINK_REQUIRED')
    // The refusal concerns the account the provider-verified address belongs to: its owner sees it, the tenant not.
    const activity = (await existing.client.get('/users/me/security-activity')).json.data
    expect(activity).toContainEqual(
      expect.objectContaining({
        action: 'user.sign_in_failed',
        tenantId: null,
        outcome: 'failure',
        reason: 'link_required',
        details: { method: 'sso', ssoConnectionId: c.id },
      }),
    )
    const linked = await browserLink(browser, api.url, { cookie: existing.client.cookie!.split('=')[1]!, csrf: existing.client.csrf! }, c.id, existing.email)
    expect(linked.status).toBe(303)
    const [row] = await api.sql`select user_id from sso_identities where connection_id = ${c.id}`
    expect(row!.user_id).toBe(existing.userId)
    // The link gave the existing account a membership of the connection's tenant: recorded there, account not made.
    expect(await tenantLog(owner, 'membership.')).toMatchObject([
      {
        action: 'membership.sso_provisioned',
        actor: { type: 'user', id: existing.userId },
        details: { connectionId: c.id, role: 'researcher', accountCreated: false },
      },
    ])
    expect(await tenantLog(owner, 'user.sign_in_failed')).toEqual([])
  })

  test('SSO_NOT_CONFIGURED, OAUTH_STATE_INVALID and OAUTH_EXCHANGE_FAILED', async () => {
    const owner = await tenantOwner(api.url)
    const c = await connection(owner)
    for (const id of [crypto.randomUUID(), 'nope']) {
      const res = await fetch(`${api.url}/v1/auth/sso/${id}/start`, { redirect: 'manual' })
      expect(res.status).toBe(400)
      expect((await res.json()).code).toBe('SSO_NOT_CONFIGURED')
    }
    const disabled = await connection(owner, { enabled: false })
    expect((await (await fetch(`${api.url}/v1/auth/sso/${disabled.id}/start`, { redirect: 'manual' })).json()).code).toBe('SSO_NOT_CONFIGURED')

    const start = await fetch(`${api.url}/v1/auth/sso/${c.id}/start`, { redirect: 'manual' })
    expect(start.status).toBe(302)
    const location = new URL(start.headers.get('location')!)
    expect(location.origin).toBe(issuer)
    expect(location.searchParams.get('code_challenge_method')).toBe('S256')
    expect(location.searchParams.get('nonce')).toBeTruthy()
    const state = location.searchParams.get('state')!
    const cookie = start.headers.get('set-cookie')!.split(';')[0]!
    const requestIds: string[] = []
    const callback = (query: string, headers: Record<string, string> = {}) => {
      const requestId = `sso-refused-${crypto.randomUUID()}`
      requestIds.push(requestId)
      return fetch(`${api.url}/v1/auth/sso/callback?${query}`, { redirect: 'manual', headers: { ...headers, 'x-request-id': requestId } }).then(async (r) => ({
        status: r.status,
        code: (await r.json()).code,
      }))
    }
    expect(await callback(`code=x&state=${state}`)).toEqual({ status: 400, code: 'OAUTH_STATE_INVALID' }) // no state cookie
    expect(await callback(`code=x&state=forged`, { cookie: 'rcp_sso_state=forged' })).toEqual({ status: 400, code: 'OAUTH_STATE_INVALID' })
    expect(await callback(`code=bogus&state=${state}&iss=${encodeURIComponent(issuer)}`, { cookie })).toEqual({ status: 400, code: 'OAUTH_EXCHANGE_FAILED' })
    // The state was single use.
    expect(await callback(`code=bogus&state=${state}&iss=${encodeURIComponent(issuer)}`, { cookie })).toEqual({ status: 400, code: 'OAUTH_STATE_INVALID' })
    // A connection disabled between the start and the callback.
    const later = await fetch(`${api.url}/v1/auth/sso/${c.id}/start`, { redirect: 'manual' })
    const laterState = new URL(later.headers.get('location')!).searchParams.get('state')!
    expect((await owner.client.patch(`/tenants/current/sso-connections/${c.id}`, { enabled: false })).status).toBe(200)
    expect(await callback(`code=x&state=${laterState}`, { cookie: later.headers.get('set-cookie')!.split(';')[0]! })).toEqual({
      status: 400,
      code: 'SSO_NOT_CONFIGURED',
    })

    // Each refusal is an account-level failure with its reason class, about no account (none is known), naming the
    // connection once the state named it, and never the state or the code; the tenant's log has none of them.
    const rows = await Promise.all(requestIds.map(async (requestId) => ssoFailures({ requestId })))
    const anonymous = { tenant_id: null, subject_user_id: null, actor_type: 'anonymous', outcome: 'failure' }
    expect(rows).toEqual([
      [{ ...anonymous, reason: 'state_invalid', details: { method: 'sso' } }],
      [{ ...anonymous, reason: 'state_invalid', details: { method: 'sso' } }],
      [{ ...anonymous, reason: 'provider_failed', details: { method: 'sso', ssoConnectionId: c.id } }],
      [{ ...anonymous, reason: 'state_invalid', details: { method: 'sso' } }],
      [{ ...anonymous, reason: 'connection_disabled', details: { method: 'sso', ssoConnectionId: c.id } }],
    ])
    expect(JSON.stringify(rows)).not.toContain(state)
    expect(await tenantLog(owner, 'user.')).toEqual([])
  })

  test('attack: SSO signs in and joins a tenant whose policy no longer takes SSO sign-ins', async () => {
    const owner = await tenantOwner(api.url)
    const c = await connection(owner)
    expect((await owner.client.patch('/tenants/current/auth-policy', { allowedSignInMethods: ['password'] })).status).toBe(200)
    const email = uniqueEmail('sso-off')
    const res = await browserSignIn(`${api.url}/v1/auth/sso/${c.id}/start`, email)
    expect({ status: res.status, code: res.body?.code, session: res.session }).toEqual({ status: 400, code: 'SSO_NOT_CONFIGURED', session: undefined })
    expect(await api.sql`select 1 from users where lower(email) = ${email}`).toHaveLength(0)
    // Recorded as a refusal about no account (the address has none), never in the tenant's log nor with the address.
    const failures = await ssoFailures({ connectionId: c.id })
    expect(failures).toEqual([
      {
        tenant_id: null,
        subject_user_id: null,
        actor_type: 'anonymous',
        outcome: 'failure',
        reason: 'method_not_allowed',
        details: { method: 'sso', ssoConnectionId: c.id },
      },
    ])
    expect(JSON.stringify(failures)).not.toContain(email)
    expect(await tenantLog(owner, 'user.')).toEqual([])
    expect(await tenantLog(owner, 'membership.')).toEqual([])
  })

  test("an address outside the connection's domains is refused, and its account sees the attempt", async () => {
    const owner = await tenantOwner(api.url)
    const c = await connection(owner, { emailDomains: ['robots.example'] })
    const outsider = await signedUpUser(api.url)
    const res = await browserSignIn(`${api.url}/v1/auth/sso/${c.id}/start`, outsider.email)
    expect(res.status).toBe(400)
    expect(res.body.code).toBe('SSO_NOT_CONFIGURED')
    // The provider vouched for the address, so the refusal is about its account: in that account's activity only.
    const activity = (await outsider.client.get('/users/me/security-activity')).json.data
    expect(activity).toContainEqual(
      expect.objectContaining({
        action: 'user.sign_in_failed',
        tenantId: null,
        target: { type: 'user', id: outsider.userId },
        outcome: 'failure',
        reason: 'domain_not_covered',
        details: { method: 'sso', ssoConnectionId: c.id },
      }),
    )
    expect(await tenantLog(owner, 'user.')).toEqual([])
  })
})
