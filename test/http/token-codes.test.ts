// The 401 set's two codes a prober must never see for a token we did not store (the published rule: a TOKEN_* code
// only when the presented token's hash matched a stored record). The attack first: random well-formed tokens, in every
// place a token is accepted, all answer UNAUTHORIZED. Then the two honest conditions: TOKEN_MALFORMED for a stored PAT
// presented as the session cookie, TOKEN_NOT_FOUND for a token whose record an erasure destroyed (its digest retired).
import { describe, expect, test } from 'bun:test'
import { sha256 } from '../../api/platform/crypto'
import { newPat, newSessionToken } from '../../api/identity/tokens'
import { SESSION_COOKIE } from '../../api/http/auth'
import { useApi } from '../support/api'
import { Client } from '../support/client'
import { PASSWORD, patFor, tenantOwner } from '../support/fixtures'
import { memberOf } from '../tenancy/members'

// Failed credentials spend the address's budget: the probe must meet the authentication, not the budget.
const api = useApi({ RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000' })

const asCookie = (token: string, path = '/tokens/self') =>
  fetch(`${api.url}/v1${path}`, { headers: { cookie: `${SESSION_COOKIE}=${encodeURIComponent(token)}` } }).then(async (r) => ({
    status: r.status,
    code: ((await r.json()) as { code?: string }).code,
  }))
const asBearer = (token: string, path = '/tokens/self') =>
  fetch(`${api.url}/v1${path}`, { headers: { authorization: `Bearer ${token}` } }).then(async (r) => ({
    status: r.status,
    code: ((await r.json()) as { code?: string }).code,
  }))

describe('the 401 codes and the prober', () => {
  test('random well-formed PATs and session tokens, as bearer or cookie, all answer UNAUTHORIZED (no TOKEN_* code)', async () => {
    // A live token exists, so a lookup that confused "some record" with "this record" would show here.
    const { client } = await tenantOwner(api.url)
    await patFor(client, ['tenant:read'])
    const answers = new Map<string, number>()
    const tally = (a: { status: number; code?: string }) => answers.set(`${a.status} ${a.code}`, (answers.get(`${a.status} ${a.code}`) ?? 0) + 1)
    for (let i = 0; i < 60; i++) {
      const pat = newPat().token
      const session = newSessionToken().token
      for (const a of await Promise.all([asBearer(pat), asCookie(pat), asBearer(session), asCookie(session)])) tally(a)
    }
    expect(Object.fromEntries(answers)).toEqual({ '401 UNAUTHORIZED': 240 })
  })

  test('a stored PAT presented as the session cookie is TOKEN_MALFORMED (revoked or not); as a bearer it works', async () => {
    const { client } = await tenantOwner(api.url)
    const live = await patFor(client, ['tenant:read'])
    const revoked = await patFor(client, ['tenant:read'])
    expect((await client.delete(`/api-keys/${revoked.id}`)).status).toBe(200)
    expect(await asBearer(live.token)).toEqual({ status: 200, code: undefined })
    expect(await asCookie(live.token)).toEqual({ status: 401, code: 'TOKEN_MALFORMED' })
    expect(await asCookie(revoked.token)).toEqual({ status: 401, code: 'TOKEN_MALFORMED' })
    expect(await asBearer(revoked.token)).toEqual({ status: 401, code: 'TOKEN_REVOKED' })
    // On a tenant route too: the credential is judged before anything else.
    expect(await asCookie(live.token, '/tenants/current/auth-policy')).toEqual({ status: 401, code: 'TOKEN_MALFORMED' })
  })

  test("an erased account's PAT and sessions answer TOKEN_NOT_FOUND: their rows are gone, their digests retired with no link", async () => {
    const owner = await tenantOwner(api.url)
    const member = await memberOf(api.url, api.sql, owner.tenantId, 'researcher')
    const pat = await patFor(member.client, ['tenant:read'])
    const other = new Client(api.url)
    expect((await other.post('/sessions', { email: member.email, password: PASSWORD })).status).toBe(201)
    const sessionToken = decodeURIComponent(other.cookie!.slice(`${SESSION_COOKIE}=`.length))
    const before = await asBearer(sessionToken)
    expect(before.status).toBe(200)

    expect((await member.client.delete('/users/me')).status).toBe(200)

    expect(await asBearer(pat.token)).toEqual({ status: 401, code: 'TOKEN_NOT_FOUND' })
    expect(await asCookie(pat.token)).toEqual({ status: 401, code: 'TOKEN_NOT_FOUND' })
    expect(await asBearer(sessionToken)).toEqual({ status: 401, code: 'TOKEN_NOT_FOUND' })
    expect(await asCookie(sessionToken)).toEqual({ status: 401, code: 'TOKEN_NOT_FOUND' })

    // The rows are gone; what stays is a digest, a time, a reason and an expiry: nothing that names the person.
    const rows = await api.sql`
      select (select count(*) from sessions where user_id = ${member.userId})::int as sessions,
             (select count(*) from api_keys where user_id = ${member.userId})::int as keys`
    expect(rows[0]).toEqual({ sessions: 0, keys: 0 })
    const retired = await api.sql<Record<string, unknown>[]>`
      select * from retired_credentials where digest in (${sha256(pat.token)}, ${sha256(sessionToken)}) order by digest`
    expect(retired).toHaveLength(2)
    for (const r of retired) {
      expect(Object.keys(r).sort()).toEqual(['digest', 'expires_at', 'reason', 'retired_at'])
      expect(r.reason).toBe('account_erased')
    }

    // Once the credential would have expired by itself it is forgotten, and the answer is the generic one again.
    await api.sql`update retired_credentials set expires_at = now() - interval '1 second' where digest = ${sha256(pat.token)}`
    expect(await asBearer(pat.token)).toEqual({ status: 401, code: 'UNAUTHORIZED' })
  })
})
