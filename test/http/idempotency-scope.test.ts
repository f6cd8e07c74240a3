// Two members of one tenant who happen to send the same Idempotency-Key to an operation on their own account must
// each get their own effect and response, never the other's stored one.
import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { Client } from '../support/client'
import { PASSWORD, tenantOwner } from '../support/fixtures'
import { memberOf } from '../tenancy/members'

const api = useApi()

async function twoMembers() {
  const a = await tenantOwner(api.url)
  const b = await memberOf(api.url, api.sql, a.tenantId, 'viewer')
  return { a, b }
}

/** Another live session of the same account, as a second device would hold. */
async function secondDevice(email: string) {
  const c = new Client(api.url)
  expect((await c.post('/sessions', { email, password: PASSWORD })).status).toBe(201)
  return c
}

const idem = (key: string) => ({ 'idempotency-key': key })
const replayed = (r: { headers: Headers }) => r.headers.get('idempotent-replayed') === 'true'

describe('Idempotency-Key of per-user operations is scoped to the calling user', () => {
  test("sign out other sessions: B's request with A's key ends B's other sessions, not a replay of A's answer", async () => {
    const { a, b } = await twoMembers()
    const key = crypto.randomUUID()
    await secondDevice(a.email)
    const bPhone = await secondDevice(b.email)
    const first = await a.client.post('/users/me/other-session-invalidation-requests', undefined, idem(key))
    expect(first.json.data).toEqual({ invalidated: 1 })
    const second = await b.client.post('/users/me/other-session-invalidation-requests', undefined, idem(key))
    expect(replayed(second)).toBe(false)
    expect(second.json.data).toEqual({ invalidated: 1 })
    expect((await bPhone.get('/users/me')).json.code).toBe('TOKEN_REVOKED')
  })

  test("sign out everywhere: B's request with A's key ends B's sessions, not a replay of A's answer", async () => {
    const { a, b } = await twoMembers()
    const bulkKey = crypto.randomUUID()
    const bLaptop = Object.assign(new Client(api.url), { cookie: b.client.cookie }) // the answer clears the caller's cookie
    const aAll = await a.client.post('/sessions/bulk-invalidation-requests', undefined, idem(bulkKey))
    expect(aAll.status).toBe(201)
    const bAll = await b.client.post('/sessions/bulk-invalidation-requests', undefined, idem(bulkKey))
    expect(bAll.status).toBe(201)
    expect(replayed(bAll)).toBe(false)
    expect((await bLaptop.get('/users/me')).json.code).toBe('TOKEN_REVOKED')
  })

  test("ending one session: A's key does not answer B's request for A's session id (no replay of A's 204)", async () => {
    const { a, b } = await twoMembers()
    const aPhone = await secondDevice(a.email)
    const aPhoneId = (await aPhone.get('/users/me/sessions')).json.data.find((s: { current: boolean }) => s.current).id as string
    const key = crypto.randomUUID()
    expect((await a.client.delete(`/sessions/${aPhoneId}`, idem(key))).status).toBe(204)
    const probe = await b.client.delete(`/sessions/${aPhoneId}`, idem(key))
    expect(probe.status).toBe(404)
    expect(probe.json.code).toBe('SESSION_NOT_FOUND')
  })

  test("passkey registration options: B never receives A's options (A's email and passkey ids)", async () => {
    const { a, b } = await twoMembers()
    const key = crypto.randomUUID()
    const first = await a.client.post('/users/me/webauthn/registration-options', undefined, idem(key))
    expect(first.status).toBe(201)
    expect(first.json.data.user.name).toBe(a.email)
    const second = await b.client.post('/users/me/webauthn/registration-options', undefined, idem(key))
    expect(second.status).toBe(201)
    expect(replayed(second)).toBe(false)
    expect(second.json.data.user.name).toBe(b.email)
  })

  test('an operation creating a tenant resource keeps one key space per tenant', async () => {
    const a = await tenantOwner(api.url)
    const key = crypto.randomUUID()
    const body = { email: `invitee-${crypto.randomUUID()}@example.test`, role: 'viewer' }
    const first = await a.client.post('/tenant-invitations', body, idem(key))
    expect(first.status).toBe(201)
    // A second admin retrying the same invitation with the same key gets the first answer, not a second invitation.
    const admin = await memberOf(api.url, api.sql, a.tenantId, 'admin')
    const again = await admin.client.post('/tenant-invitations', body, idem(key))
    expect(again.text).toBe(first.text)
    expect(replayed(again)).toBe(true)
  })
})
