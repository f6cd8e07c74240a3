// Shared by the storage tests: a MinIO client for the runner's local region, and waits on API state.
import { afterAll, beforeAll } from 'bun:test'
import type { Client as S3Client } from 'minio'
import { s3For } from '../../api/storage/s3'
import type { Client } from '../support/client'
import { patFor, tenantOwner } from '../support/fixtures'
import { startApi, type TestApi } from '../support/api'
import { connectTemporal, eventually, type TestTemporal } from '../support/temporal'
import { storageWorkflowIds, StorageWorkflowType } from '../../workflows/contract-storage'
import { TENANT_ID } from '../../workflows/contract'

export const localS3 = (): S3Client =>
  s3For({ id: 'local', endpoint: process.env.S3_ENDPOINT!, accessKey: process.env.S3_ACCESS_KEY!, secretKey: process.env.S3_SECRET_KEY! })

/** An API (with `overrides`) and a Temporal client for the file's tests, started once and stopped after. */
export function useApiAndTemporal(overrides: Parameters<typeof startApi>[0] = {}) {
  const env = {} as { api: TestApi; t: TestTemporal }
  beforeAll(async () => {
    env.api = await startApi(overrides)
    env.t = await connectTemporal({ TEMPORAL_TASK_QUEUE_PREFIX: overrides.TEMPORAL_TASK_QUEUE_PREFIX ?? process.env.TEMPORAL_TASK_QUEUE_PREFIX })
  })
  afterAll(async () => {
    await env.api.stop()
    await env.t.close()
  })
  return env
}

export type BucketSet = Record<'bucket' | 'datasetBucket' | 'exportBucket', { name: string; status: string; [k: string]: unknown } | null>

/** Polls GET storage-bucket until every bucket has `status`. */
export async function bucketsIn(client: Client, status: 'ready' | 'failed', timeoutMs = 60_000): Promise<BucketSet> {
  return eventually(
    `storage buckets ${status}`,
    async () => {
      const res = await client.get('/tenants/current/storage-bucket')
      const set = res.json?.data as BucketSet | undefined
      return set && Object.values(set).every((b) => b?.status === status) ? set : undefined
    },
    timeoutMs,
  )
}

/** An owner whose tenant storage is provisioned and ready in `regionId`, plus a billing PAT. */
export async function provisionedTenant(base: string, regionId = 'local') {
  const owner = await tenantOwner(base)
  const put = await owner.client.call('PUT', '/tenants/current/storage-bucket', { body: { regionId } })
  if (put.status !== 200) throw new Error(`provisioning failed to start: ${put.status} ${put.text}`)
  const buckets = await bucketsIn(owner.client, 'ready')
  const billing = owner.client.withBearer((await patFor(owner.client, ['tenant:read', 'billing:read', 'billing:write'])).token)
  return { ...owner, buckets, billing }
}

/** Many small PUTs in parallel: fast enough for thousands of objects against a local MinIO. */
export async function upload(s3: S3Client, bucket: string, keys: string[], body = 'x', concurrency = 64) {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < keys.length) {
        const key = keys[next++]!
        await s3.putObject(bucket, key, Buffer.from(body))
      }
    }),
  )
}

export async function jobDone(client: Client, jobId: string, timeoutMs = 60_000) {
  return eventually(
    `reconciliation job ${jobId} to finish`,
    async () => {
      const res = await client.get(`/tenants/current/storage-reconciliation-jobs/${jobId}`)
      return ['succeeded', 'failed'].includes(res.json?.data?.status) ? res.json.data : undefined
    },
    timeoutMs,
  )
}

/** A running job whose workflow was started on a queue no worker polls, then terminated as an operator would:
 *  the next request for a job finds it open with its workflow gone. */
export async function jobWithTerminatedWorkflow(env: { api: TestApi; t: TestTemporal }, tenantId: string): Promise<string> {
  const [stale] = await env.api.sql<{ id: string }[]>`
    insert into storage_reconciliation_jobs (tenant_id, status, dry_run) values (${tenantId}, 'running', false) returning id`
  const handle = await env.t.client.workflow.start(StorageWorkflowType.reconcile, {
    workflowId: storageWorkflowIds.reconcile(tenantId, stale!.id),
    taskQueue: `nobody-${crypto.randomUUID()}`,
    args: [{ tenantId, jobId: stale!.id }],
    typedSearchAttributes: [{ key: TENANT_ID, value: tenantId }],
  })
  await handle.terminate('test')
  return stale!.id
}
