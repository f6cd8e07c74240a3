// Reconciliation: walks every object of the tenant's buckets in key order and merges it with the expected
// objects (also in key order), page by page. The walk heartbeats a checkpoint, so an attempt retried after a
// worker died resumes where the last one stopped; findings are keyed, so a page handled twice counts once.
import { ApplicationFailure, Context } from '@temporalio/activity'
import type { Client as S3Client } from 'minio'
import type { Sql } from '../api/platform/db'
import { failJobAndAnnounce, finishJobAndAnnounce } from '../api/storage/outcomes'
import { expectedKeys, findJob, insertFindings, listBuckets, markJobRunning, recordJobProgress, replaceUsage, type FindingRow } from '../api/storage/queries'
import { isUnreachable, pages } from '../api/storage/s3'
import { StorageErrorType, type ReconcileCheckpoint, type ReconcileStorageResult } from '../workflows/contract-storage'
import type { ActivityDeps } from './deps'
import { s3ForRegion } from './storage-provision'

export interface ReconcilePlan {
  tenantId: string
  jobId: string
  dryRun: boolean
  regionId: string
  buckets: { kind: string; name: string }[]
}

/** Progress goes to Postgres at most this often; the heartbeat (Temporal UI) gets every page. */
const PROGRESS_EVERY_MS = 500

function compare(bucket: string, objects: { key: string; size: number }[], expected: { key: string }[]): FindingRow[] {
  const want = new Set(expected.map((e) => e.key))
  const have = new Set(objects.map((o) => o.key))
  return [
    ...objects.filter((o) => !want.has(o.key)).map((o) => ({ kind: 'orphan' as const, bucket, key: o.key, size: o.size })),
    ...expected.filter((e) => !have.has(e.key)).map((e) => ({ kind: 'missing' as const, bucket, key: e.key, size: null })),
  ]
}

const unavailable = (err: unknown) =>
  isUnreachable(err)
    ? ApplicationFailure.create({ type: StorageErrorType.providerUnavailable, message: 'The storage region cannot be reached', cause: err as Error })
    : err

/** The walk itself, free of Temporal so the benchmark measures exactly this. `onPage` gets a copy of the
 *  checkpoint after every page: resuming from it repeats no count and at most re-inserts known findings. */
export async function walkAndCompare(
  sql: Sql,
  s3: S3Client,
  plan: Pick<ReconcilePlan, 'tenantId' | 'jobId' | 'buckets'>,
  pageSize: number,
  resumeFrom: ReconcileCheckpoint | undefined,
  onPage: (cp: ReconcileCheckpoint) => Promise<void>,
): Promise<ReconcileCheckpoint> {
  const cp: ReconcileCheckpoint = resumeFrom ?? { bucketIndex: 0, afterKey: null, objectsScanned: 0, bytesScanned: 0, usage: [] }
  for (; cp.bucketIndex < plan.buckets.length; cp.bucketIndex++, cp.afterKey = null) {
    const b = plan.buckets[cp.bucketIndex]!
    let usage = cp.usage.find((u) => u.kind === b.kind)
    if (!usage) cp.usage.push((usage = { kind: b.kind, bucket: b.name, objectCount: 0, bytes: 0 }))
    for await (const page of pages(s3, b.name, { startAfter: cp.afterKey ?? undefined, pageSize })) {
      if (page.lastKey === null) continue
      const expected = await expectedKeys(sql, plan.tenantId, b.name, cp.afterKey, page.lastKey)
      await insertFindings(sql, plan.tenantId, plan.jobId, compare(b.name, page.objects, expected))
      const bytes = page.objects.reduce((n, o) => n + o.size, 0)
      cp.objectsScanned += page.objects.length
      cp.bytesScanned += bytes
      usage.objectCount += page.objects.length
      usage.bytes += bytes
      cp.afterKey = page.lastKey
      await onPage(structuredClone(cp))
    }
    // Expected keys past the last listed one exist nowhere in the bucket.
    const rest = await expectedKeys(sql, plan.tenantId, b.name, cp.afterKey, null)
    await insertFindings(sql, plan.tenantId, plan.jobId, compare(b.name, [], rest))
  }
  return cp
}

export function storageReconcileActivities(deps: ActivityDeps) {
  const { sql, log, config } = deps
  return {
    /** queued → running, and what to walk. */
    async beginReconciliation(tenantId: string, jobId: string): Promise<ReconcilePlan> {
      const job = await findJob(sql, tenantId, jobId)
      const running = job && (await markJobRunning(sql, tenantId, jobId)).length > 0
      if (!job || !running)
        throw ApplicationFailure.create({ type: StorageErrorType.jobNotFound, message: `No open reconciliation job ${jobId}`, nonRetryable: true })
      const buckets = await listBuckets(sql, tenantId)
      return { tenantId, jobId, dryRun: job.dry_run, regionId: buckets[0]?.region_id ?? '', buckets: buckets.map((b) => ({ kind: b.kind, name: b.name })) }
    },

    async walkTenantStorage(plan: ReconcilePlan): Promise<ReconcileCheckpoint> {
      const ctx = Context.current()
      const resumeFrom = ctx.info.heartbeatDetails as ReconcileCheckpoint | undefined
      if (resumeFrom) log.info('reconciliation resumes', { jobId: plan.jobId, attempt: ctx.info.attempt, objectsScanned: resumeFrom.objectsScanned })
      let savedAt = 0
      try {
        return await walkAndCompare(sql, s3ForRegion(deps, plan.regionId), plan, config.STORAGE_RECONCILE_PAGE_SIZE, resumeFrom, async (cp) => {
          ctx.heartbeat(cp)
          if (Date.now() - savedAt < PROGRESS_EVERY_MS) return
          savedAt = Date.now()
          await recordJobProgress(sql, plan.tenantId, plan.jobId, cp)
        })
      } catch (err) {
        throw unavailable(err)
      }
    },

    /** Counts, status, the storage_reconciliation.completed event and (unless a dry run) the usage summary change
     *  together. */
    async finishReconciliation(plan: ReconcilePlan, cp: ReconcileCheckpoint): Promise<ReconcileStorageResult> {
      return sql.begin(async (tx) => {
        const done = await finishJobAndAnnounce(tx, plan.tenantId, plan.jobId, cp)
        if (!done) throw ApplicationFailure.create({ type: StorageErrorType.jobNotFound, message: `Job ${plan.jobId} is no longer open`, nonRetryable: true })
        if (!plan.dryRun) await replaceUsage(tx, plan.tenantId, cp.usage, new Date())
        log.info('reconciliation finished', {
          tenantId: plan.tenantId,
          jobId: plan.jobId,
          objectsScanned: cp.objectsScanned,
          orphans: done.orphan_count,
          missing: done.missing_count,
        })
        return { objectsScanned: cp.objectsScanned, orphans: done.orphan_count, missing: done.missing_count }
      })
    },

    async failReconciliation(tenantId: string, jobId: string, code: string, message: string): Promise<void> {
      await failJobAndAnnounce(sql, tenantId, jobId, code, message)
    },
  }
}
