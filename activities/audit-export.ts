// The audit export's activities. begin fixes the plan (where the file goes, the chain head it is cut at); write
// streams the window's entries from Postgres in sequence-number batches through gzip, a SHA-256 tee and a multipart
// upload, so memory holds one batch and two parts whatever the export's size; finish and fail set the outcome.
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGzip } from 'node:zlib'
import { ApplicationFailure, Context } from '@temporalio/activity'
import { exportTrailer, auditExportObjectKey, toExportLine } from '../api/audit-exports/service'
import {
  findAuditExport,
  markAuditExportFailed,
  markAuditExportRunning,
  markAuditExportSucceeded,
  recordAuditExportProgress,
} from '../api/audit/export-queries'
import { chainHead, exportBatch, exportSpan, sealAuditChains } from '../api/audit/queries'
import { bucketReadiness } from '../api/storage/service'
import { notify } from '../api/notifications/service'
import { AuditErrorType, type AuditExportFile, type AuditExportPlan, type ExportAuditLogInput } from '../workflows/contract-audit'
import { Counter } from './edge-package/archive'
import { abortIncompleteUploads, MultipartSink } from './edge-package/multipart'
import type { ActivityDeps } from './deps'
import { s3ForRegion } from './storage-provision'
import { collectStreamedGarbage } from './streamed-garbage'

/** Rows per query: one batch is all the export holds in memory. */
export const AUDIT_EXPORT_BATCH = 5000
const PROGRESS_EVERY_MS = 1000
/** Bun (JavaScriptCore) returns the memory of dropped rows and strings only when it collects, and an export makes
 *  garbage faster than it decides to: a full collection every this many entries keeps the worker's RSS flat whatever
 *  the window's size (bench/audit.ts --only export), for a few milliseconds per 50,000 entries. */
const COLLECT_EVERY_ENTRIES = 50_000

const permanent = (type: string, message: string) => ApplicationFailure.create({ type, message, nonRetryable: true })

/** The file's text, one batch at a time: every entry of the window up to the plan's head, in sequence order, then
 *  the trailer. `onBatch` sees the running count after each batch. */
async function* exportText(deps: ActivityDeps, plan: AuditExportPlan, onBatch: (entries: number) => void): AsyncGenerator<Buffer> {
  const from = new Date(plan.from)
  const to = new Date(plan.to)
  const span = await exportSpan(deps.sql, plan.tenantId, from, to, plan.chainHead.seq)
  let entries = 0
  let collectedAt = 0
  if (span.lo !== null && span.hi !== null) {
    const hi = span.hi
    // The next batch is asked for before this one is turned into text, so Postgres reads while this process writes.
    // (postgres.js runs a query only once it is awaited: the async wrapper does that. A batch left unread when the
    // export stops is caught here; one that is read still throws where it is awaited.)
    const prefetch = (after: number) => {
      const batch = (async () => exportBatch(deps.sql, plan.tenantId, from, to, after, Math.min(plan.batchSize, hi - after)))()
      batch.catch(() => {})
      return batch
    }
    let next = prefetch(span.lo - 1)
    for (let after = span.lo - 1; after < hi; after += plan.batchSize) {
      const rows = await next
      if (after + plan.batchSize < hi) next = prefetch(after + plan.batchSize)
      entries += rows.length
      if (rows.length > 0) yield Buffer.from(rows.map((r) => `${JSON.stringify(toExportLine(r))}\n`).join(''))
      onBatch(entries)
      if (entries - collectedAt >= COLLECT_EVERY_ENTRIES) {
        collectedAt = entries
        collectStreamedGarbage()
      }
    }
  }
  yield Buffer.from(`${JSON.stringify(exportTrailer(entries, plan.chainHead))}\n`)
}

export function auditExportActivities(deps: ActivityDeps) {
  return {
    async beginAuditExport(input: ExportAuditLogInput): Promise<AuditExportPlan> {
      const { tenantId, exportId } = input
      const job = await findAuditExport(deps.sql, tenantId, exportId)
      if (!job || !['queued', 'running'].includes(job.status)) throw permanent(AuditErrorType.exportNotFound, `Audit export ${exportId} is gone or finished`)
      const readiness = await bucketReadiness(deps.sql, tenantId)
      if (!('buckets' in readiness)) throw permanent(AuditErrorType.exportBucketMissing, readiness.message)
      const bucket = readiness.buckets.find((b) => b.kind === 'export')!
      // The file is cut at the head as it is once everything committed so far is sealed: the export's own entry too.
      await sealAuditChains(deps.sql, [tenantId])
      const head = (await chainHead(deps.sql, tenantId)) ?? { seq: 0, hash: null }
      const plan: AuditExportPlan = {
        tenantId,
        exportId,
        from: job.from_at.toISOString(),
        to: job.to_at.toISOString(),
        regionId: bucket.region_id,
        bucket: bucket.name,
        objectKey: auditExportObjectKey(exportId),
        chainHead: { seq: head.seq, hash: head.hash?.toString('hex') ?? null },
        batchSize: AUDIT_EXPORT_BATCH,
      }
      const running = await markAuditExportRunning(deps.sql, tenantId, exportId, {
        regionId: plan.regionId,
        bucket: plan.bucket,
        objectKey: plan.objectKey,
        headSeq: plan.chainHead.seq,
        headHash: plan.chainHead.hash,
      })
      if (!running) throw permanent(AuditErrorType.exportNotFound, `Audit export ${exportId} is gone or finished`)
      return plan
    },

    /** Idempotent under retries: an interrupted attempt's unfinished upload is removed first, and the plan fixes
     *  the entries (rows never change), so a retry writes the same file again. */
    async writeAuditExport(plan: AuditExportPlan): Promise<AuditExportFile> {
      const ctx = Context.current()
      const s3 = s3ForRegion(deps, plan.regionId)
      await abortIncompleteUploads(s3, plan.bucket, plan.objectKey)
      let last = 0
      let entries = 0
      const text = exportText(deps, plan, (n) => {
        entries = n
        ctx.heartbeat({ entriesWritten: n })
        if (Date.now() - last < PROGRESS_EVERY_MS) return
        last = Date.now()
        recordAuditExportProgress(deps.sql, plan.tenantId, plan.exportId, n).catch((err) =>
          deps.log.warn('audit export progress not recorded', { error: String(err) }),
        )
      })
      const counter = new Counter()
      const sink = new MultipartSink(s3, plan.bucket, plan.objectKey)
      try {
        // One batch read ahead, not Readable.from's default sixteen: gzip is the slower side, and batches queued for it
        // are memory the export would hold for nothing.
        await pipeline(Readable.from(text, { highWaterMark: 1 }), createGzip(), counter, sink, { signal: ctx.cancellationSignal })
      } catch (err) {
        await sink.abort()
        throw err
      }
      const file = { entries, bytes: counter.bytes, sha256: counter.hash.digest('hex') }
      deps.log.info('audit log exported', { exportId: plan.exportId, attempt: ctx.info.attempt, ...file })
      return file
    },

    async finishAuditExport(plan: AuditExportPlan, file: AuditExportFile): Promise<void> {
      await deps.sql.begin(async (tx) => {
        const row = await markAuditExportSucceeded(tx, plan.tenantId, plan.exportId, file)
        // Nothing updated: a retry of this activity after its commit. The requester's mail is the mail sweep's.
        if (!row?.requested_by) return
        await notify(tx, deps.keys, {
          userId: row.requested_by,
          tenantId: plan.tenantId,
          kind: 'audit_export.ready',
          fields: { exportId: row.id, entries: row.entries_written },
          dedupeKey: `audit_export:${row.id}`,
        })
      })
    },

    async failAuditExport(tenantId: string, exportId: string, reason: string): Promise<void> {
      await markAuditExportFailed(deps.sql, tenantId, exportId, reason)
    },
  }
}
