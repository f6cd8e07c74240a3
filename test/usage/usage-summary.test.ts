// The usage summary and the usage events under it: written first as the attacks (a replay storm, readers without
// billing:read, another tenant's billing admin, another tenant's project), then what it adds up.
import { describe, expect, test } from 'bun:test'
import { recordUsage, UsageKeyConflict } from '../../api/usage/record'
import { sumUsage } from '../../api/usage/service'
import { useApi } from '../support/api'
import { tenantOwner } from '../support/fixtures'
import { memberOf } from '../tenancy/members'

const api = useApi()
const MONTH = { from: '2026-10-01T00:00:00Z', to: '2026-11-01T00:00:00Z' }
const q = (params: Record<string, string>) => `/tenants/current/usage-summary?${new URLSearchParams({ ...MONTH, ...params })}`
const count = async (tenantId: string) => Number((await api.sql`select count(*)::int as n from usage_events where tenant_id = ${tenantId}`)[0]!.n)

async function billingTenant() {
  const owner = await tenantOwner(api.url)
  const billing = await memberOf(api.url, api.sql, owner.tenantId, 'billing_admin')
  return { owner, billing }
}

async function project(owner: Awaited<ReturnType<typeof tenantOwner>>) {
  const res = await owner.client.post('/projects', { name: 'Arm', slug: `arm-${crypto.randomUUID().slice(0, 8)}` })
  expect(res.status).toBe(201)
  return res.json.data.id as string
}

describe('usage events', () => {
  test('one event replayed 100 times concurrently, each in its own transaction, is counted once', async () => {
    const { tenantId } = await tenantOwner(api.url)
    const event = { tenantId, projectId: null, meter: 'edge_package.builds' as const, quantity: 1, idempotencyKey: `storm-${crypto.randomUUID()}` }
    const outcomes = await Promise.all(Array.from({ length: 100 }, () => api.sql.begin((tx) => recordUsage(tx, event))))
    expect(outcomes.filter((o) => o === 'recorded')).toHaveLength(1)
    expect(outcomes.filter((o) => o === 'replayed')).toHaveLength(99)
    expect(await count(tenantId)).toBe(1)
    expect(await sumUsage(api.sql, tenantId, 'edge_package.builds', new Date(0), new Date(Date.now() + 60_000))).toBe(1n)
  })

  test('the same key with another payload is refused and rolls back the work it came with', async () => {
    const { tenantId } = await tenantOwner(api.url)
    const key = `k-${crypto.randomUUID()}`
    await api.sql.begin((tx) => recordUsage(tx, { tenantId, projectId: null, meter: 'edge_package.bytes', quantity: 100, idempotencyKey: key }))
    const other = api.sql.begin(async (tx) => {
      await tx`update tenants set name = 'changed with the event' where id = ${tenantId}`
      return recordUsage(tx, { tenantId, projectId: null, meter: 'edge_package.bytes', quantity: 101, idempotencyKey: key })
    })
    expect(other).rejects.toBeInstanceOf(UsageKeyConflict)
    await other.catch(() => {})
    expect((await api.sql`select name from tenants where id = ${tenantId}`)[0]!.name).not.toBe('changed with the event')
    expect(await sumUsage(api.sql, tenantId, 'edge_package.bytes', new Date(0), new Date(Date.now() + 60_000))).toBe(100n)
  })

  test('a write that rolls back claims nothing: its retry with the same key is counted (openmeter#5118)', async () => {
    const { tenantId } = await tenantOwner(api.url)
    const event = { tenantId, projectId: null, meter: 'webhook.deliveries' as const, quantity: 1, idempotencyKey: `retry-${crypto.randomUUID()}` }
    const failed = api.sql.begin(async (tx) => {
      await recordUsage(tx, event)
      throw new Error('the measured work failed after its event was written')
    })
    expect(failed).rejects.toThrow('the measured work failed')
    await failed.catch(() => {})
    expect(await count(tenantId)).toBe(0)
    expect(await api.sql.begin((tx) => recordUsage(tx, event))).toBe('recorded')
    expect(await count(tenantId)).toBe(1)
  })

  test("an event cannot name another tenant's project", async () => {
    const a = await tenantOwner(api.url)
    const b = await tenantOwner(api.url)
    const theirs = await project(b)
    const write = api.sql.begin((tx) =>
      recordUsage(tx, { tenantId: a.tenantId, projectId: theirs, meter: 'edge_package.builds', quantity: 1, idempotencyKey: crypto.randomUUID() }),
    )
    expect(write).rejects.toMatchObject({ code: '23503' })
    await write.catch(() => {})
  })
})

describe('GET /tenants/current/usage-summary', () => {
  test('researchers and viewers are refused (403); the billing admin and the owner read it', async () => {
    const { owner, billing } = await billingTenant()
    for (const role of ['researcher', 'viewer']) {
      const m = await memberOf(api.url, api.sql, owner.tenantId, role)
      const res = await m.client.get(q({}))
      expect({ role, status: res.status, code: res.json.code }).toEqual({ role, status: 403, code: 'PERMISSION_DENIED' })
    }
    expect((await billing.client.get(q({}))).status).toBe(200)
    expect((await owner.client.get(q({}))).status).toBe(200)
  })

  test("another tenant's billing admin sees only its own usage, and our project is 404 to it", async () => {
    const ours = await billingTenant()
    const theirs = await billingTenant()
    const p = await project(ours.owner)
    await api.sql`
      insert into usage_events (tenant_id, project_id, meter, quantity, occurred_at, idempotency_key, payload_hash)
      values (${ours.owner.tenantId}, ${p}, 'edge_package.bytes', 12345, '2026-10-10T00:00:00Z', ${crypto.randomUUID()}, ${Buffer.alloc(32)})`
    const total = async (c: typeof ours.billing.client) =>
      (await c.get(q({}))).json.data.totals.find((t: { meter: string }) => t.meter === 'edge_package.bytes').quantity
    expect(await total(ours.billing.client)).toBe('12345')
    expect(await total(theirs.billing.client)).toBe('0')
    const probe = await theirs.billing.client.get(q({ scope: 'project', projectId: p }))
    expect([probe.status, probe.json.code]).toEqual([404, 'NOT_FOUND'])
    const mine = await ours.billing.client.get(q({ scope: 'project', projectId: p }))
    expect(mine.json.data.totals.find((t: { meter: string }) => t.meter === 'edge_package.bytes').quantity).toBe('12345')
  })

  test('an unknown scope, or a filter its scope does not take, is USAGE_SUMMARY_SCOPE_INVALID', async () => {
    const { billing } = await billingTenant()
    const cases: Record<string, string>[] = [
      { scope: 'platform' },
      { scope: 'tenants' },
      { scope: 'meter', meter: 'gpu.hours' },
      { scope: 'meter' },
      { scope: 'project' },
      { projectId: crypto.randomUUID() },
      { meter: 'edge_package.builds' },
    ]
    for (const params of cases) {
      const res = await billing.client.get(q(params))
      expect({ params, status: res.status, code: res.json.code }).toEqual({ params, status: 400, code: 'USAGE_SUMMARY_SCOPE_INVALID' })
    }
  })

  test('the window is required, ordered and at most 367 days, as the audit log refuses windows', async () => {
    const { billing } = await billingTenant()
    const get = (path: string) => billing.client.get(path)
    const cases: [string, string][] = [
      ['/tenants/current/usage-summary', 'query.from'],
      ['/tenants/current/usage-summary?from=2026-01-01T00:00:00Z', 'query.to'],
      ['/tenants/current/usage-summary?from=yesterday&to=2026-01-01T00:00:00Z', 'query.from'],
      ['/tenants/current/usage-summary?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'query.to'],
      ['/tenants/current/usage-summary?from=2025-01-01T00:00:00Z&to=2026-01-04T00:00:00Z', 'query.to'],
      [`${q({ groupBy: 'project,hour' })}`, 'query.groupBy'],
    ]
    for (const [path, field] of cases) {
      const res = await get(path)
      expect({ path, status: res.status, code: res.json.code, field: res.json.errors?.[0]?.path }).toEqual({
        path,
        status: 400,
        code: 'VALIDATION_ERROR',
        field,
      })
    }
    expect((await get('/tenants/current/usage-summary?from=2025-01-01T00:00:00Z&to=2026-01-03T00:00:00Z')).status).toBe(200)
  })

  test('totals over 100,000 events equal sums over the raw rows exactly, per meter, project and day', async () => {
    const { owner, billing } = await billingTenant()
    const p1 = await project(owner)
    const p2 = await project(owner)
    // Quantities up to 2^40 so the byte sums pass 2^53, where a float would round.
    await api.sql`
      insert into usage_events (tenant_id, project_id, meter, quantity, subject, occurred_at, idempotency_key, payload_hash)
      select ${owner.tenantId}::uuid,
             case i % 3 when 0 then null when 1 then ${p1}::uuid else ${p2}::uuid end,
             (array['edge_package.bytes', 'edge_package.builds', 'storage.peak_bytes', 'model_validation.versions'])[1 + i % 4],
             case i % 4 when 0 then 1099511627776 + i when 2 then i * 7 else 1 end,
             case when i % 4 = 3 then 'mv-' || (i % 997) end,
             timestamptz '2026-09-25T00:00:00Z' + (i * interval '37 seconds'),
             'gen-' || i, decode(repeat('00', 32), 'hex')
        from generate_series(1, 100000) i`
    const res = await billing.client.get(q({ groupBy: 'project,day' }))
    expect([res.status, res.text]).toEqual([200, res.text])
    const s = res.json.data
    const raw = await api.sql<{ meter: string; total: string; peak: string; distinct: string }[]>`
      select meter, sum(quantity)::text as total, max(quantity)::text as peak, count(distinct subject)::text as distinct
        from usage_events where tenant_id = ${owner.tenantId} and occurred_at >= ${MONTH.from} and occurred_at < ${MONTH.to} group by meter`
    const expected = Object.fromEntries(
      raw.map((r) => [r.meter, r.meter === 'storage.peak_bytes' ? r.peak : r.meter === 'model_validation.versions' ? r.distinct : r.total]),
    )
    expect(BigInt(expected['edge_package.bytes']!)).toBeGreaterThan(2n ** 53n)
    const totals = Object.fromEntries(
      s.totals.filter((t: { quantity: string }) => t.quantity !== '0').map((t: { meter: string; quantity: string }) => [t.meter, t.quantity]),
    )
    expect(totals).toEqual(expected)
    // The rows add up to the totals for the additive meters, and each row is exactly its group's sum.
    const bytesRows = s.rows.filter((r: { meter: string }) => r.meter === 'edge_package.bytes')
    expect(bytesRows.reduce((n: bigint, r: { quantity: string }) => n + BigInt(r.quantity), 0n).toString()).toBe(expected['edge_package.bytes'])
    const [one] = await api.sql<{ total: string }[]>`
      select sum(quantity)::text as total from usage_events
       where tenant_id = ${owner.tenantId} and project_id = ${p1} and meter = 'edge_package.builds'
         and occurred_at >= '2026-10-05T00:00:00Z' and occurred_at < '2026-10-06T00:00:00Z'`
    expect(
      s.rows.find((r: { meter: string; projectId: string; day: string }) => r.meter === 'edge_package.builds' && r.projectId === p1 && r.day === '2026-10-05')
        .quantity,
    ).toBe(one!.total)
    expect(await sumUsage(api.sql, owner.tenantId, 'edge_package.bytes', new Date(MONTH.from), new Date(MONTH.to))).toBe(
      BigInt(expected['edge_package.bytes']!),
    )
    // One project's scope is that project's rows alone.
    const scoped = (await billing.client.get(q({ scope: 'project', projectId: p2 }))).json.data
    const [p2total] = await api.sql<{ total: string }[]>`
      select sum(quantity)::text as total from usage_events
       where tenant_id = ${owner.tenantId} and project_id = ${p2} and meter = 'edge_package.bytes' and occurred_at >= ${MONTH.from} and occurred_at < ${MONTH.to}`
    expect(scoped.totals.find((t: { meter: string }) => t.meter === 'edge_package.bytes').quantity).toBe(p2total!.total)
  })
})
