// The offboarding workflow's activities (workflows/offboarding.ts). planTenantExport fixes where the export goes and
// the audit head it is cut at; writeTenantExport streams every row of the tenant and a SHA-256 of every object of its
// buckets through gzip into multipart uploads (memory holds one batch and two parts, whatever the tenant's size), then
// signs the manifest; finishTenantExport records it and mails every owner; offboardingWindowElapsed is the end of
// the window, where the deletion job takes over.
import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGzip } from 'node:zlib'
import { ApplicationFailure, Context } from '@temporalio/activity'
import { chainHead, sealAuditChains } from '../api/audit/queries'
import { recordAudit } from '../api/audit/service'
import { dsseSign, signingPrivateKey } from '../api/edge-packages/signing'
import { activityContext } from '../api/identity/context'
import { enqueueMail } from '../api/mail/service'
import { ownerEmails } from '../api/memberships/queries'
import { exportedColumns, exportObjectKeys, exportPrefix, rowLine, TENANT_EXPORT_PAYLOAD_TYPE, type TenantExportManifest } from '../api/offboarding/export'
import { tenantRowBatches, tenantTables } from './tenant-export-queries'
import { findOffboarding, markExportFailed, markExportPlanned, markExportReady, markWindowElapsed } from '../api/offboarding/queries'
import { pages } from '../api/storage/s3'
import { startDeletionAfterWindow } from '../api/tenant-deletion/service'
import { bucketReadiness } from '../api/storage/service'
import { findTenantName } from '../api/tenants/queries'
import {
  offboardingWorkflowId,
  OffboardingErrorType,
  type TenantExportPlan,
  type TenantExportResult,
  type TenantOffboardingInput,
} from '../workflows/contract-offboarding'
import { Counter } from './edge-package/archive'
import { abortIncompleteUploads, MultipartSink } from './edge-package/multipart'
import type { ActivityDeps } from './deps'
import { s3ForRegion } from './storage-provision'
import { collectStreamedGarbage } from './streamed-garbage'

/** Rows per cursor batch: one batch is all the export holds of a table. */
export const TENANT_EXPORT_BATCH = 2000
/** Bun returns the memory of dropped rows only when it collects: a full collection every this many rows kept the
 *  worker's peak within about 90 MB of its resting size exporting 400,000 rows (every 50,000: 160 MB). */
const COLLECT_EVERY_ROWS = 20_000
/** How long the mailed links stay valid: S3 presigned links live at most 7 days; the request's view has fresh ones. */
export const OFFBOARDING_MAIL_URL_SECONDS = 7 * 24 * 3600

const permanent = (type: string, message: string) => ApplicationFailure.create({ type, message, nonRetryable: true })

type Heartbeat = (details: Record<string, number>) => void

async function* rowsText(deps: ActivityDeps, tenantId: string, tables: TenantExportManifest['tables'], beat: Heartbeat): AsyncGenerator<Buffer> {
  let total = 0
  let collectedAt = 0
  for (const t of await tenantTables(deps.sql)) {
    const columns = exportedColumns(t.columns)
    const entry = { table: t.table, rows: 0, columnsLeftOut: t.columns.filter((c) => !columns.includes(c)) }
    tables.push(entry)
    for await (const batch of tenantRowBatches(deps.sql, { ...t, columns }, tenantId, TENANT_EXPORT_BATCH)) {
      entry.rows += batch.length
      total += batch.length
      yield Buffer.from(batch.map((row) => rowLine(t.table, row)).join(''))
      beat({ rows: total })
      if (total - collectedAt >= COLLECT_EVERY_ROWS) {
        collectedAt = total
        collectStreamedGarbage()
      }
    }
  }
}

async function* objectsText(deps: ActivityDeps, plan: TenantExportPlan, count: { n: number }, beat: Heartbeat): AsyncGenerator<Buffer> {
  const s3 = s3ForRegion(deps, plan.regionId)
  for (const bucket of plan.buckets) {
    for await (const page of pages(s3, bucket, { pageSize: 1000 })) {
      const lines: string[] = []
      for (const o of page.objects) {
        // The export's own files are not the tenant's data.
        if (o.key.startsWith(plan.prefix)) continue
        const hash = createHash('sha256')
        for await (const chunk of await s3.getObject(bucket, o.key)) hash.update(chunk as Buffer)
        lines.push(`${JSON.stringify({ bucket, key: o.key, size: o.size, sha256: hash.digest('hex') })}\n`)
        count.n++
      }
      if (lines.length > 0) yield Buffer.from(lines.join(''))
      beat({ objects: count.n })
    }
  }
}

/** Streams `text` through gzip and a SHA-256 tee into one object, replacing an interrupted attempt's upload. */
async function upload(deps: ActivityDeps, plan: TenantExportPlan, key: string, text: AsyncIterable<Buffer>, signal: AbortSignal) {
  const s3 = s3ForRegion(deps, plan.regionId)
  await abortIncompleteUploads(s3, plan.bucket, key)
  const counter = new Counter()
  const sink = new MultipartSink(s3, plan.bucket, key)
  try {
    await pipeline(Readable.from(text, { highWaterMark: 1 }), createGzip(), counter, sink, { signal })
  } catch (err) {
    await sink.abort()
    throw err
  }
  return { key, bytes: counter.bytes, sha256: counter.hash.digest('hex') }
}

/** The rows half of an export: every row of the tenant into `<prefix>rows.ndjson.gz`, the tables' counts into
 *  `tables`. On its own for bench/offboarding-export.ts. */
export function writeTenantRows(deps: ActivityDeps, plan: TenantExportPlan, tables: TenantExportManifest['tables'], beat: Heartbeat, signal: AbortSignal) {
  return upload(deps, plan, exportObjectKeys(plan.prefix).rows, rowsText(deps, plan.tenantId, tables, beat), signal)
}

export function offboardingActivities(deps: ActivityDeps) {
  return {
    async planTenantExport(input: TenantOffboardingInput): Promise<TenantExportPlan> {
      const { tenantId, requestId } = input
      const request = await findOffboarding(deps.sql, tenantId, requestId)
      if (request?.state !== 'open') throw permanent(OffboardingErrorType.requestNotOpen, `Offboarding request ${requestId} is gone or no longer open`)
      const readiness = await bucketReadiness(deps.sql, tenantId)
      if (!('buckets' in readiness)) throw permanent(OffboardingErrorType.exportBucketMissing, readiness.message)
      const exportBucket = readiness.buckets.find((b) => b.kind === 'export')!
      // Cut at the head as it is once everything committed so far is sealed: the request's own entry too.
      await sealAuditChains(deps.sql, [tenantId])
      const head = (await chainHead(deps.sql, tenantId)) ?? { seq: 0, hash: null }
      const plan: TenantExportPlan = {
        tenantId,
        requestId,
        regionId: exportBucket.region_id,
        bucket: exportBucket.name,
        prefix: exportPrefix(requestId),
        buckets: readiness.buckets.map((b) => b.name),
        auditChainHead: { seq: head.seq, hash: head.hash?.toString('hex') ?? null },
      }
      if (!(await markExportPlanned(deps.sql, tenantId, requestId, { regionId: plan.regionId, bucket: plan.bucket, prefix: plan.prefix }))) {
        throw permanent(OffboardingErrorType.requestNotOpen, `Offboarding request ${requestId} is no longer open`)
      }
      return plan
    },

    /** Idempotent under retries: each file's unfinished upload is removed first and the files are written again whole
     *  (a retry sees the rows as they are then: the tenant starts no new work meanwhile). */
    async writeTenantExport(plan: TenantExportPlan): Promise<TenantExportResult> {
      const ctx = Context.current()
      const signal = ctx.cancellationSignal
      const beat: Heartbeat = (d) => ctx.heartbeat(d)
      const keys = exportObjectKeys(plan.prefix)
      const tables: TenantExportManifest['tables'] = []
      const rows = await writeTenantRows(deps, plan, tables, beat, signal)
      const count = { n: 0 }
      const objects = await upload(deps, plan, keys.objects, objectsText(deps, plan, count, beat), signal)
      const rowCount = tables.reduce((n, t) => n + t.rows, 0)
      const manifest: TenantExportManifest = {
        type: 'rcp.tenant-export/v1',
        tenantId: plan.tenantId,
        requestId: plan.requestId,
        createdAt: new Date().toISOString(),
        tables,
        rows: { ...rows, count: rowCount },
        objects: { ...objects, count: count.n, buckets: plan.buckets },
        auditChainHead: plan.auditChainHead,
      }
      const payload = Buffer.from(JSON.stringify(manifest))
      const envelope = dsseSign(signingPrivateKey(deps.config), TENANT_EXPORT_PAYLOAD_TYPE, payload)
      await s3ForRegion(deps, plan.regionId).putObject(plan.bucket, keys.manifest, Buffer.from(JSON.stringify(envelope)), undefined, {
        'Content-Type': 'application/json',
      })
      const result = { rows: rowCount, objects: count.n, manifestSha256: createHash('sha256').update(payload).digest('hex') }
      deps.log.info('tenant exported', { tenantId: plan.tenantId, requestId: plan.requestId, attempt: ctx.info.attempt, ...result })
      return result
    },

    /** Records the export and mails every owner a link to each file, in one transaction with its audit entry. A retry
     *  after the commit changes nothing and mails no one twice. */
    async finishTenantExport(plan: TenantExportPlan, result: TenantExportResult): Promise<void> {
      const s3 = s3ForRegion(deps, plan.regionId)
      const keys = exportObjectKeys(plan.prefix)
      const sign = (key: string) => s3.presignedGetObject(plan.bucket, key, OFFBOARDING_MAIL_URL_SECONDS)
      const links = { rows: await sign(keys.rows), objects: await sign(keys.objects), manifest: await sign(keys.manifest) }
      const ctx = activityContext(offboardingWorkflowId(plan.tenantId, plan.requestId))
      const mails = await deps.sql.begin(async (tx) => {
        if (!(await markExportReady(tx, plan.tenantId, plan.requestId, { sha256: result.manifestSha256, rows: result.rows, objects: result.objects })))
          return []
        await recordAudit(tx, ctx, {
          action: 'tenant.offboarding_exported',
          tenantId: plan.tenantId,
          target: { type: 'offboarding_request', id: plan.requestId },
          details: { rows: result.rows, objects: result.objects, manifestSha256: result.manifestSha256 },
        })
        const tenantName = await findTenantName(tx, plan.tenantId)
        const data = { tenantName, ...links, days: OFFBOARDING_MAIL_URL_SECONDS / 86400 }
        return Promise.all(
          (await ownerEmails(tx, plan.tenantId)).map((to) => enqueueMail(tx, { to, tenantId: plan.tenantId, template: 'tenantExportReady', data }, deps.keys)),
        )
      })
      await deps.mail.dispatch(mails, { workflowId: ctx.system.workflowId })
    },

    async failTenantExport(tenantId: string, requestId: string, reason: string): Promise<void> {
      await markExportFailed(deps.sql, tenantId, requestId, reason)
    },

    /** The window's end: the request becomes window_elapsed, unless it was cancelled meanwhile (then nothing happens
     *  and false is answered). This is where the deletion job takes over. */
    async offboardingWindowElapsed(tenantId: string, requestId: string): Promise<boolean> {
      const ctx = activityContext(offboardingWorkflowId(tenantId, requestId))
      const elapsed = await deps.sql.begin(async (tx) => {
        const elapsed = await markWindowElapsed(tx, tenantId, requestId)
        if (!elapsed) return false
        await recordAudit(tx, ctx, { action: 'tenant.offboarding_window_elapsed', tenantId, target: { type: 'offboarding_request', id: requestId } })
        return true
      })
      // A retry after the commit above finds the request window_elapsed already: the deletion still has to start.
      if (!elapsed && (await findOffboarding(deps.sql, tenantId, requestId))?.state !== 'window_elapsed') return false
      await startDeletionAfterWindow(deps, ctx, tenantId)
      return true
    },
  }
}
