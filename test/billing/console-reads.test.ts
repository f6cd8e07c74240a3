// The two reads the console's billing pages stand on: the deployment's price book (a plan change is priced from it
// before anyone confirms) for billing:read alone, and the current tenant's billing block on GET /v1/users/me for every
// member, so the banner of a blocked tenant needs no billing permission.
import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { tenantOwner } from '../support/fixtures'
import { memberOf } from '../tenancy/members'

const api = useApi()
const BOOK = (await Bun.file(new URL('../../api/billing/price-book.json', import.meta.url)).json()) as {
  currency: string
  defaultPlan: string
  plans: Record<string, { name: string; monthlyFee: number; meters: Record<string, { included: number; unitPrice: string; per?: number }> }>
}

describe('the price book read', () => {
  test("billing admins, owners and admins read the deployment's book, as integers in strings; a viewer or researcher is 403", async () => {
    const owner = await tenantOwner(api.url)
    const billing = await memberOf(api.url, api.sql, owner.tenantId, 'billing_admin')
    const res = await billing.client.get('/tenants/current/price-book')
    expect(res.status).toBe(200)
    expect(res.json.data.currency).toBe(BOOK.currency)
    expect(res.json.data.defaultPlan).toBe(BOOK.defaultPlan)
    expect(res.json.data.plans).toEqual(
      Object.entries(BOOK.plans).map(([id, p]) => ({
        id,
        name: p.name,
        monthlyFee: String(p.monthlyFee),
        meters: Object.entries(p.meters).map(([meter, m]) => ({ meter, included: String(m.included), unitPrice: m.unitPrice, per: String(m.per ?? 1) })),
      })),
    )
    expect((await owner.client.get('/tenants/current/price-book')).status).toBe(200)
    for (const role of ['viewer', 'researcher']) {
      const m = await memberOf(api.url, api.sql, owner.tenantId, role)
      const refused = await m.client.get('/tenants/current/price-book')
      expect({ role, status: refused.status }).toEqual({ role, status: 403 })
    }
  })
})

describe("the current tenant's billing block on /users/me", () => {
  test("every member sees why their tenant is blocked, from the next request on; another tenant's members see nothing", async () => {
    const owner = await tenantOwner(api.url)
    const viewer = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    const other = await tenantOwner(api.url)
    expect((await viewer.client.get('/users/me')).json.data.billingBlock).toEqual([])

    const paused = await owner.client.patch('/tenants/current/subscription', { status: 'paused' }, { 'if-match': '"v1"' })
    expect(paused.status).toBe(200)
    expect((await viewer.client.get('/users/me')).json.data.billingBlock).toEqual(['paused'])
    expect((await owner.client.get('/users/me')).json.data.billingBlock).toEqual(['paused'])
    expect((await other.client.get('/users/me')).json.data.billingBlock).toEqual([])

    await api.sql`update subscriptions set operator_blocked_at = now() where tenant_id = ${owner.tenantId}`
    expect((await viewer.client.get('/users/me')).json.data.billingBlock).toEqual(['paused', 'operator'])
    await api.sql`update subscriptions set operator_blocked_at = null where tenant_id = ${owner.tenantId}`

    expect((await owner.client.patch('/tenants/current/subscription', { status: 'active' }, { 'if-match': '"v2"' })).status).toBe(200)
    expect((await viewer.client.get('/users/me')).json.data.billingBlock).toEqual([])
  })

  test('an account without a current tenant has an empty list', async () => {
    const owner = await tenantOwner(api.url)
    const lone = await memberOf(api.url, api.sql, owner.tenantId, 'viewer')
    await api.sql`update sessions set membership_id = null where user_id = ${lone.userId}`
    const me = await lone.client.get('/users/me')
    expect([me.status, me.json.data.currentMembership, me.json.data.billingBlock]).toEqual([200, null, []])
  })
})
