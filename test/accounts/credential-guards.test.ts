// The credentials that mint credentials: the first password of an account that has none comes only from a session
// that authenticated moments ago (never a PAT); guesses of currentPassword count as failed sign-ins; a PAT cannot
// mint a PAT that outlives it.
import { describe, expect, test } from 'bun:test'
import { newSessionToken } from '../../api/identity/tokens'
import { useApi } from '../support/api'
import { Client } from '../support/client'
import { PASSWORD, patFor, tenantOwner, uniqueEmail } from '../support/fixtures'
import { NEW_PASSWORD } from './helpers'

const LOCK = 6
const api = useApi({ SIGNIN_ACCOUNT_LOCK_FAILURES: String(LOCK), SIGNIN_DELAY_BASE_MS: '1' })

/** An account made by SSO (no password), member of a tenant, with a session of that sign-in `minutesAgo` old. */
async function ssoAccount(minutesAgo: number) {
  const owner = await tenantOwner(api.url)
  const [u] = await api.sql<{ id: string }[]>`insert into users (email) values (${uniqueEmail('sso')}) returning id`
  const [m] = await api.sql<{ id: string }[]>`
    insert into memberships (tenant_id, user_id, role) values (${owner.tenantId}, ${u!.id}, 'researcher') returning id`
  const { token, hash } = newSessionToken()
  await api.sql`
    insert into sessions (user_id, token_hash, membership_id, expires_at, idle_timeout_seconds, auth_method, second_factor_at, created_at, authenticated_at)
    values (${u!.id}, ${hash}, ${m!.id}, now() + interval '1 day', 86400, 'sso', now() - make_interval(mins => ${minutesAgo}),
            now() - make_interval(mins => ${minutesAgo}), now() - make_interval(mins => ${minutesAgo}))`
  return { userId: u!.id, session: new Client(api.url).withBearer(token) }
}

const hasPassword = async (userId: string) => (await api.sql`select 1 from users where id = ${userId} and password_hash is not null`).length === 1

describe('the first password of an account without one', () => {
  test('attack: a PAT sets the first password of an SSO-created account', async () => {
    const account = await ssoAccount(0)
    const pat = new Client(api.url).withBearer((await patFor(account.session, ['tenant:read'])).token)
    const res = await pat.patch('/users/me/password', { newPassword: NEW_PASSWORD })
    expect({ status: res.status, code: res.json.code }).toEqual({ status: 403, code: 'FORBIDDEN' })
    expect(await hasPassword(account.userId)).toBe(false)
  })

  test('attack: a session that authenticated long ago sets it; one that did so moments ago may', async () => {
    const stale = await ssoAccount(10)
    const res = await stale.session.patch('/users/me/password', { newPassword: NEW_PASSWORD })
    expect({ status: res.status, code: res.json.code }).toEqual({ status: 403, code: 'FORBIDDEN' })
    expect(await hasPassword(stale.userId)).toBe(false)

    const fresh = await ssoAccount(0)
    expect((await fresh.session.patch('/users/me/password', { newPassword: NEW_PASSWORD })).status).toBe(200)
    expect(await hasPassword(fresh.userId)).toBe(true)
  })
})

describe('currentPassword guesses', () => {
  test('attack: 50 wrong guesses of currentPassword from a stolen session are not throttled', async () => {
    const owner = await tenantOwner(api.url)
    const codes: string[] = []
    for (let i = 0; i < 50; i++) {
      const res = await owner.client.patch('/users/me/password', { currentPassword: `wrong guess ${i}`, newPassword: NEW_PASSWORD })
      codes.push(res.json.code)
      if (res.status === 429) expect(res.headers.get('retry-after')).toMatch(/^\d+$/)
    }
    expect(codes.filter((c) => c === 'CURRENT_PASSWORD_INVALID').length).toBe(LOCK)
    expect(codes.slice(LOCK).every((c) => c === 'RATE_LIMITED')).toBe(true)
    // Locked means locked: the right answer waits out the window too, and password sign-in shares the count.
    const right = await owner.client.patch('/users/me/password', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD })
    expect(right.status).toBe(429)
    expect((await new Client(api.url).post('/sessions', { email: owner.email, password: PASSWORD })).status).toBe(429)
  })
})

describe('a PAT minting a PAT', () => {
  test('attack: a PAT gives the PAT it creates a later expiry than its own', async () => {
    const owner = await tenantOwner(api.url)
    const parentExpiry = new Date(Date.now() + 86_400_000)
    const parent = new Client(api.url).withBearer(
      (await patFor(owner.client, ['tenant:read', 'apikey:write'], { expiresAt: parentExpiry.toISOString() })).token,
    )
    const later = await parent.post('/api-keys', { name: 'child', scopes: ['tenant:read'], expiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString() })
    expect({ status: later.status, code: later.json.code, path: later.json.errors?.[0]?.path }).toEqual({
      status: 400,
      code: 'VALIDATION_ERROR',
      path: 'body.expiresAt',
    })

    // Without an expiry the child gets the default, cut to its parent's; an earlier one is kept as asked.
    const dflt = await parent.post('/api-keys', { name: 'child', scopes: ['tenant:read'] })
    expect(dflt.status).toBe(201)
    expect(Date.parse(dflt.json.data.apiKey.expiresAt)).toBeLessThanOrEqual(parentExpiry.getTime())
    const earlier = new Date(Date.now() + 3_600_000).toISOString()
    expect((await parent.post('/api-keys', { name: 'child', scopes: ['tenant:read'], expiresAt: earlier })).status).toBe(201)
  })
})
