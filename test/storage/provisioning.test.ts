import { describe, expect, test } from 'bun:test'
import { Worker } from '@temporalio/worker'
import { bucketNameFor } from '../../api/storage/s3'
import { workflowsPath } from '../../worker/run'
import { storageWorkflowIds } from '../../workflows/contract-storage'
import { taskQueues, TENANT_ID } from '../../workflows/contract'
import { startApi } from '../support/api'
import type { Client } from '../support/client'
import { patFor, tenantOwner } from '../support/fixtures'
import { eventually } from '../support/temporal'
import { bucketsIn, localS3, useApiAndTemporal } from './helpers'

// Two extra regions: one switched off, one announced without credentials.
const env = useApiAndTemporal({
  STORAGE_REGIONS: JSON.stringify([
    { id: 'offline', name: 'Offline', endpoint: 'http://127.0.0.1:9', accessKey: 'k', secretKey: 's', available: false },
    { id: 'nokeys', name: 'No keys', endpoint: 'http://127.0.0.1:9' },
  ]),
})
const s3 = localS3()
const put = (client: Client, regionId: string) => client.call('PUT', '/tenants/current/storage-bucket', { body: { regionId } })

describe('tenant storage provisioning', () => {
  test('PUT starts a workflow that creates three tagged buckets; GET follows it to ready', async () => {
    const owner = await tenantOwner(env.api.url)
    const empty = await owner.client.get('/tenants/current/storage-bucket')
    expect(empty.json.data).toEqual({ bucket: null, datasetBucket: null, exportBucket: null })

    const res = await put(owner.client, 'local')
    expect(res.status).toBe(200)
    for (const b of Object.values(res.json.data) as any[]) expect(['provisioning', 'ready']).toContain(b.status)
    const set = await bucketsIn(owner.client, 'ready')
    expect(set.bucket).toMatchObject({ kind: 'general', regionId: 'local', versioning: false, expireAfterDays: null })
    expect(set.datasetBucket).toMatchObject({ kind: 'dataset', versioning: true })
    expect(set.exportBucket).toMatchObject({ kind: 'export', expireAfterDays: 30 })

    for (const b of Object.values(set)) {
      expect(b!.name).toMatch(/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/)
      expect(await s3.bucketExists(b!.name)).toBe(true)
      const tags = Object.fromEntries((await s3.getBucketTagging(b!.name)).map((x) => [x.Key, x.Value]))
      expect(tags['rcp-tenant']).toBe(owner.tenantId)
    }
    expect((await s3.getBucketVersioning(set.datasetBucket!.name)).Status).toBe('Enabled')
    const lifecycle = await s3.getBucketLifecycle(set.exportBucket!.name)
    expect(JSON.stringify(lifecycle)).toContain('30')

    const handle = env.t.client.workflow.getHandle(storageWorkflowIds.provision(owner.tenantId))
    await handle.result()
    const wf = await handle.describe()
    expect(wf.status.name).toBe('COMPLETED')
    expect(wf.taskQueue).toBe(taskQueues(env.t.config).storage)
    expect(wf.typedSearchAttributes.get(TENANT_ID)).toBe(owner.tenantId)

    // Repeating the PUT changes nothing; another region is a conflict.
    const again = await put(owner.client, 'local')
    expect(again.status).toBe(200)
    expect(again.json.data).toEqual(set)
    const moved = await put(owner.client, 'nokeys')
    expect([moved.status, moved.json.code]).toEqual([400, 'STORAGE_PROVIDER_NOT_CONFIGURED'])
  })

  test('a PUT in another region once provisioned is TENANT_STORAGE_KEY_CONFLICT', async () => {
    const api2 = await startApi({
      STORAGE_REGIONS: JSON.stringify([
        { id: 'second', name: 'Second', endpoint: process.env.S3_ENDPOINT, accessKey: process.env.S3_ACCESS_KEY, secretKey: process.env.S3_SECRET_KEY },
      ]),
    })
    try {
      const owner = await tenantOwner(api2.url)
      expect((await put(owner.client, 'local')).status).toBe(200)
      const res = await put(owner.client, 'second')
      expect([res.status, res.json.code]).toEqual([409, 'TENANT_STORAGE_KEY_CONFLICT'])
      await bucketsIn(owner.client, 'ready')
      expect((await put(owner.client, 'second')).json.code).toBe('TENANT_STORAGE_KEY_CONFLICT')
    } finally {
      await api2.stop()
    }
  })

  test('concurrent PUTs join one workflow', async () => {
    const owner = await tenantOwner(env.api.url)
    const results = await Promise.all([put(owner.client, 'local'), put(owner.client, 'local'), put(owner.client, 'local')])
    expect(results.map((r) => r.status)).toEqual([200, 200, 200])
    await bucketsIn(owner.client, 'ready')
    const runs = await eventually('the provisioning run in visibility', async () => {
      const found: string[] = []
      for await (const wf of env.t.client.workflow.list({ query: `WorkflowId = '${storageWorkflowIds.provision(owner.tenantId)}'` })) found.push(wf.runId)
      return found.length > 0 ? found : undefined
    })
    expect(runs.length).toBe(1)
  })

  test('unknown and switched-off regions are STORAGE_REGION_NOT_AVAILABLE; one without keys STORAGE_PROVIDER_NOT_CONFIGURED', async () => {
    const owner = await tenantOwner(env.api.url)
    for (const regionId of ['mars', 'offline']) {
      const res = await put(owner.client, regionId)
      expect([res.status, res.json.code]).toEqual([400, 'STORAGE_REGION_NOT_AVAILABLE'])
    }
    const res = await put(owner.client, 'nokeys')
    expect([res.status, res.json.code]).toEqual([400, 'STORAGE_PROVIDER_NOT_CONFIGURED'])
    expect(res.text).not.toContain('127.0.0.1')
    // Nothing was recorded by the refused requests.
    expect((await owner.client.get('/tenants/current/storage-bucket')).json.data.bucket).toBeNull()
    const bad = await owner.client.call('PUT', '/tenants/current/storage-bucket', { body: { regionId: 'local', extra: 1 } })
    expect(bad.json.code).toBe('VALIDATION_ERROR')
  })

  test('a failure part-way removes the buckets already created; a later PUT retries', async () => {
    const owner = await tenantOwner(env.api.url)
    // Someone else's bucket holds the export name, so the third create fails for good.
    const blocker = bucketNameFor('rcp-test', owner.tenantId, 'export')
    await s3.makeBucket(blocker)
    await s3.putObject(blocker, 'theirs.txt', Buffer.from('not ours'))

    expect((await put(owner.client, 'local')).status).toBe(200)
    const failed = await bucketsIn(owner.client, 'failed')
    expect(failed.exportBucket!.failureReason).toContain('already exists')
    expect(await s3.bucketExists(failed.bucket!.name)).toBe(false)
    expect(await s3.bucketExists(failed.datasetBucket!.name)).toBe(false)
    // The foreign bucket and its object are untouched.
    expect((await s3.statObject(blocker, 'theirs.txt')).size).toBe(8)
    // The compensation path replays against the current workflow code.
    const run = env.t.client.workflow.getHandle(storageWorkflowIds.provision(owner.tenantId))
    await run.result().catch(() => {})
    await Worker.runReplayHistory({ workflowsPath }, await run.fetchHistory(), run.workflowId)

    const summary = await owner.client.get('/tenants/current/storage-summary')
    expect([summary.status, summary.json.code]).toEqual([400, 'STORAGE_PROVISIONING_FAILED'])
    const billing = owner.client.withBearer((await patFor(owner.client, ['billing:write'])).token)
    const job = await billing.post('/tenants/current/storage-reconciliation-jobs', {})
    expect([job.status, job.json.code]).toEqual([400, 'STORAGE_PROVISIONING_FAILED'])

    await s3.removeObject(blocker, 'theirs.txt')
    await s3.removeBucket(blocker)
    expect((await put(owner.client, 'local')).status).toBe(200)
    const ready = await bucketsIn(owner.client, 'ready')
    expect(ready.exportBucket!.failureReason).toBeNull()
  })

  test('storage is not ready before provisioning; viewers cannot provision', async () => {
    const owner = await tenantOwner(env.api.url)
    const summary = await owner.client.get('/tenants/current/storage-summary')
    expect([summary.status, summary.json.code]).toEqual([400, 'STORAGE_NOT_READY'])
    const job = await owner.client.post('/tenants/current/storage-reconciliation-jobs', {})
    expect([job.status, job.json.code]).toEqual([400, 'STORAGE_NOT_READY'])
    const reader = owner.client.withBearer((await patFor(owner.client, ['tenant:read'])).token)
    const denied = await put(reader, 'local')
    expect([denied.status, denied.json.code]).toEqual([403, 'PERMISSION_NOT_DECLARED'])
  })

  test('storage whose region lost its configuration is STORAGE_PROVIDER_NOT_CONFIGURED', async () => {
    const owner = await tenantOwner(env.api.url)
    await env.api.sql`
      insert into storage_buckets (tenant_id, kind, name, region_id, status, versioning)
      select ${owner.tenantId}, k, 'rcp-gone-' || k || ${owner.tenantId.slice(0, 8)}, 'retired', 'ready', false from unnest(array['general', 'dataset', 'export']) k`
    const summary = await owner.client.get('/tenants/current/storage-summary')
    expect([summary.status, summary.json.code]).toEqual([400, 'STORAGE_PROVIDER_NOT_CONFIGURED'])
    const job = await owner.client.post('/tenants/current/storage-reconciliation-jobs', {})
    expect([job.status, job.json.code]).toEqual([400, 'STORAGE_PROVIDER_NOT_CONFIGURED'])
  })

  test('bucket names never collide between tenants', async () => {
    const a = crypto.randomUUID()
    const b = crypto.randomUUID()
    expect(bucketNameFor('rcp', a, 'general')).not.toBe(bucketNameFor('rcp', b, 'general'))
    expect(bucketNameFor('rcp', a, 'general')).not.toBe(bucketNameFor('other', a, 'general'))
    expect(bucketNameFor('rcp', a, 'general').length).toBeLessThanOrEqual(63)
  })
})
