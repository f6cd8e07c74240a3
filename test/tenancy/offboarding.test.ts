// Offboarding a tenant (docs/api.md "Offboarding a tenant"): the attacks first (an admin, a PAT, a stale session,
// another tenant's owner, a hundred requests at once), then the whole request against the real worker, MinIO and
// Postgres: new work refused while reads and exports answer, the signed export, the mail, and the cancel.
import { describe, expect, setDefaultTimeout, test } from 'bun:test'
import { createHash, createPublicKey, verify } from 'node:crypto'
import { gunzipSync } from 'node:zlib'
import { dssePae, publicSigningKeys } from '../../api/edge-packages/signing'
import { TENANT_EXPORT_PAYLOAD_TYPE, type TenantExportManifest } from '../../api/offboarding/export'
import { offboardingWorkflowId } from '../../workflows/contract-offboarding'
import { useApi } from '../support/api'
import { sealAudit } from '../support/audit'
import type { Client } from '../support/client'
import { patFor } from '../support/fixtures'
import { waitForMail } from '../support/mailbox'
import { connectTemporal, eventually } from '../support/temporal'
import { localS3, provisionedTenant } from '../storage/helpers'
import { completedRunReport, seededPackage } from '../edge-packages/helpers'
import { memberOf } from './members'

// Provisioning and the export each wait on the worker.
setDefaultTimeout(90_000)

const api = useApi()
const PATH = '/tenants/current/offboarding'

const codeOf = (res: { status: number; json: { code?: string } }) => [res.status, res.json?.code]

async function exportReady(client: Client) {
  return eventually(
    'the offboarding export to be ready',
    async () => {
      const res = await client.get(PATH)
      return ['ready', 'failed'].includes(res.json?.data?.export?.status) ? res.json.data : undefined
    },
    60_000,
  )
}

describe('offboarding: who may', () => {
  test("an admin is refused, a PAT or a session older than 5 minutes is refused, another tenant's owner sees nothing", async () => {
    const owner = await provisionedTenant(api.url)
    const admin = await memberOf(api.url, api.sql, owner.tenantId, 'admin')
    expect(codeOf(await admin.client.post(PATH))).toEqual([403, 'PERMISSION_DENIED'])
    expect(codeOf(await admin.client.get(PATH))).toEqual([403, 'PERMISSION_DENIED'])
    expect(codeOf(await admin.client.delete(PATH))).toEqual([403, 'PERMISSION_DENIED'])

    const pat = owner.client.withBearer((await patFor(owner.client, ['tenant:read', 'tenant:manage'])).token)
    expect(codeOf(await pat.post(PATH))).toEqual([403, 'FORBIDDEN'])

    await api.sql`update sessions set authenticated_at = now() - interval '6 minutes' where user_id = ${owner.userId}`
    expect(codeOf(await owner.client.post(PATH))).toEqual([403, 'FORBIDDEN'])
    expect(codeOf(await owner.client.get(PATH))).toEqual([404, 'OFFBOARDING_REQUEST_NOT_FOUND'])
    const [tenant] = await api.sql`select lifecycle from tenants where id = ${owner.tenantId}`
    expect(tenant!.lifecycle).toBe('active')

    await api.sql`update sessions set authenticated_at = now() where user_id = ${owner.userId}`
    const opened = await owner.client.post(PATH)
    expect(opened.status).toBe(201)

    const stranger = await provisionedTenant(api.url)
    expect(codeOf(await stranger.client.get(PATH))).toEqual([404, 'OFFBOARDING_REQUEST_NOT_FOUND'])
    expect(codeOf(await stranger.client.delete(PATH))).toEqual([404, 'OFFBOARDING_REQUEST_NOT_FOUND'])
    // The stranger's tenant header naming ours is a mismatch, never a way in.
    expect(codeOf(await stranger.client.delete(PATH, { 'x-tenant-id': owner.tenantId }))).toEqual([400, 'TENANT_CONTEXT_MISMATCH'])
    expect((await owner.client.get(PATH)).json.data.id).toBe(opened.json.data.id)
    expect((await owner.client.delete(PATH)).status).toBe(200)
  })

  test('a hundred concurrent requests: exactly one opens, the others are OFFBOARDING_REQUEST_ALREADY_ACTIVE', async () => {
    const owner = await provisionedTenant(api.url)
    const answers = await Promise.all(Array.from({ length: 100 }, () => owner.client.post(PATH)))
    const tally: Record<string, number> = {}
    for (const a of answers) tally[`${a.status} ${a.json?.code ?? ''}`.trim()] = (tally[`${a.status} ${a.json?.code ?? ''}`.trim()] ?? 0) + 1
    expect(tally).toEqual({ '201': 1, '409 OFFBOARDING_REQUEST_ALREADY_ACTIVE': 99 })
    const rows = await api.sql`select state from tenant_offboarding_requests where tenant_id = ${owner.tenantId}`
    expect(rows.map((r) => r.state)).toEqual(['open'])
    await sealAudit(api.sql)
    const audit = await api.sql`select 1 from audit_log where chain = ${owner.tenantId} and action = 'tenant.offboarding_requested'`
    expect(audit.length).toBe(1)
    expect((await owner.client.delete(PATH)).status).toBe(200)
  })

  test('lineage: a model version a robot reported a run of this week blocks offboarding', async () => {
    const owner = await provisionedTenant(api.url)
    const robot = owner.client.withBearer((await patFor(owner.client, ['model:read', 'model:write'])).token)
    const pkg = await seededPackage(api.sql, owner.tenantId)
    expect((await robot.post(`/edge-inference-packages/${pkg}/runs`, completedRunReport())).status).toBe(201)
    const refused = await owner.client.post(PATH)
    expect(codeOf(refused)).toEqual([409, 'OFFBOARDING_BLOCKED_BY_LINEAGE'])
    expect(refused.json.message).toContain('1 of this tenant')
    expect((await api.sql`select 1 from tenant_offboarding_requests where tenant_id = ${owner.tenantId}`).length).toBe(0)
    // Runs older than the lineage window no longer count.
    await api.sql`update edge_package_runs set created_at = now() - interval '8 days' where tenant_id = ${owner.tenantId}`
    expect((await owner.client.post(PATH)).status).toBe(201)
    expect((await owner.client.delete(PATH)).status).toBe(200)
  })
})

describe('offboarding: the request, end to end', () => {
  test('new work stops, reads and exports answer, the export is signed and mailed, and cancelling reactivates the tenant', async () => {
    const owner = await provisionedTenant(api.url)
    const s3 = localS3()
    const objects = { 'models/a.bin': 'first object', 'models/b.bin': 'second object, longer' }
    for (const [key, body] of Object.entries(objects)) await s3.putObject(owner.buckets.bucket!.name, key, Buffer.from(body))
    const pat = owner.client.withBearer((await patFor(owner.client, ['tenant:read', 'tenant:manage', 'apikey:write', 'model:read', 'model:write'])).token)
    const project = (await pat.post('/projects', { name: 'Kept', slug: 'kept' })).json.data
    const pkg = await seededPackage(api.sql, owner.tenantId)
    const [version] = await api.sql<{ model_version_id: string }[]>`select model_version_id from edge_packages where id = ${pkg}`

    const opened = await owner.client.post(PATH)
    expect(opened.status).toBe(201)
    const request = opened.json.data
    expect(request).toMatchObject({ state: 'open', tenantId: owner.tenantId, retentionDays: 30, requestedBy: owner.userId, blockers: [] })
    expect(request.workflowId).toBe(offboardingWorkflowId(owner.tenantId, request.id))
    const windowDays = (Date.parse(request.windowEndsAt) - Date.parse(request.createdAt)) / 86_400_000
    expect(Math.round(windowDays)).toBe(30)

    // The attacker's PAT starts nothing: no build, no project, no token; reads, run reports and exports still answer.
    const build = await pat.post(`/model-versions/${version!.model_version_id}/edge-inference-package`, {
      embodimentProfileId: crypto.randomUUID(),
      mode: 'local',
    })
    expect(codeOf(build)).toEqual([409, 'TENANT_OFFBOARDING'])
    expect(codeOf(await pat.post('/projects', { name: 'New', slug: 'new' }))).toEqual([409, 'TENANT_OFFBOARDING'])
    expect(codeOf(await pat.post('/api-keys', { name: 'more', scopes: ['tenant:read'] }))).toEqual([409, 'TENANT_OFFBOARDING'])
    expect((await pat.get(`/projects/${project.id}`)).status).toBe(200)
    expect((await pat.post(`/edge-inference-packages/${pkg}/runs`, completedRunReport())).status).toBe(201)
    const auditExport = await owner.client.post('/tenants/current/audit-log/exports', {
      from: new Date(Date.now() - 3_600_000).toISOString(),
      to: new Date(Date.now() + 60_000).toISOString(),
    })
    expect(auditExport.status).toBe(201)

    const view = await exportReady(owner.client)
    expect(view.export).toMatchObject({ status: 'ready', objects: 2, error: null })
    // The run reported while offboarding is lineage now: shown as a blocker, though it no longer stops this request.
    expect(view.blockers.map((b: { code: string }) => b.code)).toEqual(['OFFBOARDING_BLOCKED_BY_LINEAGE'])

    const fetched = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer())
    const envelope = JSON.parse((await fetched(view.export.download.manifest)).toString())
    const payload = Buffer.from(envelope.payload, 'base64')
    expect(envelope.payloadType).toBe(TENANT_EXPORT_PAYLOAD_TYPE)
    const key = publicSigningKeys(api.deps.config).find((k) => k.keyId === envelope.signatures[0].keyid)!
    expect(verify(null, dssePae(envelope.payloadType, payload), createPublicKey(key.publicKeyPem), Buffer.from(envelope.signatures[0].sig, 'base64'))).toBe(
      true,
    )
    expect(createHash('sha256').update(payload).digest('hex')).toBe(view.export.manifestSha256)
    const manifest = JSON.parse(payload.toString()) as TenantExportManifest

    const rowsFile = await fetched(view.export.download.rows)
    expect(createHash('sha256').update(rowsFile).digest('hex')).toBe(manifest.rows.sha256)
    const lines = gunzipSync(rowsFile)
      .toString()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { table: string; row: Record<string, unknown> })
    expect(lines.length).toBe(manifest.rows.count)
    expect(view.export.rows).toBe(manifest.rows.count)
    const tablesIn = new Set(lines.map((l) => l.table))
    for (const t of ['tenants', 'memberships', 'projects', 'api_keys', 'edge_packages', 'storage_buckets', 'audit_log']) expect(tablesIn).toContain(t)
    expect(lines.find((l) => l.table === 'projects')!.row).toMatchObject({ id: project.id, slug: 'kept', tenant_id: owner.tenantId })
    expect(lines.every((l) => l.row.tenant_id === owner.tenantId || (l.table === 'tenants' && l.row.id === owner.tenantId))).toBe(true)
    // Secrets stay out: a token's hash is not exported, and the manifest says which columns were left out.
    expect(lines.filter((l) => l.table === 'api_keys').every((l) => !('token_hash' in l.row))).toBe(true)
    expect(manifest.tables.find((t) => t.table === 'api_keys')!.columnsLeftOut).toContain('token_hash')
    expect(manifest.auditChainHead.seq).toBeGreaterThan(0)

    const objectsFile = await fetched(view.export.download.objects)
    expect(createHash('sha256').update(objectsFile).digest('hex')).toBe(manifest.objects.sha256)
    const listed = gunzipSync(objectsFile)
      .toString()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(listed.map((o: { key: string }) => o.key).sort()).toEqual(Object.keys(objects).sort())
    for (const o of listed)
      expect(o.sha256).toBe(
        createHash('sha256')
          .update(objects[o.key as keyof typeof objects])
          .digest('hex'),
      )

    const mail = await waitForMail(owner.email, { subject: /export of/ })
    expect(mail.text).toContain('offboarding/')

    // Another tenant's PAT is untouched throughout.
    const other = await provisionedTenant(api.url)
    expect((await other.client.post('/projects', { name: 'Other', slug: 'other' })).status).toBe(201)

    const cancelled = await owner.client.delete(PATH)
    expect(cancelled.status).toBe(200)
    expect(cancelled.json.data).toMatchObject({ id: request.id, state: 'cancelled', tenantLifecycle: 'active' })
    expect(codeOf(await owner.client.get(PATH))).toEqual([404, 'OFFBOARDING_REQUEST_NOT_FOUND'])
    expect(codeOf(await owner.client.delete(PATH))).toEqual([404, 'OFFBOARDING_REQUEST_NOT_FOUND'])
    // Everything works again, and nothing was lost.
    expect((await pat.post('/projects', { name: 'New', slug: 'new' })).status).toBe(201)
    expect((await pat.get(`/projects/${project.id}`)).json.data.slug).toBe('kept')
    const t = await connectTemporal()
    try {
      expect(await t.client.workflow.getHandle(request.workflowId).result()).toBe('cancelled')
    } finally {
      await t.close()
    }
    await sealAudit(api.sql)
    const audit = await api.sql<{ action: string }[]>`
      select action from audit_log where chain = ${owner.tenantId} and target_id = ${request.id} order by seq`
    expect(audit.map((a) => a.action)).toEqual(['tenant.offboarding_requested', 'tenant.offboarding_exported', 'tenant.offboarding_cancelled'])
  })
})
