import { describe, expect, test } from 'bun:test'
import { storageWorkflowIds } from '../../workflows/contract-storage'
import { taskQueues, TENANT_ID } from '../../workflows/contract'
import { patFor, tenantOwner } from '../support/fixtures'
import { jobDone, jobWithTerminatedWorkflow, localS3, provisionedTenant, upload, useApiAndTemporal } from './helpers'
import { NEW_WORK_GATE_SETS } from '../../api/identity/standing'

const env = useApiAndTemporal()
const s3 = localS3()
const JOBS = '/tenants/current/storage-reconciliation-jobs'

const expect_ = (tenantId: string, bucket: string, keys: string[]) =>
  env.api.sql`insert into storage_expected_objects ${env.api.sql(keys.map((key) => ({ tenant_id: tenantId, bucket, key, kind: 'artifact' })))}`

describe('storage summary', () => {
  test('counts objects and bytes per bucket; refresh=true recomputes, otherwise the stored figures stay', async () => {
    const tenant = await provisionedTenant(env.api.url)
    await upload(s3, tenant.buckets.bucket!.name, ['a', 'b', 'c'], '12345')
    await upload(s3, tenant.buckets.datasetBucket!.name, ['d'], '1234567890')
    const first = await tenant.client.get('/tenants/current/storage-summary')
    expect(first.status).toBe(200)
    expect(first.json.data).toMatchObject({ regionId: 'local', totalObjects: 4, totalBytes: 25 })
    expect(first.json.data.buckets.find((b: any) => b.kind === 'general')).toMatchObject({ bucket: tenant.buckets.bucket!.name, objectCount: 3, bytes: 15 })

    await upload(s3, tenant.buckets.exportBucket!.name, ['e'], '1')
    const stale = await tenant.client.get('/tenants/current/storage-summary')
    expect(stale.json.data.totalObjects).toBe(4)
    expect(stale.json.data.computedAt).toBe(first.json.data.computedAt)
    const fresh = await tenant.client.get('/tenants/current/storage-summary?refresh=true')
    expect(fresh.json.data).toMatchObject({ totalObjects: 5, totalBytes: 26 })
    expect(Date.parse(fresh.json.data.computedAt)).toBeGreaterThan(Date.parse(first.json.data.computedAt))
    expect((await tenant.client.get('/tenants/current/storage-summary?refresh=maybe')).json.code).toBe('VALIDATION_ERROR')
  })
})

describe('storage reconciliation jobs', () => {
  test('finds orphans and missing objects, refreshes usage, and is visible by id and tenant in Temporal', async () => {
    const tenant = await provisionedTenant(env.api.url)
    const general = tenant.buckets.bucket!.name
    const dataset = tenant.buckets.datasetBucket!.name
    await upload(s3, general, ['keep/1', 'keep/2', 'orphan/1', 'z-orphan'], 'abc')
    await upload(s3, dataset, ['ds/ok'], 'abcd')
    await expect_(tenant.tenantId, general, ['keep/1', 'keep/2', 'gone/1', 'zz-gone'])
    await expect_(tenant.tenantId, dataset, ['ds/ok', 'ds/missing'])

    const res = await tenant.billing.post(JOBS, {}, { 'idempotency-key': `rec-${crypto.randomUUID()}` })
    expect(res.status).toBe(201)
    expect(res.json.data.created).toBe(true)
    expect(['queued', 'running', 'succeeded']).toContain(res.json.data.job.status)
    const jobId = res.json.data.job.id

    const done = await jobDone(tenant.billing, jobId)
    expect(done).toMatchObject({ status: 'succeeded', dryRun: false, objectsScanned: 5, bytesScanned: 16, orphanCount: 2, missingCount: 3, errorCode: null })
    expect(done.findings).toEqual(
      [
        { kind: 'missing', bucket: dataset, key: 'ds/missing', size: null },
        { kind: 'missing', bucket: general, key: 'gone/1', size: null },
        { kind: 'missing', bucket: general, key: 'zz-gone', size: null },
        { kind: 'orphan', bucket: general, key: 'orphan/1', size: 3 },
        { kind: 'orphan', bucket: general, key: 'z-orphan', size: 3 },
      ].sort((a, b) => (a.kind + a.bucket + a.key < b.kind + b.bucket + b.key ? -1 : 1)),
    )
    expect(done.findingsTruncated).toBe(false)
    expect(done.startedAt).not.toBeNull()
    expect(done.workflowId).toBe(storageWorkflowIds.reconcile(tenant.tenantId, jobId))

    const summary = await tenant.client.get('/tenants/current/storage-summary')
    expect(summary.json.data).toMatchObject({ totalObjects: 5, totalBytes: 16 })

    const handle = env.t.client.workflow.getHandle(done.workflowId)
    expect(await handle.result()).toEqual({ objectsScanned: 5, orphans: 2, missing: 3 })
    const wf = await handle.describe()
    expect(wf.status.name).toBe('COMPLETED')
    expect(wf.taskQueue).toBe(taskQueues(env.t.config).storage)
    expect(wf.typedSearchAttributes.get(TENANT_ID)).toBe(tenant.tenantId)
  })

  test('an open job is returned instead of a second one; a different request conflicts', async () => {
    const tenant = await provisionedTenant(env.api.url)
    // A job a worker is busy with, held open so the test does not race it.
    const [open] = await env.api.sql<{ id: string }[]>`
      insert into storage_reconciliation_jobs (tenant_id, status, dry_run) values (${tenant.tenantId}, 'running', false) returning id`
    const same = await tenant.billing.post(JOBS, { dryRun: false })
    expect(same.status).toBe(201)
    expect(same.json.data).toMatchObject({ created: false, job: { id: open!.id, status: 'running' } })
    const other = await tenant.billing.post(JOBS, { dryRun: true })
    expect([other.status, other.json.code]).toEqual([409, 'RECONCILIATION_ALREADY_RUNNING'])
    await env.api.sql`update storage_reconciliation_jobs set status = 'failed' where id = ${open!.id}`

    const dry = await tenant.billing.post(JOBS, { dryRun: true })
    expect(dry.json.data.created).toBe(true)
    expect((await jobDone(tenant.billing, dry.json.data.job.id)).status).toBe('succeeded')
    // A dry run leaves no usage behind; the summary computes its own.
    expect((await env.api.sql`select 1 from storage_usage where tenant_id = ${tenant.tenantId}`).length).toBe(0)
  })

  test('an open job whose workflow was terminated is failed, and a new one starts', async () => {
    const tenant = await provisionedTenant(env.api.url)
    const staleId = await jobWithTerminatedWorkflow(env, tenant.tenantId)
    const res = await tenant.billing.post(JOBS, {})
    expect(res.json.data.created).toBe(true)
    expect(res.json.data.job.id).not.toBe(staleId)
    const old = await tenant.billing.get(`${JOBS}/${staleId}`)
    expect(old.json.data).toMatchObject({ status: 'failed', errorCode: 'RECONCILIATION_FAILED' })
    expect((await jobDone(tenant.billing, res.json.data.job.id)).status).toBe('succeeded')
  })

  test('the same Idempotency-Key replays the first answer', async () => {
    const tenant = await provisionedTenant(env.api.url)
    const key = `rec-${crypto.randomUUID()}`
    const first = await tenant.billing.post(JOBS, {}, { 'idempotency-key': key })
    const again = await tenant.billing.post(JOBS, {}, { 'idempotency-key': key })
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.json.data).toEqual(first.json.data)
    const jobs = await env.api.sql`select id from storage_reconciliation_jobs where tenant_id = ${tenant.tenantId}`
    expect(jobs.length).toBe(1)
  })

  test('lists newest first, filters by status, pages with tokens; unknown ids are 404', async () => {
    const tenant = await provisionedTenant(env.api.url)
    await env.api.sql`
      insert into storage_reconciliation_jobs (tenant_id, status, dry_run, created_at)
      select ${tenant.tenantId}, s, false, now() - make_interval(secs => n)
        from unnest(array['succeeded', 'failed', 'succeeded']::text[]) with ordinality as x(s, n)`
    const all = await tenant.billing.get(`${JOBS}?pageSize=2`)
    expect(all.status).toBe(200)
    expect(all.json.meta.pageSize).toBe(2)
    expect(all.json.data.map((j: any) => j.status)).toEqual(['succeeded', 'failed'])
    const next = await tenant.billing.get(`${JOBS}?pageSize=2&pageToken=${encodeURIComponent(all.json.nextPageToken)}`)
    expect(next.json.data.map((j: any) => j.status)).toEqual(['succeeded'])
    expect(next.json.nextPageToken).toBeUndefined()

    const ok = await tenant.billing.get(`${JOBS}?status=succeeded`)
    expect(ok.json.data.length).toBe(2)
    const mismatch = await tenant.billing.get(`${JOBS}?pageSize=2&status=failed&pageToken=${encodeURIComponent(all.json.nextPageToken)}`)
    expect([mismatch.status, mismatch.json.code]).toEqual([400, 'PAGE_TOKEN_QUERY_MISMATCH'])
    expect((await tenant.billing.get(`${JOBS}?status=paused`)).json.code).toBe('VALIDATION_ERROR')
    expect((await tenant.billing.get(`${JOBS}?pageSize=101`)).json.code).toBe('PAGE_SIZE_TOO_LARGE')

    for (const id of [crypto.randomUUID(), 'not-a-uuid']) {
      const res = await tenant.billing.get(`${JOBS}/${id}`)
      expect([res.status, res.json.code]).toEqual([404, 'STORAGE_RECONCILIATION_JOB_NOT_FOUND'])
    }
    const reader = tenant.client.withBearer((await patFor(tenant.client, ['tenant:read'])).token)
    expect((await reader.get(JOBS)).json.code).toBe('PERMISSION_NOT_DECLARED')
  })

  test("tenant B's credential sees none of tenant A's buckets, usage or jobs", async () => {
    const a = await provisionedTenant(env.api.url)
    const run = await a.billing.post(JOBS, {})
    const jobId = run.json.data.job.id
    await jobDone(a.billing, jobId)

    const b = await tenantOwner(env.api.url)
    const bBilling = b.client.withBearer((await patFor(b.client, ['tenant:read', 'billing:read', 'billing:write'])).token)
    expect((await bBilling.get('/tenants/current/storage-bucket')).json.data).toEqual({ bucket: null, datasetBucket: null, exportBucket: null })
    expect((await bBilling.get('/tenants/current/storage-summary')).json.code).toBe('STORAGE_NOT_READY')
    const list = await bBilling.get(JOBS)
    expect([list.status, list.json.data]).toEqual([200, []])
    const other = await bBilling.get(`${JOBS}/${jobId}`)
    expect([other.status, other.json.code]).toEqual([404, 'STORAGE_RECONCILIATION_JOB_NOT_FOUND'])
    expect(other.text).not.toContain(a.buckets.bucket!.name)
    // Tenant A's ids in B's header are refused, never served.
    const header = await bBilling.get(JOBS, { 'x-tenant-id': a.tenantId })
    expect([header.status, header.json.code]).toEqual([400, 'TENANT_CONTEXT_MISMATCH'])
  })

  test("the OpenAPI document names the storage DTOs and each operation's permission and error sets", async () => {
    const doc = (await (await fetch(`${env.api.url}/v1/openapi.json`)).json()) as any
    for (const name of [
      'StorageRegionsResponseDto',
      'StorageBucketSummaryDto',
      'ProvisionStorageBucketBodyDto',
      'TenantStorageSummaryDto',
      'CreateStorageReconciliationJobBodyDto',
      'StorageReconciliationJobSummaryDto',
      'StorageReconciliationJobDetailsDto',
    ])
      expect(Object.keys(doc.components.schemas)).toContain(name)
    const ops: [string, string, string, string[]][] = [
      ['get', '/v1/tenants/current/storage-bucket', 'tenant:read', ['T400']],
      ['put', '/v1/tenants/current/storage-bucket', 'tenant:manage', ['T400', 'S400', 'T409']],
      ['get', '/v1/tenants/current/storage-summary', 'tenant:read', ['T400', 'S400']],
      ['post', '/v1/tenants/current/storage-reconciliation-jobs', 'billing:write', ['T400', 'S400', 'T409']],
      ['get', '/v1/tenants/current/storage-reconciliation-jobs', 'billing:read', ['T400p']],
      ['get', '/v1/tenants/current/storage-reconciliation-jobs/{jobId}', 'billing:read', ['T400', 'T404']],
    ]
    for (const [method, path, permission, sets] of ops) {
      const op = doc.paths[path]?.[method]
      expect({ path, method, found: Boolean(op) }).toEqual({ path, method, found: true })
      expect(op['x-permissions']).toEqual([permission])
      // An operation that starts new work also answers the new-work gate's sets (api/http/new-work.ts).
      expect(op['x-error-sets']).toEqual(op['x-new-work'] ? [...sets, ...NEW_WORK_GATE_SETS] : sets)
    }
    const create = doc.paths['/v1/tenants/current/storage-reconciliation-jobs'].post
    expect(create.parameters.some((p: any) => p.name === 'Idempotency-Key')).toBe(true)
  })
})
