import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client'
import type { Config } from '../platform/config'
import type { Sql } from '../platform/db'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { recordAudit } from '../audit/service'
import { tenantOf, type RequestContext } from '../identity/context'
import { taskQueues, TENANT_ID } from '../../workflows/contract'
import { storageWorkflowIds, StorageWorkflowType, type ProvisionStorageInput } from '../../workflows/contract-storage'
import type { StorageBucketSummary } from './model'
import { listBuckets, readUsage, replaceUsage, upsertProvisioning, type BucketRow } from './queries'
import { regionsFromConfig, usableRegion, type Region } from './regions'
import { BUCKET_KINDS, BUCKET_POLICY, bucketNameFor, isUnreachable, measureBucket, s3For, type BucketKind } from './s3'

export type StorageDeps = Pick<ServiceDeps, 'sql' | 'config' | 'temporal'>

const FIELD: Record<BucketKind, 'bucket' | 'datasetBucket' | 'exportBucket'> = { general: 'bucket', dataset: 'datasetBucket', export: 'exportBucket' }

export const toBucketSummary = (r: BucketRow): StorageBucketSummary => ({
  name: r.name,
  kind: r.kind,
  regionId: r.region_id,
  status: r.status,
  versioning: r.versioning,
  expireAfterDays: r.expire_days,
  failureReason: r.failure_reason,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
})

export function toBucketSet(rows: BucketRow[]) {
  const set = { bucket: null, datasetBucket: null, exportBucket: null } as Record<(typeof FIELD)[BucketKind], StorageBucketSummary | null>
  for (const r of rows) set[FIELD[r.kind]] = toBucketSummary(r)
  return set
}

export const getBucketSet = async ({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext) => toBucketSet(await listBuckets(sql, tenantOf(ctx).tenantId))

/** Starts (or joins) provisioning in `regionId`. Ready storage is returned as it is; storage in another
 *  region is a conflict; a failed attempt is reset and retried, in the requested region. Only a request that
 *  (re)starts provisioning is recorded: joining a run, or finding the storage ready, changes nothing. */
export async function provisionBuckets(deps: StorageDeps, ctx: RequestContext, regionId: string) {
  const { tenantId } = tenantOf(ctx)
  const region = usableRegion(deps.config, regionId)
  const wanted = BUCKET_KINDS.map((kind) => ({
    kind,
    name: bucketNameFor(deps.config.TEMPORAL_TASK_QUEUE_PREFIX, tenantId, kind),
    versioning: BUCKET_POLICY[kind].versioning,
    expireDays: BUCKET_POLICY[kind].expireDays,
  }))
  if ((await listBuckets(deps.sql, tenantId)).some((r) => r.status === 'failed')) await previousRunClosed(deps, tenantId)
  await deps.sql.begin(async (tx) => {
    const started = await upsertProvisioning(tx, tenantId, region.id, wanted)
    if (started.length === 0) return
    await recordAudit(tx, ctx, {
      action: 'storage.provisioning_requested',
      tenantId,
      target: { type: 'storage', id: tenantId },
      details: { regionId: region.id, kinds: started },
    })
  })
  const rows = await listBuckets(deps.sql, tenantId)
  const other = rows.find((r) => r.region_id !== region.id)
  if (other) {
    throw new ApiError('TENANT_STORAGE_KEY_CONFLICT', `This tenant's storage is already in region "${other.region_id}"; it cannot move to "${region.id}"`)
  }
  if (rows.some((r) => r.status === 'provisioning'))
    await startProvisioning(deps, { tenantId, regionId: region.id, buckets: wanted.map(({ kind, name }) => ({ kind, name })) })
  return toBucketSet(await listBuckets(deps.sql, tenantId))
}

/** A failed run marks the rows failed just before it closes. A retry in that instant would join the closing
 *  run (USE_EXISTING) and leave the rows provisioning for good, so it waits (briefly) for the close first. */
async function previousRunClosed(deps: StorageDeps, tenantId: string) {
  const closed = (await deps.temporal.get()).workflow
    .getHandle(storageWorkflowIds.provision(tenantId))
    .result()
    .catch(() => {})
  let timer: Timer | undefined
  await Promise.race([
    closed,
    new Promise((resolve) => {
      timer = setTimeout(resolve, 10_000)
    }),
  ])
  clearTimeout(timer)
}

async function startProvisioning(deps: StorageDeps, input: ProvisionStorageInput) {
  try {
    await (await deps.temporal.get()).workflow.start(StorageWorkflowType.provision, {
      workflowId: storageWorkflowIds.provision(input.tenantId),
      taskQueue: taskQueues(deps.config).storage,
      args: [input],
      typedSearchAttributes: [{ key: TENANT_ID, value: input.tenantId }],
      // A repeat while it runs joins it; after a failure a new run may start; after a success it may not.
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
    })
  } catch (err) {
    // The previous run succeeded between our read and this start: the buckets are ready, nothing to do.
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err
  }
}

export type BucketReadiness = { buckets: BucketRow[] } | { unready: 'failed' | 'not_ready'; message: string }

/** The buckets when all three are ready; otherwise why they cannot be used yet. The one readiness rule, answered
 *  without an HTTP error so the worker (a package build) can fail on it in its own terms. */
export async function bucketReadiness(sql: Sql, tenantId: string): Promise<BucketReadiness> {
  const rows = await listBuckets(sql, tenantId)
  if (rows.some((r) => r.status === 'failed')) {
    return { unready: 'failed', message: "Provisioning this tenant's storage failed; PUT /tenants/current/storage-bucket again to retry" }
  }
  if (rows.length < BUCKET_KINDS.length || rows.some((r) => r.status !== 'ready')) {
    return { unready: 'not_ready', message: "This tenant's storage is not provisioned yet" }
  }
  return { buckets: rows }
}

/** The buckets when all three are ready; otherwise the reason they cannot be used yet, as the request's error. */
export async function readyBuckets(sql: Sql, tenantId: string): Promise<BucketRow[]> {
  const readiness = await bucketReadiness(sql, tenantId)
  if ('buckets' in readiness) return readiness.buckets
  throw new ApiError(readiness.unready === 'failed' ? 'STORAGE_PROVISIONING_FAILED' : 'STORAGE_NOT_READY', readiness.message)
}

/** The region of ready buckets, with credentials: configuration may have changed since provisioning. */
export function regionOf(config: Config, regionId: string): Region {
  const region = regionsFromConfig(config).find((r) => r.id === regionId)
  if (!region?.accessKey || !region.secretKey) {
    throw new ApiError('STORAGE_PROVIDER_NOT_CONFIGURED', `Storage region "${regionId}" is no longer configured with credentials`)
  }
  return region
}

/** The stored usage, computed first when asked to or when there is none yet. */
export async function storageSummary({ sql, config }: Pick<ServiceDeps, 'sql' | 'config'>, ctx: RequestContext, refresh: boolean) {
  const { tenantId } = tenantOf(ctx)
  const buckets = await readyBuckets(sql, tenantId)
  const regionId = buckets[0]!.region_id
  let usage = await readUsage(sql, tenantId)
  if (refresh || usage.length < buckets.length) {
    const s3 = s3For(regionOf(config, regionId))
    const measured = await Promise.all(buckets.map(async (b) => ({ kind: b.kind, bucket: b.name, ...(await measureBucket(s3, b.name)) }))).catch((err) => {
      if (isUnreachable(err)) throw new ApiError('SERVICE_UNAVAILABLE', `Storage region "${regionId}" cannot be reached; try again later`)
      throw err
    })
    await sql.begin((tx) => replaceUsage(tx, tenantId, measured, new Date()))
    usage = await readUsage(sql, tenantId)
  }
  const rows = usage.map((u) => ({ bucket: u.bucket, kind: u.kind, objectCount: u.object_count, bytes: u.bytes }))
  return {
    regionId,
    buckets: rows,
    totalObjects: rows.reduce((n, r) => n + r.objectCount, 0),
    totalBytes: rows.reduce((n, r) => n + r.bytes, 0),
    computedAt: new Date(Math.min(...usage.map((u) => u.computed_at.getTime()))).toISOString(),
  }
}
