// The subscription as its tenant's members meet it: created with the tenant, read and changed by billing admins
// through the state table (If-Match required), moved by payment events and by the grace period's end; every change
// audited and announced. Written first as the attacks the issue names.
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expireGrace } from '../../api/billing/service'
import { activityContext } from '../../api/identity/context'
import { startApi, useApi } from '../support/api'
import { PROVIDER_KEY, paymentEvent } from './provider'
import { sealAudit } from '../support/audit'
import { tenantOwner } from '../support/fixtures'
import { memberOf } from '../tenancy/members'

const api = useApi({ BILLING_PROVIDER_KEY: PROVIDER_KEY })

const eventsOf = async (tenantId: string, types: string[]) =>
  (
    await api.sql<
      { type: string; data: any }[]
    >`select type, data from events where tenant_id = ${tenantId} and type = any(${types}) order by occurred_at, type desc`
  ).map((e) => ({ type: e.type, data: e.data }))

async function billingTenant() {
  const owner = await tenantOwner(api.url)
  const billing = await memberOf(api.url, api.sql, owner.tenantId, 'billing_admin')
  return { owner, billing }
}

describe('subscriptions', () => {
  test('every new tenant has one, on the default plan, its first period ending with the month (UTC)', async () => {
    const { owner } = await billingTenant()
    const res = await owner.client.get('/tenants/current/subscription')
    expect(res.status).toBe(200)
    expect(res.headers.get('etag')).toBe('"v1"')
    const s = res.json.data
    const now = new Date()
    expect(s).toMatchObject({
      tenantId: owner.tenantId,
      planId: 'standard',
      planName: 'Standard',
      status: 'active',
      currency: 'EUR',
      monthlyFee: '49000',
      cancelAtPeriodEnd: false,
      pastDueSince: null,
      graceEndsAt: null,
      billingBlock: { blocked: false, reasons: [] },
      provider: { name: null, customerRef: null, subscriptionRef: null },
      version: 1,
    })
    expect(s.currentPeriod.period).toBe(now.toISOString().slice(0, 7))
    expect(s.currentPeriod.end).toBe(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString())
    await sealAudit(api.sql)
    const [entry] = await api.sql`select action, details from audit_log where chain = ${owner.tenantId} and action = 'subscription.created'`
    expect(entry?.details).toEqual({ planId: 'standard' })
  })

  test('a researcher or a viewer cannot read it (403); billing admins read and change it; nothing else of billing admins changes', async () => {
    const { owner, billing } = await billingTenant()
    for (const role of ['researcher', 'viewer', 'admin']) {
      const m = await memberOf(api.url, api.sql, owner.tenantId, role)
      const read = await m.client.get('/tenants/current/subscription')
      if (role === 'admin') expect(read.status).toBe(200)
      else expect([read.status, read.json.code]).toEqual([403, 'PERMISSION_DENIED'])
      const write = await m.client.patch('/tenants/current/subscription', { status: 'paused' }, { 'if-match': '"v1"' })
      expect([write.status, write.json.code]).toEqual([403, 'PERMISSION_DENIED'])
      const paid = await paymentEvent(m.client, { type: 'paid' })
      expect([paid.status, paid.json.code]).toEqual([403, 'PERMISSION_DENIED'])
    }
    expect((await billing.client.get('/tenants/current/subscription')).status).toBe(200)
    // Billing admins see and do billing and nothing else: members and models stay out of their reach.
    for (const res of [
      await billing.client.get('/tenants/current/memberships'),
      await billing.client.get('/model-versions'),
      await billing.client.post('/training-jobs', { name: 'not mine' }),
      await billing.client.post('/tenant-invitations', { email: 'x@example.test', role: 'viewer' }),
    ]) {
      expect([res.status, res.json.code]).toEqual([403, 'PERMISSION_DENIED'])
    }
    // A token can carry no more: a billing admin's PAT with model scopes is refused at creation.
    const overreach = await billing.client.post('/api-keys', { name: 'x', scopes: ['model:write'] })
    expect([overreach.status, overreach.json.code]).toEqual([400, 'INVALID_PERMISSION_OVERLAY'])
    expect((await billing.client.get('/tenants/current/subscription')).json.data.version).toBe(1)
  })

  test('PATCH needs If-Match: absent is 400, stale is 412, and nothing changes', async () => {
    const { billing } = await billingTenant()
    const none = await billing.client.patch('/tenants/current/subscription', { planId: 'team' })
    expect([none.status, none.json.code]).toEqual([400, 'IF_MATCH_INVALID'])
    const stale = await billing.client.patch('/tenants/current/subscription', { planId: 'team' }, { 'if-match': '"v9"' })
    expect([stale.status, stale.json.code]).toEqual([412, 'PRECONDITION_FAILED'])
    const unknown = await billing.client.patch('/tenants/current/subscription', { planId: 'platinum' }, { 'if-match': '"v1"' })
    expect([unknown.status, unknown.json.code]).toEqual([400, 'VALIDATION_ERROR'])
    const empty = await billing.client.patch('/tenants/current/subscription', {}, { 'if-match': '"v1"' })
    expect([empty.status, empty.json.code]).toEqual([400, 'VALIDATION_ERROR'])
    expect((await billing.client.get('/tenants/current/subscription')).json.data).toMatchObject({ planId: 'standard', version: 1 })
  })

  test('plan change, pause (blocked), resume (unblocked), cancel at period end: each audited and announced', async () => {
    const { owner, billing } = await billingTenant()
    const c = billing.client
    const changed = await c.patch('/tenants/current/subscription', { planId: 'team' }, { 'if-match': '"v1"' })
    expect([changed.status, changed.headers.get('etag')]).toEqual([200, '"v2"'])
    expect(changed.json.data).toMatchObject({ planId: 'team', planName: 'Team', monthlyFee: '199000', status: 'active' })
    const paused = await c.patch('/tenants/current/subscription', { status: 'paused' }, { 'if-match': '"v2"' })
    expect(paused.json.data).toMatchObject({ status: 'paused', billingBlock: { blocked: true, reasons: ['paused'] } })
    const resumed = await c.patch('/tenants/current/subscription', { status: 'active' }, { 'if-match': '"v3"' })
    expect(resumed.json.data).toMatchObject({ status: 'active', billingBlock: { blocked: false, reasons: [] } })
    const canceling = await c.patch('/tenants/current/subscription', { cancelAtPeriodEnd: true }, { 'if-match': '"v4"' })
    // Canceling takes effect when the period ends: until then nothing is blocked.
    expect(canceling.json.data).toMatchObject({ status: 'active', cancelAtPeriodEnd: true, billingBlock: { blocked: false } })

    expect(await eventsOf(owner.tenantId, ['subscription.updated', 'billing.blocked', 'billing.unblocked'])).toEqual([
      { type: 'subscription.updated', data: expect.objectContaining({ planId: 'team', status: 'active', previousStatus: 'active' }) },
      { type: 'subscription.updated', data: expect.objectContaining({ status: 'paused', previousStatus: 'active' }) },
      { type: 'billing.blocked', data: { reasons: ['paused'] } },
      { type: 'subscription.updated', data: expect.objectContaining({ status: 'active', previousStatus: 'paused' }) },
      { type: 'billing.unblocked', data: { subscriptionId: changed.json.data.id } },
      { type: 'subscription.updated', data: expect.objectContaining({ cancelAtPeriodEnd: true }) },
    ])
    await sealAudit(api.sql)
    const audit = await api.sql<{ action: string; changes: any }[]>`
      select action, changes from audit_log where chain = ${owner.tenantId} and action like any(array['subscription.updated', 'billing.%']) order by seq`
    expect(audit.map((a) => a.action)).toEqual([
      'subscription.updated',
      'subscription.updated',
      'billing.blocked',
      'subscription.updated',
      'billing.unblocked',
      'subscription.updated',
    ])
    expect(audit[0]!.changes).toEqual({ planId: { before: 'standard', after: 'team' } })
  })

  test('payment_failed: active → past_due with a grace period; moves the table forbids are 409; paid settles it', async () => {
    const { owner, billing } = await billingTenant()
    const c = billing.client
    const failed = await paymentEvent(c, { type: 'payment_failed', reference: 'ch_1' })
    expect(failed.status).toBe(200)
    const s = failed.json.data
    expect(s.status).toBe('past_due')
    expect(Date.parse(s.graceEndsAt) - Date.parse(s.pastDueSince)).toBe(7 * 24 * 3600 * 1000)
    // Overdue: no pause, no resume, no plan change (each a move the table lacks); the refusal changes nothing.
    for (const body of [{ status: 'paused' }, { status: 'active' }, { planId: 'team' }]) {
      const res = await c.patch('/tenants/current/subscription', body, { 'if-match': `"v${s.version}"` })
      expect([res.status, res.json.code]).toEqual([409, 'BILLING_STATE_TRANSITION_INVALID'])
    }
    // A second failure keeps the grace counted from the first.
    const again = await paymentEvent(c, { type: 'payment_failed' })
    expect(again.json.data).toMatchObject({ status: 'past_due', pastDueSince: s.pastDueSince })
    const paid = await paymentEvent(c, { type: 'paid' })
    expect(paid.json.data).toMatchObject({ status: 'active', pastDueSince: null, graceEndsAt: null })
    await sealAudit(api.sql)
    const recorded = await api.sql<{ details: any }[]>`
      select details from audit_log where chain = ${owner.tenantId} and action = 'subscription.payment_recorded' order by seq`
    expect(recorded.map((r) => [r.details.type, r.details.status])).toEqual([
      ['payment_failed', 'past_due'],
      ['payment_failed', 'past_due'],
      ['paid', 'active'],
    ])
  })

  test('the grace period ends in unpaid (blocked), only for the same debt and only once it has passed; paid unblocks', async () => {
    const { owner, billing } = await billingTenant()
    const c = billing.client
    const since = (await paymentEvent(c, { type: 'payment_failed' })).json.data.pastDueSince
    const ctx = activityContext(`payment-grace/${owner.tenantId}/${since}`)
    // Not yet: the grace period has not passed.
    expect(await expireGrace(api.sql, api.deps.config, ctx, owner.tenantId, new Date(since))).toBe(false)
    const longAgo = new Date(Date.parse(since) - 8 * 24 * 3600 * 1000)
    await api.sql`update subscriptions set past_due_since = ${longAgo} where tenant_id = ${owner.tenantId}`
    // A timer of another debt (its own start) changes nothing.
    expect(await expireGrace(api.sql, api.deps.config, ctx, owner.tenantId, new Date(since))).toBe(false)
    expect(await expireGrace(api.sql, api.deps.config, ctx, owner.tenantId, longAgo)).toBe(true)
    expect(await expireGrace(api.sql, api.deps.config, ctx, owner.tenantId, longAgo)).toBe(false)
    const unpaid = (await c.get('/tenants/current/subscription')).json.data
    expect(unpaid).toMatchObject({ status: 'unpaid', billingBlock: { blocked: true, reasons: ['unpaid'] } })
    const pause = await c.patch('/tenants/current/subscription', { status: 'paused' }, { 'if-match': `"v${unpaid.version}"` })
    expect([pause.status, pause.json.code]).toEqual([409, 'BILLING_STATE_TRANSITION_INVALID'])
    const paid = await paymentEvent(c, { type: 'paid' })
    expect(paid.json.data).toMatchObject({ status: 'active', billingBlock: { blocked: false } })
    expect((await eventsOf(owner.tenantId, ['billing.blocked', 'billing.unblocked'])).map((e) => e.type)).toEqual(['billing.blocked', 'billing.unblocked'])
  })

  test('a payment event with an Idempotency-Key is recorded once', async () => {
    const { owner, billing } = await billingTenant()
    const key = crypto.randomUUID()
    const first = await paymentEvent(billing.client, { type: 'payment_failed' }, { 'idempotency-key': key })
    const second = await paymentEvent(billing.client, { type: 'payment_failed' }, { 'idempotency-key': key })
    expect([first.status, second.status, second.headers.get('idempotent-replayed')]).toEqual([200, 200, 'true'])
    const other = await paymentEvent(billing.client, { type: 'paid' }, { 'idempotency-key': key })
    expect([other.status, other.json.code]).toEqual([409, 'IDEMPOTENCY_CONFLICT'])
    await sealAudit(api.sql)
    const [n] = await api.sql`select count(*)::int as n from audit_log where chain = ${owner.tenantId} and action = 'subscription.payment_recorded'`
    expect(n!.n).toBe(1)
  })

  test("another tenant's billing admin sees its own subscription, never ours", async () => {
    const a = await billingTenant()
    const b = await billingTenant()
    const theirs = (await b.billing.client.get('/tenants/current/subscription')).json.data
    const ours = (await a.billing.client.get('/tenants/current/subscription')).json.data
    expect(theirs.tenantId).toBe(b.owner.tenantId)
    expect(ours.id).not.toBe(theirs.id)
  })
})

describe('a deployment that bills no one', () => {
  test('a price book without a default plan gives new tenants no subscription: 404 SUBSCRIPTION_NOT_FOUND', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'price-book-'))
    const file = join(dir, 'price-book.json')
    writeFileSync(file, JSON.stringify({ currency: 'EUR', plans: { standard: { name: 'Standard', monthlyFee: 0, meters: {} } } }))
    const unbilled = await startApi({ BILLING_PRICE_BOOK_FILE: file, BILLING_PROVIDER_KEY: PROVIDER_KEY })
    try {
      const owner = await tenantOwner(unbilled.url)
      for (const res of [
        await owner.client.get('/tenants/current/subscription'),
        await owner.client.patch('/tenants/current/subscription', { planId: 'standard' }, { 'if-match': '"v1"' }),
        await paymentEvent(owner.client, { type: 'paid' }),
        await owner.client.post('/tenants/current/invoices', { period: '2026-01' }),
      ]) {
        expect([res.status, res.json.code]).toEqual([404, 'SUBSCRIPTION_NOT_FOUND'])
      }
      expect((await owner.client.get('/tenants/current/invoices')).json.data).toEqual([])
    } finally {
      await unbilled.stop()
    }
  })
})
