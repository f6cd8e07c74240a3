// The billing block, as a blocked tenant meets it: every operation that starts new work answers 400 BILLING_BLOCKED
// through the new-work gate, from a PAT cached before the block too; reads, billing and the audit trail keep working; nothing
// is deleted; lifting the block restores everything on the next request. Written first as the attacks the issue names.
import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { PROVIDER_KEY, paymentEvent } from './provider'
import { hourAgo, inAnHour, sealAudit } from '../support/audit'
import { patFor, tenantOwner } from '../support/fixtures'
import { memberOf } from '../tenancy/members'

const api = useApi({ BILLING_PROVIDER_KEY: PROVIDER_KEY })
const MUTATING = new Set(['post', 'put', 'patch', 'delete'])

/** The operator's command, as docs/api.md quotes it, against this run's database. */
async function operator(...args: string[]): Promise<string> {
  const proc = Bun.spawn([process.execPath, 'scripts/billing-block.ts', ...args], { stdout: 'pipe', stderr: 'pipe', env: process.env })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`scripts/billing-block.ts exited ${code}: ${err}`)
  return out
}

/** A ready model version and a profile: what a build starts from. */
async function buildSources(tenantId: string) {
  const [p] = await api.sql<{ id: string }[]>`
    insert into embodiment_profiles (tenant_id, name, robot_type, control_rate_hz, observation_features, action_features)
    values (${tenantId}, 'arm', 'so100', 30, '[]', '[]') returning id`
  const [v] = await api.sql<{ id: string }[]>`
    insert into model_versions (tenant_id, name, format, status, source_kind, source, objects)
    values (${tenantId}, 'v', 'onnx', 'ready', 'imported_checkpoint', '{"path":"m.onnx"}', '[]') returning id`
  return { profileId: p!.id, versionId: v!.id }
}

describe('the billing block', () => {
  test("a paused tenant's PAT cannot start a build or any new work (400 BILLING_BLOCKED) while its reads work; resuming restores it at once", async () => {
    const owner = await tenantOwner(api.url)
    const billing = await memberOf(api.url, api.sql, owner.tenantId, 'billing_admin')
    const other = await tenantOwner(api.url)
    const pat = owner.client.withBearer((await patFor(owner.client, ['tenant:read', 'tenant:manage', 'apikey:write', 'model:read', 'model:write'])).token)
    const otherPat = other.client.withBearer((await patFor(other.client, ['tenant:manage', 'model:write'])).token)
    const { profileId, versionId } = await buildSources(owner.tenantId)
    // Warm this replica's PAT cache: the refusal below must come from an evicted entry, not a fresh read.
    const before = await pat.post('/training-jobs', { name: 'before' })
    expect(before.status).toBe(201)

    const paused = await billing.client.patch('/tenants/current/subscription', { status: 'paused' }, { 'if-match': '"v1"' })
    expect(paused.json.data.billingBlock).toEqual({ blocked: true, reasons: ['paused'] })

    const build = await pat.post(`/model-versions/${versionId}/edge-inference-package`, { embodimentProfileId: profileId, targetArch: 'cpu', mode: 'local' })
    expect([build.status, build.json.code]).toEqual([400, 'BILLING_BLOCKED'])
    expect(build.json.message).toContain('paused')
    for (const [client, path, body] of [
      [pat, '/training-jobs', { name: 'after' }],
      [pat, '/projects', { name: 'After', slug: 'after' }],
      [pat, '/api-keys', { name: 'another', scopes: ['tenant:read'] }],
      [pat, '/webhook-endpoints', { url: 'https://hooks.example.test/in', events: ['model_version.ready'] }],
      [owner.client, '/tenant-invitations', { email: 'new@example.test', role: 'viewer' }],
      [owner.client, '/tenants/current/storage-reconciliation-jobs', { dryRun: true }],
    ] as const) {
      const res = await client.post(path, body)
      expect({ path, status: res.status, code: res.json.code }).toEqual({ path, status: 400, code: 'BILLING_BLOCKED' })
    }
    // Nothing was started, nothing deleted; reads, billing and the audit trail's verification keep working.
    expect((await api.sql`select id from edge_packages where tenant_id = ${owner.tenantId}`).length).toBe(0)
    expect((await pat.get('/training-jobs')).json.data.map((j: { name: string }) => j.name)).toEqual(['before'])
    expect((await pat.get('/tenants/current/memberships')).status).toBe(200)
    expect((await billing.client.get('/tenants/current/subscription')).status).toBe(200)
    expect((await billing.client.get('/tenants/current/invoices')).status).toBe(200)
    const verified = await owner.client.post('/tenants/current/audit-log/verifications', { from: hourAgo(), to: inAnHour() })
    expect(verified.json.data).toMatchObject({ intact: true })
    // Another tenant is untouched.
    expect((await otherPat.post('/training-jobs', { name: 'theirs' })).status).toBe(201)

    const resumed = await billing.client.patch('/tenants/current/subscription', { status: 'active' }, { 'if-match': '"v2"' })
    expect(resumed.json.data.billingBlock).toEqual({ blocked: false, reasons: [] })
    expect((await pat.post('/training-jobs', { name: 'after' })).status).toBe(201)
    expect((await owner.client.post('/projects', { name: 'After', slug: 'after' })).status).toBe(201)
  })

  test("a tenant's own billing admin or owner cannot settle its debt: payment events need the provider's key", async () => {
    const owner = await tenantOwner(api.url)
    const billing = await memberOf(api.url, api.sql, owner.tenantId, 'billing_admin')
    await paymentEvent(billing.client, { type: 'payment_failed' })
    await api.sql`update subscriptions set status = 'unpaid' where tenant_id = ${owner.tenantId}`
    for (const [client, key] of [
      [billing.client, null],
      [owner.client, null],
      [billing.client, 'a guess at the deployment key, long enough to be one'],
      [billing.client, PROVIDER_KEY.slice(0, -1)],
    ] as const) {
      const res = await paymentEvent(client, { type: 'paid' }, {}, key)
      expect([res.status, res.json.code]).toEqual([403, 'FORBIDDEN'])
    }
    expect((await billing.client.get('/tenants/current/subscription')).json.data.status).toBe('unpaid')
    expect((await paymentEvent(billing.client, { type: 'paid' })).json.data.status).toBe('active')
  })

  test('unpaid blocks too, and a payment lifts it; an operator block holds whatever the payments say', async () => {
    const owner = await tenantOwner(api.url)
    const billing = await memberOf(api.url, api.sql, owner.tenantId, 'billing_admin')
    const pat = owner.client.withBearer((await patFor(owner.client, ['model:write'])).token)
    expect((await pat.post('/training-jobs', { name: 'warm' })).status).toBe(201)
    await paymentEvent(billing.client, { type: 'payment_failed' })
    // past_due is within the grace period: not blocked.
    expect((await pat.post('/training-jobs', { name: 'in grace' })).status).toBe(201)
    await api.sql`update subscriptions set status = 'unpaid' where tenant_id = ${owner.tenantId}`
    await api.deps.pats.fence()
    const refused = await pat.post('/training-jobs', { name: 'unpaid' })
    expect([refused.status, refused.json.code]).toEqual([400, 'BILLING_BLOCKED'])
    await paymentEvent(billing.client, { type: 'paid' })
    expect((await pat.post('/training-jobs', { name: 'paid' })).status).toBe(201)

    expect(await operator(owner.tenantId, 'block', 'fraud review')).toContain('operator block on (fraud review)')
    await api.deps.pats.fence()
    const blocked = await pat.post('/training-jobs', { name: 'operator' })
    expect([blocked.status, blocked.json.code]).toEqual([400, 'BILLING_BLOCKED'])
    expect(blocked.json.message).toContain('operator')
    // A payment does not lift an operator's block.
    const sub = (await paymentEvent(billing.client, { type: 'paid' })).json.data
    expect(sub.billingBlock).toEqual({ blocked: true, reasons: ['operator'] })
    expect((await pat.post('/training-jobs', { name: 'still' })).status).toBe(400)
    expect(await operator(owner.tenantId, 'unblock')).toContain('operator block off')
    await api.deps.pats.fence()
    expect((await pat.post('/training-jobs', { name: 'lifted' })).status).toBe(201)

    await sealAudit(api.sql)
    const audit = await api.sql<{ action: string; details: any }[]>`
      select action, details from audit_log where chain = ${owner.tenantId} and action like 'billing.%' order by seq`
    // The unpaid status above was written with SQL: only its lifting (by the payment) went through the service.
    expect(audit.map((a) => [a.action, a.details?.reasons ?? a.details?.was])).toEqual([
      ['billing.unblocked', ['unpaid']],
      ['billing.blocked', ['operator']],
      ['billing.unblocked', ['operator']],
    ])
  })

  test('in the OpenAPI document every gated operation lists BILLING_BLOCKED among its 400 codes; billing operations are exempt', async () => {
    const doc = await (await fetch(`${api.url}/v1/openapi.json`)).json()
    let gated = 0
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(ops)) {
        if (!MUTATING.has(method)) continue
        const key = `${method.toUpperCase()} ${path}`
        if (path.includes('/subscription') || path.endsWith('/invoices'))
          expect({ key, exempt: typeof op['x-new-work-exempt'] }).toEqual({ key, exempt: 'string' })
        if (op['x-new-work'] === undefined) continue
        gated++
        expect({ key, sets: op['x-error-sets'] }).toEqual({ key, sets: expect.arrayContaining(['G400']) })
        expect({ key, codes: op.responses['400'].description }).toEqual({ key, codes: expect.stringContaining('BILLING_BLOCKED') })
      }
    }
    expect(gated).toBeGreaterThanOrEqual(20)
  })
})
