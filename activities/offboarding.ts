// The offboarding workflow's activities (workflows/offboarding.ts). planTenantExport fixes where the export goes and
// the audit head it is cut at; writeTenantExport streams every row of the tenant and a SHA-256 of every object of its
// buckets through gzip into multipart uploads (memory holds one batch and two parts, whatever the tenant's size), then
// signs the manifest; finishTenantExport records it and mails every owner; offboardingWindowElapsed is the end of
// the window, where the deletion job takes over.
import { createHash } from 'node:crypto'
import { PassThrough, Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGzip } from 'node:zlib'
import { ApplicationFailure, Context } from '@temporalio/activity'
import { chainHead, sealAuditChains } from '../api/audit/queries'
import { recordAudit } from '../api/audit/service'
import { dsseSign, signingPrivateKey } from '../api/edge-packages/signing'
import { activityContext } from '../api/identity/context'
import { enqueueMail } from '../api/mail/service'
import { ownerEmails } from '../api/memberships/queries'
import { exportedColumns, exportObjectKeys, exportPrefix, TENANT_EXPORT_PAYLOAD_TYPE, type TenantExportManifest } from '../api/offboarding/export'
import { tenantRowsCopy, tenantTables } from './tenant-export-queries'
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
import { garbageCollector } from './streamed-garbage'

/** Bytes of export lines gathered before one write into gzip: a COPY arrives as one message per row, and a gzip job
 *  per row costs more than the row. */
const LINE_BATCH = 256 * 1024
/** How long the mailed links stay valid: S3 presigned links live at most 7 days; the request's view has fresh ones. */
export const OFFBOARDING_MAIL_URL_SECONDS = 7 * 24 * 3600

const permanent = (type: string, message: string) => ApplicationFailure.create({ type, message, nonRetryable: true })

type Heartbeat = (details: Record<string, number>) => void

/** Every row of the tenant as NDJSON lines, table by table, in one repeatable-read snapshot: Postgres writes the lines
 *  (tenantRowsCopy) and this only gathers them into batches and counts them, so reading overlaps gzip and the upload
 *  downstream. Memory holds one batch and the stream's buffer; the reading waits while the stream is full. */
function tenantRowsStream(deps: ActivityDeps, tenantId: string, tables: TenantExportManifest['tables'], beat: Heartbeat): Readable {
  const out = new PassThrough({ highWaterMark: 4 * LINE_BATCH })
  let query: { cancel(): void } | undefined
  let reading: Readable | undefined
  // The upload failed or was cancelled: the COPY under way is cancelled and its stream read on (a paused socket would
  // never read the cancellation's error), so the transaction ends at once.
  out.on('close', () => {
    query?.cancel()
    reading?.resume()
  })
  const collect = garbageCollector()
  let total = 0
  const copyTable = (stream: Readable, entry: { rows: number }) =>
    new Promise<void>((resolve, reject) => {
      let batch = Buffer.allocUnsafe(LINE_BATCH)
      let used = 0
      const flush = () => {
        if (used === 0) return
        const full = batch.subarray(0, used)
        batch = Buffer.allocUnsafe(LINE_BATCH)
        used = 0
        collect(full.length)
        beat({ rows: total + entry.rows })
        if (!out.write(full) && !out.destroyed) {
          stream.pause()
          out.once('drain', () => stream.resume())
        }
      }
      stream.on('data', (chunk: Buffer) => {
        if (out.destroyed) return
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) entry.rows++
        if (used + chunk.length > LINE_BATCH) flush()
        if (chunk.length > LINE_BATCH) {
          out.write(chunk)
          return
        }
        used += chunk.copy(batch, used)
      })
      stream.on('end', () => {
        flush()
        resolve()
      })
      stream.on('error', reject)
    })
  deps.sql
    .begin('isolation level repeatable read read only', async (tx) => {
      await tx`set local timezone = 'UTC'`
      for (const t of await tenantTables(tx)) {
        const columns = exportedColumns(t.columns)
        const entry = { table: t.table, rows: 0, columnsLeftOut: t.columns.filter((c) => !columns.includes(c)) }
        tables.push(entry)
        if (out.destroyed) throw new Error('the export stream was closed')
        const q = tx.unsafe(tenantRowsCopy(t, columns, tenantId))
        query = q
        const stream = (await q.readable()) as unknown as Readable
        reading = stream
        await copyTable(stream, entry)
        total += entry.rows
        // postgres@3.4.9 can end a COPY stream with its socket paused (porsager/postgres#499, see
        // scripts/backup-queries.ts): the stream's read hook is the socket's resume, so the next COPY gets its answer.
        ;(stream as unknown as { _read(size: number): void })._read(0)
        query = undefined
        reading = undefined
      }
    })
    .then(
      () => out.end(),
      (err) => out.destroy(err),
    )
  return out
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

/** Streams the text `open` answers through gzip and a SHA-256 tee into one object, replacing an interrupted attempt's
 *  upload. The text is opened only once the upload can start, and destroyed when it fails (its reading ends with it). */
async function upload(deps: ActivityDeps, plan: TenantExportPlan, key: string, open: () => Readable, signal: AbortSignal) {
  const s3 = s3ForRegion(deps, plan.regionId)
  await abortIncompleteUploads(s3, plan.bucket, key)
  const counter = new Counter()
  const sink = new MultipartSink(s3, plan.bucket, key)
  const text = open()
  try {
    await pipeline(text, createGzip(), counter, sink, { signal })
  } catch (err) {
    text.destroy()
    await sink.abort()
    throw err
  }
  return { key, bytes: counter.bytes, sha256: counter.hash.digest('hex') }
}

/** The rows half of an export: every row of the tenant into `<prefix>rows.ndjson.gz`, the tables' counts into
 *  `tables`. On its own for bench/offboarding-export.ts. */
export function writeTenantRows(deps: ActivityDeps, plan: TenantExportPlan, tables: TenantExportManifest['tables'], beat: Heartbeat, signal: AbortSignal) {
  return upload(deps, plan, exportObjectKeys(plan.prefix).rows, () => tenantRowsStream(deps, plan.tenantId, tables, beat), signal)
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
      const objects = await upload(deps, plan, keys.objects, () => Readable.from(objectsText(deps, plan, count, beat), { highWaterMark: 1 }), signal)
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
