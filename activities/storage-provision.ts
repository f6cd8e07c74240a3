// Provisioning activities. Each is idempotent: a retry after a crash finds its own earlier work (by the
// tags it put on the bucket) and carries on, and never adopts a bucket someone else made.
import { ApplicationFailure, Context } from '@temporalio/activity'
import type { Client as S3Client } from 'minio'
import { markBucketReadyAndAnnounce } from '../api/storage/outcomes'
import { markBucketsFailed } from '../api/storage/queries'
import { regionsFromConfig } from '../api/storage/regions'
import { BUCKET_POLICY, isNoSuchBucket, isUnreachable, s3For, type BucketKind } from '../api/storage/s3'
import { StorageErrorType } from '../workflows/contract-storage'
import type { ActivityDeps } from './deps'
import { workflowActor } from './system-actor'

const TAG = { tenant: 'rcp-tenant', kind: 'rcp-kind', run: 'rcp-provisioned-by' } as const
// The attempt whose failure is final, for any failure but an unreachable region (see createTenantBucket).
const FINAL_ATTEMPT = 5

export interface BucketTarget {
  regionId: string
  tenantId: string
  kind: BucketKind
  name: string
}

export function s3ForRegion(deps: ActivityDeps, regionId: string): S3Client {
  const region = regionsFromConfig(deps.config).find((r) => r.id === regionId)
  if (!region)
    throw ApplicationFailure.create({
      type: StorageErrorType.regionUnknown,
      message: `Region "${regionId}" is not configured on this worker`,
      nonRetryable: true,
    })
  return s3For(region)
}

async function tagsOf(s3: S3Client, bucket: string): Promise<Record<string, string>> {
  try {
    return Object.fromEntries((await s3.getBucketTagging(bucket)).map((t) => [t.Key, t.Value]))
  } catch (err) {
    if ((err as { code?: string }).code === 'NoSuchTagSet') return {}
    throw err
  }
}

async function isEmpty(s3: S3Client, bucket: string): Promise<boolean> {
  const page = await s3.listObjectsV2Query(bucket, '', '', '', 1, '')
  return page.objects.length === 0
}

/** Makes the bucket this run needs, or recognises it as already this tenant's. `created` is true only when
 *  this workflow run made it, which is what compensation may remove. */
async function ensureBucket(s3: S3Client, t: BucketTarget, runId: string, attempt: number): Promise<boolean> {
  try {
    await s3.makeBucket(t.name)
  } catch (err) {
    const code = (err as { code?: string }).code
    if (code !== 'BucketAlreadyOwnedByYou' && code !== 'BucketAlreadyExists') throw err
    const tags = await tagsOf(s3, t.name)
    if (tags[TAG.tenant] === t.tenantId) return tags[TAG.run] === runId
    // Untagged, empty, and this is a retry: our previous attempt died between creating and tagging it.
    const ours = Object.keys(tags).length === 0 && attempt > 1 && (await isEmpty(s3, t.name))
    if (!ours) {
      throw ApplicationFailure.create({
        type: StorageErrorType.bucketConflict,
        message: `A bucket named ${t.name} already exists and is not this tenant's`,
        nonRetryable: true,
      })
    }
  }
  await s3.setBucketTagging(t.name, { [TAG.tenant]: t.tenantId, [TAG.kind]: t.kind, [TAG.run]: runId })
  return true
}

async function removeAllVersions(s3: S3Client, bucket: string) {
  const entries: { name: string; versionId?: string }[] = []
  for await (const o of s3.listObjects(bucket, '', true, { IncludeVersion: true })) {
    if (o.name) entries.push({ name: o.name, versionId: (o as { versionId?: string }).versionId ?? undefined })
  }
  for (let i = 0; i < entries.length; i += 1000) await s3.removeObjects(bucket, entries.slice(i, i + 1000))
}

export function storageProvisionActivities(deps: ActivityDeps) {
  const { sql, log } = deps
  return {
    /** Retried without a count by the workflow while the region cannot be reached; any other failure is final
     *  from the fifth attempt, as the other storage activities' are. */
    async createTenantBucket(t: BucketTarget): Promise<{ created: boolean }> {
      const info = Context.current().info
      const s3 = s3ForRegion(deps, t.regionId)
      try {
        const created = await ensureBucket(s3, t, info.workflowExecution?.runId ?? '', info.attempt)
        const policy = BUCKET_POLICY[t.kind]
        if (policy.versioning) await s3.setBucketVersioning(t.name, { Status: 'Enabled' })
        if (policy.expireDays !== null) {
          await s3.setBucketLifecycle(t.name, {
            Rule: [{ ID: `expire-after-${policy.expireDays}-days`, Status: 'Enabled', Filter: { Prefix: '' }, Expiration: { Days: policy.expireDays } }],
          })
        }
        log.info('tenant bucket ready', { tenantId: t.tenantId, kind: t.kind, bucket: t.name, created })
        return { created }
      } catch (err) {
        if (err instanceof ApplicationFailure) throw err
        if (isUnreachable(err)) {
          log.warn('storage region unreachable; provisioning waits for it', { tenantId: t.tenantId, regionId: t.regionId, attempt: info.attempt })
          throw ApplicationFailure.create({ type: StorageErrorType.providerUnavailable, message: 'The storage region cannot be reached', cause: err as Error })
        }
        if (info.attempt >= FINAL_ATTEMPT)
          throw ApplicationFailure.create({ message: (err as Error)?.message ?? String(err), cause: err as Error, nonRetryable: true })
        throw err
      }
    },

    /** The last bucket to become ready announces storage.provisioned, in the same transaction. */
    async markStorageBucketReady(tenantId: string, kind: BucketKind): Promise<void> {
      await markBucketReadyAndAnnounce(sql, workflowActor(), tenantId, kind)
    },

    /** Compensation: removes the bucket only when this very run made it; anything else is left alone. */
    async removeTenantBucket(t: BucketTarget): Promise<'removed' | 'absent' | 'kept'> {
      const s3 = s3ForRegion(deps, t.regionId)
      const runId = Context.current().info.workflowExecution?.runId ?? ''
      let tags: Record<string, string>
      try {
        tags = await tagsOf(s3, t.name)
      } catch (err) {
        if (isNoSuchBucket(err)) return 'absent'
        throw err
      }
      if (tags[TAG.tenant] !== t.tenantId || tags[TAG.run] !== runId) return 'kept'
      await removeAllVersions(s3, t.name)
      await s3.removeBucket(t.name).catch((err) => {
        if (!isNoSuchBucket(err)) throw err
      })
      log.info('tenant bucket removed by compensation', { tenantId: t.tenantId, kind: t.kind, bucket: t.name })
      return 'removed'
    },

    async markStorageFailed(tenantId: string, reason: string): Promise<void> {
      await markBucketsFailed(sql, tenantId, reason)
    },
  }
}
