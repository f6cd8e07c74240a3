import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startApi, type TestApi } from '../support/api'
import { Client } from '../support/client'
import { PASSWORD, patFor, signedUpUser, tenantOwner } from '../support/fixtures'

let api: TestApi
beforeAll(async () => {
  api = await startApi({ RATE_LIMIT_ANONYMOUS_PER_MINUTE: '40', RATE_LIMIT_PRINCIPAL_PER_MINUTE: '5', RATE_LIMIT_TENANT_PER_MINUTE: '8' })
})
afterAll(async () => {
  await api.stop()
})

describe('request budgets', () => {
  test('per principal: the budget runs out with 429 RATE_LIMITED, Retry-After and RateLimit headers only on 429', async () => {
    const { client } = await tenantOwner(api.url)
    const { token } = await patFor(client, ['tenant:read'])
    const pat = new Client(api.url).withBearer(token)
    const results = []
    for (let i = 0; i < 6; i++) results.push(await pat.get('/tokens/self'))
    const ok = results.filter((r) => r.status === 200)
    const limited = results.filter((r) => r.status === 429)
    expect(limited.length).toBeGreaterThan(0)
    for (const r of ok) expect(r.headers.get('ratelimit-limit')).toBeNull()
    const l = limited[0]!
    expect(l.json.code).toBe('RATE_LIMITED')
    expect(Number(l.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(l.headers.get('ratelimit-limit')).toBe('5')
    expect(l.headers.get('ratelimit-remaining')).toBe('0')
  })

  test('per tenant: members of one tenant share its budget; another tenant is unaffected', async () => {
    const a = await tenantOwner(api.url) // creating the tenant spent none of its budget (no tenant yet)
    const b = await signedUpUser(api.url)
    await api.sql`insert into memberships (tenant_id, user_id, role) values (${a.tenantId}, ${b.userId}, 'viewer')`
    const bInTenant = new Client(api.url)
    expect((await bInTenant.post('/sessions', { email: b.email, password: PASSWORD })).status).toBe(201)
    for (let i = 0; i < 4; i++) expect((await a.client.get('/tokens/self')).status).toBe(200)
    for (let i = 0; i < 4; i++) expect((await bInTenant.get('/tokens/self')).status).toBe(200)
    // b has used 4 of its own 5, but the tenant's 8 are gone.
    const fifth = await bInTenant.get('/tokens/self')
    expect(fifth.status).toBe(429)
    expect(fifth.headers.get('ratelimit-limit')).toBe('8')
    const c = await tenantOwner(api.url)
    expect((await c.client.get('/tokens/self')).status).toBe(200)
  })

  test("optional authentication spends the presented credential's budget, not the address's", async () => {
    const { client } = await signedUpUser(api.url)
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) statuses.push((await client.post('/tenant-invitations/acceptance-records', { token: 'not-a-token' })).status)
    expect(statuses.slice(0, 5).every((s) => s !== 429)).toBe(true)
    expect(statuses[5]).toBe(429) // the user's 5, where the address has 40
  })

  test('anonymous callers have a budget per address', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 45; i++) statuses.push((await fetch(`${api.url}/v1/storage-regions`)).status)
    expect(statuses.slice(0, 10).every((s) => s === 200)).toBe(true)
    expect(statuses).toContain(429)
  })
})
