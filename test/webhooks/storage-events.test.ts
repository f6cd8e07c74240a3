// The storage producers: storage.provisioned when a tenant's last bucket becomes ready, and
// storage_reconciliation.completed when a job ends either way, each in the transaction of the status change.
import { describe, expect, test } from 'bun:test'
import { storageReconcileActivities } from '../../activities/storage-reconcile'
import { bucketNameFor } from '../../api/storage/s3'
import { createWorkerMetrics } from '../../worker/metrics'
import type { Client } from '../support/client'
import { tenantOwner } from '../support/fixtures'
import { bucketsIn, jobDone, jobWithTerminatedWorkflow, localS3, provisionedTenant, upload, useApiAndTemporal } from '../storage/helpers'

const env = useApiAndTemporal()
const s3 = localS3()
const JOBS = '/tenants/current/storage-reconciliation-jobs'

// The outbox without the audit trail's own audit.entry events (every recorded change adds one).
const eventsOf = async (tenantId: string) => [
  ...(await env.api.sql<{ type: string; data: any }[]>`
  select type, data from events where tenant_id = ${tenantId} and type <> 'audit.entry' order by occurred_at, id`),
]
const put = (client: Client) => client.call('PUT', '/tenants/current/storage-bucket', { body: { regionId: 'local' } })

describe('storage.provisioned', () => {
  test('once, when the last bucket is ready, naming the region and every bucket', async () => {
    const tenant = await provisionedTenant(env.api.url)
    const b = tenant.buckets
    expect(await eventsOf(tenant.tenantId)).toEqual([
      {
        type: 'storage.provisioned',
        data: {
          regionId: 'local',
          buckets: [
            { kind: 'dataset', name: b.datasetBucket!.name },
            { kind: 'export', name: b.exportBucket!.name },
            { kind: 'general', name: b.bucket!.name },
          ],
        },
      },
    ])
    // Provisioning again finds everything ready: no second event.
    expect((await put(tenant.client)).status).toBe(200)
    expect((await eventsOf(tenant.tenantId)).filter((e) => e.type === 'storage.provisioned')).toHaveLength(1)
  })

  test('a provisioning that fails part-way announces nothing; the retry that succeeds announces once', async () => {
    const owner = await tenantOwner(env.api.url)
    const blocker = bucketNameFor('rcp-test', owner.tenantId, 'export')
    await s3.makeBucket(blocker)
    await s3.putObject(blocker, 'theirs.txt', Buffer.from('not ours'))
    expect((await put(owner.client)).status).toBe(200)
    await bucketsIn(owner.client, 'failed')
    expect(await eventsOf(owner.tenantId)).toEqual([])

    await s3.removeObject(blocker, 'theirs.txt')
    await s3.removeBucket(blocker)
    expect((await put(owner.client)).status).toBe(200)
    await bucketsIn(owner.client, 'ready')
    expect((await eventsOf(owner.tenantId)).map((e) => e.type)).toEqual(['storage.provisioned'])
  })
})

describe('storage_reconciliation.completed', () => {
  test("succeeded: the job's own counts, committed with the job", async () => {
    const tenant = await provisionedTenant(env.api.url)
    await upload(s3, tenant.buckets.bucket!.name, ['a', 'stray'], 'abc')
    await env.api.sql`insert into storage_expected_objects (tenant_id, bucket, key, kind) values
      (${tenant.tenantId}, ${tenant.buckets.bucket!.name}, 'a', 'artifact'), (${tenant.tenantId}, ${tenant.buckets.bucket!.name}, 'lost', 'artifact')`
    const res = await tenant.billing.post(JOBS, {})
    const done = await jobDone(tenant.billing, res.json.data.job.id)
    expect(done).toMatchObject({ status: 'succeeded', objectsScanned: 2, orphanCount: 1, missingCount: 1 })
    const completed = (await eventsOf(tenant.tenantId)).filter((e) => e.type === 'storage_reconciliation.completed')
    expect(completed).toEqual([
      {
        type: 'storage_reconciliation.completed',
        data: { jobId: done.id, status: 'succeeded', objectsScanned: 2, orphans: 1, missing: 1, errorCode: null },
      },
    ])
  })

  test('failed in the workflow (the activity that records the failure): announced once, with its error code', async () => {
    const tenant = await provisionedTenant(env.api.url)
    const [job] = await env.api.sql<{ id: string }[]>`
      insert into storage_reconciliation_jobs (tenant_id, status, dry_run, objects_scanned) values (${tenant.tenantId}, 'running', false, 7) returning id`
    const activities = storageReconcileActivities({ ...env.api.deps, activityMetrics: createWorkerMetrics(env.api.sql) })
    await activities.failReconciliation(tenant.tenantId, job!.id, 'STORAGE_RECONCILIATION_PROVIDER_UNAVAILABLE', 'The storage region cannot be reached')
    // A retried activity finds the job ended already: nothing more is published.
    await activities.failReconciliation(tenant.tenantId, job!.id, 'STORAGE_RECONCILIATION_PROVIDER_UNAVAILABLE', 'again')
    const completed = (await eventsOf(tenant.tenantId)).filter((e) => e.type === 'storage_reconciliation.completed')
    expect(completed).toEqual([
      {
        type: 'storage_reconciliation.completed',
        data: { jobId: job!.id, status: 'failed', objectsScanned: 7, orphans: null, missing: null, errorCode: 'STORAGE_RECONCILIATION_PROVIDER_UNAVAILABLE' },
      },
    ])
  })

  test('failed because its workflow was terminated (noticed by the API): announced too', async () => {
    const tenant = await provisionedTenant(env.api.url)
    const staleId = await jobWithTerminatedWorkflow(env, tenant.tenantId)
    const next = await tenant.billing.post(JOBS, {})
    await jobDone(tenant.billing, next.json.data.job.id)
    const completed = (await eventsOf(tenant.tenantId)).filter((e) => e.type === 'storage_reconciliation.completed').map((e) => e.data)
    expect(completed).toEqual([
      { jobId: staleId, status: 'failed', objectsScanned: 0, orphans: null, missing: null, errorCode: 'RECONCILIATION_FAILED' },
      expect.objectContaining({ jobId: next.json.data.job.id, status: 'succeeded' }),
    ])
  })
})
