// The storage changes a tenant hears about: each status change and its event commit together (the outbox), so
// a retried activity that finds the change made already publishes nothing a second time.
import { recordAudit } from '../audit/service'
import { publishEvent } from '../events/service'
import type { ActivityContext } from '../identity/context'
import type { Db, Sql } from '../platform/db'
import { failJob, finishJob, listBuckets, markBucketReady } from './queries'
import type { BucketKind } from './s3'

/** Marks one bucket ready; when that makes every bucket of the tenant ready, `storage.provisioned` goes out and is
 *  recorded (by the provisioning workflow) in the same transaction. The workflow readies the buckets one after
 *  another, so exactly one call sees the last. */
export async function markBucketReadyAndAnnounce(sql: Sql, ctx: ActivityContext, tenantId: string, kind: BucketKind): Promise<void> {
  await sql.begin(async (tx) => {
    if ((await markBucketReady(tx, tenantId, kind)).length === 0) return
    const buckets = await listBuckets(tx, tenantId)
    if (!buckets.every((b) => b.status === 'ready')) return
    const provisioned = { regionId: buckets[0]!.region_id, buckets: buckets.map((b) => ({ kind: b.kind, name: b.name })) }
    await publishEvent(tx, tenantId, 'storage.provisioned', provisioned)
    await recordAudit(tx, ctx, { action: 'storage.provisioned', tenantId, target: { type: 'storage', id: tenantId }, details: provisioned })
  })
}

/** succeeded, with the counts the findings table gives; in the caller's transaction (which also replaces usage). */
export async function finishJobAndAnnounce(tx: Db, tenantId: string, jobId: string, p: { objectsScanned: number; bytesScanned: number }) {
  const [done] = await finishJob(tx, tenantId, jobId, p)
  if (!done) return undefined
  await publishEvent(tx, tenantId, 'storage_reconciliation.completed', {
    jobId,
    status: 'succeeded',
    objectsScanned: p.objectsScanned,
    orphans: done.orphan_count,
    missing: done.missing_count,
    errorCode: null,
  })
  return done
}

/** failed, wherever the failure is noticed (the workflow, or the API finding its workflow gone); a job that had
 *  already ended is left alone and announced no second time. */
export async function failJobAndAnnounce(sql: Sql, tenantId: string, jobId: string, code: string, message: string): Promise<void> {
  await sql.begin(async (tx) => {
    const [failed] = await failJob(tx, tenantId, jobId, code, message)
    if (!failed) return
    await publishEvent(tx, tenantId, 'storage_reconciliation.completed', {
      jobId,
      status: 'failed',
      objectsScanned: failed.objects_scanned,
      orphans: null,
      missing: null,
      errorCode: code,
    })
  })
}
