// Invoices: the period close writes one immutable, hashed snapshot per subscription and period, however many closes
// race; the snapshot is read, listed and rendered by billing readers of its own tenant only.
import { describe, expect, test } from 'bun:test'
import { closePeriod, snapshotOf } from '../../api/billing/invoices'
import type { InvoiceRow } from '../../api/billing/queries'
import { snapshotHash } from '../../api/billing/snapshot'
import { activityContext } from '../../api/identity/context'
import { useApi } from '../support/api'
import { PROVIDER_KEY, paymentEvent } from './provider'
import { sealAudit } from '../support/audit'
import { tenantOwner } from '../support/fixtures'
import { memberOf } from '../tenancy/members'

const api = useApi({ BILLING_PROVIDER_KEY: PROVIDER_KEY })

/** A tenant whose current period is October 2026, ended: ready to close. */
async function endedPeriod() {
  const owner = await tenantOwner(api.url)
  const billing = await memberOf(api.url, api.sql, owner.tenantId, 'billing_admin')
  await api.sql`
    update subscriptions set current_period_start = '2026-10-01T00:00:00Z', current_period_end = '2026-11-01T00:00:00Z'
     where tenant_id = ${owner.tenantId}`
  return { owner, billing }
}

describe('the period close', () => {
  test('two closes racing over HTTP: exactly one snapshot; the other is 409 INVOICE_SNAPSHOT_ALREADY_EXISTS', async () => {
    const { owner, billing } = await endedPeriod()
    const answers = await Promise.all([1, 2, 3].map(() => billing.client.post('/tenants/current/invoices', { period: '2026-10' })))
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409])
    for (const a of answers.filter((x) => x.status === 409)) expect(a.json.code).toBe('INVOICE_SNAPSHOT_ALREADY_EXISTS')
    const [n] = await api.sql`select count(*)::int as n from invoices where tenant_id = ${owner.tenantId}`
    expect(n!.n).toBe(1)
    const [finalized] = await api.sql`select count(*)::int as n from events where tenant_id = ${owner.tenantId} and type = 'invoice.finalized'`
    expect(finalized!.n).toBe(1)
  })

  test('closes racing in the worker (the sweep and a retry): one finalizes, the rest find it', async () => {
    const { owner } = await endedPeriod()
    const ctx = activityContext(`invoice-close/${owner.tenantId}/2026-10`)
    const outcomes = await Promise.all([1, 2, 3, 4, 5].map(() => closePeriod(api.sql, api.deps.config, ctx, owner.tenantId, '2026-10')))
    expect(outcomes.map((o) => o.outcome).sort()).toEqual(['exists', 'exists', 'exists', 'exists', 'finalized'])
    const ids = new Set(outcomes.map((o) => (o.outcome === 'exists' || o.outcome === 'finalized' ? o.invoice.id : null)))
    expect(ids.size).toBe(1)
  })

  test('the unique index alone keeps a second snapshot out, whatever the code above it does', async () => {
    const { owner } = await endedPeriod()
    await closePeriod(api.sql, api.deps.config, activityContext('t'), owner.tenantId, '2026-10')
    const dup = await api.sql`
      insert into invoices (tenant_id, subscription_id, period, period_start, period_end, usage_cutoff, plan_id, currency, lines, subtotal, total, hash)
      select tenant_id, subscription_id, period, period_start, period_end, usage_cutoff, plan_id, currency, lines, subtotal, total, hash
        from invoices where tenant_id = ${owner.tenantId}`.catch((err) => err)
    expect(dup?.code).toBe('23505')
  })

  test('the snapshot: fee and a line per priced meter, hash recomputable from the API answer, immutable, next period begun', async () => {
    const { owner, billing } = await endedPeriod()
    const created = await billing.client.post('/tenants/current/invoices', { period: '2026-10' })
    expect(created.status).toBe(201)
    const inv = created.json.data
    expect(inv).toMatchObject({
      tenantId: owner.tenantId,
      period: '2026-10',
      periodStart: '2026-10-01T00:00:00.000Z',
      periodEnd: '2026-11-01T00:00:00.000Z',
      planId: 'standard',
      currency: 'EUR',
      status: 'open',
      subtotal: '49000',
      total: '49000',
      paidAt: null,
      provider: { invoiceRef: null },
    })
    expect(inv.lines[0]).toEqual({
      kind: 'fee',
      meter: null,
      description: 'Standard plan, monthly fee',
      quantity: '1',
      included: '0',
      billable: '1',
      unitPrice: '49000',
      per: '1',
      amount: '49000',
    })
    expect(inv.lines.filter((l: { kind: string }) => l.kind === 'usage').map((l: { meter: string }) => l.meter)).toEqual([
      'api_requests.personal_access_token',
      'api_requests.session',
      'edge_package.builds',
      'edge_package.bytes',
      'model_validation.cpu',
      'storage.byte_hours',
      'webhook.deliveries',
    ])
    const row = {
      tenant_id: inv.tenantId,
      subscription_id: inv.subscriptionId,
      period: inv.period,
      period_start: new Date(inv.periodStart),
      period_end: new Date(inv.periodEnd),
      usage_cutoff: new Date(inv.usageCutoff),
      plan_id: inv.planId,
      currency: inv.currency,
      lines: inv.lines,
      subtotal: inv.subtotal,
      total: inv.total,
    } as InvoiceRow
    expect(snapshotHash(snapshotOf(row))).toBe(inv.hash)
    expect((await billing.client.get(`/tenants/current/invoices/${inv.id}`)).json.data).toEqual(inv)
    expect((await billing.client.get('/tenants/current/invoices')).json.data).toEqual([inv])

    // Immutable: what was billed cannot change; the payment status can.
    const edit = await api.sql`update invoices set total = 0 where id = ${inv.id}`.catch((err) => err)
    expect(edit?.message).toContain('cannot change')
    await paymentEvent(billing.client, { type: 'paid' })
    expect((await billing.client.get(`/tenants/current/invoices/${inv.id}`)).json.data).toMatchObject({ status: 'paid', total: '49000', hash: inv.hash })

    const sub = (await billing.client.get('/tenants/current/subscription')).json.data
    expect(sub.currentPeriod).toEqual({ period: '2026-11', start: '2026-11-01T00:00:00.000Z', end: '2026-12-01T00:00:00.000Z' })
    const [event] = await api.sql<{ data: any }[]>`select data from events where tenant_id = ${owner.tenantId} and type = 'invoice.finalized'`
    expect(event!.data).toEqual({ invoiceId: inv.id, period: '2026-10', currency: 'EUR', total: '49000', hash: inv.hash })
    await sealAudit(api.sql)
    const [audit] = await api.sql`select actor_id, details from audit_log where chain = ${owner.tenantId} and action = 'invoice.finalized'`
    expect(audit!.details).toEqual({ period: '2026-10', total: '49000', currency: 'EUR', hash: inv.hash })
    expect(audit!.actor_id).toBe(billing.userId)
  })

  test("usage is billed over the allowance; usage recorded after a period's cut-off goes to the next invoice as an adjustment", async () => {
    const { owner, billing } = await endedPeriod()
    await api.sql`
      update subscriptions set current_period_start = '2026-08-01T00:00:00Z', current_period_end = '2026-09-01T00:00:00Z'
       where tenant_id = ${owner.tenantId}`
    const usage = (meter: string, quantity: number, occurredAt: string) => api.sql`
      insert into usage_events (tenant_id, meter, quantity, occurred_at, idempotency_key, payload_hash)
      values (${owner.tenantId}, ${meter}, ${quantity}, ${occurredAt}, ${crypto.randomUUID()}, sha256(gen_random_uuid()::text::bytea))`
    await usage('edge_package.builds', 100, '2026-08-10T00:00:00Z')
    await usage('edge_package.builds', 3, '2026-08-31T23:59:59Z')
    await usage('api_requests.session', 1_006_499, '2026-08-15T00:00:00Z')
    await usage('edge_package.builds', 7, '2026-09-01T00:00:00Z') // the next period's
    const august = (await billing.client.post('/tenants/current/invoices', { period: '2026-08' })).json.data
    const line = (inv: { lines: { kind: string; meter: string | null }[] }, kind: string, meter: string) =>
      inv.lines.find((l) => l.kind === kind && l.meter === meter)
    expect(line(august, 'usage', 'edge_package.builds')).toMatchObject({ quantity: '103', included: '100', billable: '3', unitPrice: '150', amount: '450' })
    // 6499 requests over the allowance at 0.1 cent per 1000: 0.6499 cent, half up to 1.
    expect(line(august, 'usage', 'api_requests.session')).toMatchObject({ billable: '6499', per: '1000', amount: '1' })
    expect(august.total).toBe(String(49_000 + 450 + 1))
    expect(august.lines.some((l: { kind: string }) => l.kind === 'adjustment')).toBe(false)

    // Two builds of August reported after August's invoice was cut: never in that snapshot, billed in September's.
    await usage('edge_package.builds', 2, '2026-08-20T00:00:00Z')
    const again = (await billing.client.get(`/tenants/current/invoices/${august.id}`)).json.data
    expect(again).toEqual(august)
    const september = (await billing.client.post('/tenants/current/invoices', { period: '2026-09' })).json.data
    expect(line(september, 'usage', 'edge_package.builds')).toMatchObject({ quantity: '7', billable: '0', amount: '0' })
    expect(line(september, 'adjustment', 'edge_package.builds')).toMatchObject({ quantity: '2', included: '0', billable: '2', amount: '300' })
    expect(september.total).toBe(String(49_000 + 300))
  })

  test('a period that has not ended, or is not the current one, is 400; an unknown period label is 400', async () => {
    const owner = await tenantOwner(api.url)
    const current = new Date().toISOString().slice(0, 7)
    for (const period of [current, '2020-01', '2026-13']) {
      const res = await owner.client.post('/tenants/current/invoices', { period })
      expect([res.status, res.json.code]).toEqual([400, 'VALIDATION_ERROR'])
    }
    expect((await owner.client.get('/tenants/current/invoices')).json.data).toEqual([])
  })

  test('cancel at period end: the close cancels it, and the tenant is billing-blocked from then on', async () => {
    const { owner, billing } = await endedPeriod()
    const v = (await billing.client.get('/tenants/current/subscription')).json.data.version
    await billing.client.patch('/tenants/current/subscription', { cancelAtPeriodEnd: true }, { 'if-match': `"v${v}"` })
    await closePeriod(api.sql, api.deps.config, activityContext(`invoice-close/${owner.tenantId}/2026-10`), owner.tenantId, '2026-10')
    const sub = (await billing.client.get('/tenants/current/subscription')).json.data
    expect(sub).toMatchObject({ status: 'canceled', canceledAt: '2026-11-01T00:00:00.000Z', billingBlock: { blocked: true, reasons: ['canceled'] } })
    const blocked = await api.sql<{ data: any }[]>`select data from events where tenant_id = ${owner.tenantId} and type = 'billing.blocked'`
    expect(blocked.map((e) => e.data)).toEqual([{ reasons: ['canceled'] }])
    // Canceled is final: the next period is never closed, nothing resumes it.
    expect((await closePeriod(api.sql, api.deps.config, activityContext('x'), owner.tenantId, '2026-11')).outcome).toBe('not_due')
    const resume = await billing.client.patch('/tenants/current/subscription', { status: 'active' }, { 'if-match': `"v${sub.version}"` })
    expect([resume.status, resume.json.code]).toEqual([409, 'BILLING_STATE_TRANSITION_INVALID'])
  })
})

describe('who reads invoices', () => {
  test('a researcher or a viewer: 403; another tenant’s billing admin: 404 and an empty list; ours: 200', async () => {
    const { owner, billing } = await endedPeriod()
    const inv = (await billing.client.post('/tenants/current/invoices', { period: '2026-10' })).json.data
    for (const role of ['researcher', 'viewer']) {
      const m = await memberOf(api.url, api.sql, owner.tenantId, role)
      for (const res of [
        await m.client.get('/tenants/current/invoices'),
        await m.client.get(`/tenants/current/invoices/${inv.id}`),
        await m.client.get(`/tenants/current/invoices/${inv.id}/document`),
        await m.client.post('/tenants/current/invoices', { period: '2026-10' }),
      ]) {
        expect([res.status, res.json.code]).toEqual([403, 'PERMISSION_DENIED'])
      }
    }
    const other = await endedPeriod()
    for (const res of [
      await other.billing.client.get(`/tenants/current/invoices/${inv.id}`),
      await other.billing.client.get(`/tenants/current/invoices/${inv.id}/document`),
    ]) {
      expect([res.status, res.json.code]).toEqual([404, 'NOT_FOUND'])
    }
    expect((await other.billing.client.get('/tenants/current/invoices')).json.data).toEqual([])
    expect((await billing.client.get(`/tenants/current/invoices/${inv.id}`)).status).toBe(200)
  })

  test('the rendered invoice: self-contained HTML under a CSP that allows nothing but its own stylesheet', async () => {
    const { billing } = await endedPeriod()
    const inv = (await billing.client.post('/tenants/current/invoices', { period: '2026-10' })).json.data
    const res = await billing.client.get(`/tenants/current/invoices/${inv.id}/document`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    const csp = res.headers.get('content-security-policy')!
    expect(csp).toStartWith("default-src 'none'; style-src 'sha256-")
    const style = /<style>([\s\S]*?)<\/style>/.exec(res.text)![1]!
    const hash = new Bun.CryptoHasher('sha256').update(style).digest('base64')
    expect(csp).toContain(`'sha256-${hash}'`)
    expect(res.text).toContain('Invoice 2026-10')
    expect(res.text).toContain('490.00 EUR')
    expect(res.text).toContain(inv.hash)
    expect(res.text).not.toMatch(/<script|src=|href=|url\(/i)
    const bad = await billing.client.get('/tenants/current/invoices/not-a-uuid/document')
    expect([bad.status, bad.json.code]).toEqual([404, 'NOT_FOUND'])
  })
})
