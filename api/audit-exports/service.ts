// Exports of a tenant's audit trail: the job the API starts and describes, and the file's line format the export
// activity writes. A domain of its own because it stands on two others: the trail (api/audit) and the tenant's
// export bucket (api/storage), which itself records into the trail; inside api/audit it would close that cycle.
import { randomUUID } from 'node:crypto'
import type { ExportLine, ExportTrailer } from '../audit/canonical'
import { findAuditExport, insertAuditExport, markAuditExportFailed, type AuditExportRow } from '../audit/export-queries'
import type { AuditExport } from '../audit/model'
import { countTenantAudit, sealAuditChains, type ExportRow } from '../audit/queries'
import { recordAudit, timeRange, toAuditEntry } from '../audit/service'
import { tenantOf, type RequestContext } from '../identity/context'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { regionsFromConfig } from '../storage/regions'
import { s3For } from '../storage/s3'
import { readyBuckets, regionOf } from '../storage/service'
import { taskQueues, TENANT_ID } from '../../workflows/contract'
import { auditExportWorkflowId, AuditWorkflowType, type ExportAuditLogInput } from '../../workflows/contract-audit'

/** How long a download link stays valid: long enough to start a download, short enough that a leaked one dies. */
export const AUDIT_EXPORT_URL_SECONDS = 15 * 60

/** Where a job's file goes in the tenant's export bucket (whose lifecycle expires it after 30 days). */
export const auditExportObjectKey = (exportId: string) => `audit-log/${exportId}.ndjson.gz`

const iso = (d: Date | null) => d?.toISOString() ?? null

async function toAuditExportDto(config: ServiceDeps['config'], r: AuditExportRow): Promise<AuditExport> {
  let download: AuditExport['download'] = null
  // A region taken out of the configuration since leaves the job readable, without a link.
  const region = r.region_id ? regionsFromConfig(config).find((g) => g.id === r.region_id && g.accessKey && g.secretKey) : undefined
  if (r.status === 'succeeded' && region && r.bucket && r.object_key) {
    const now = new Date()
    const url = await s3For(region).presignedGetObject(r.bucket, r.object_key, AUDIT_EXPORT_URL_SECONDS, {}, now)
    download = { url, expiresAt: new Date(now.getTime() + AUDIT_EXPORT_URL_SECONDS * 1000).toISOString() }
  }
  return {
    id: r.id,
    status: r.status,
    from: r.from_at.toISOString(),
    to: r.to_at.toISOString(),
    entriesWritten: r.entries_written,
    bytes: r.bytes,
    sha256: r.sha256,
    chainHead: r.chain_head_seq === null ? null : { seq: r.chain_head_seq, hash: r.chain_head_hash },
    error: r.error,
    workflowId: r.workflow_id,
    download,
    createdAt: r.created_at.toISOString(),
    finishedAt: iso(r.finished_at),
  }
}

/** Starts exporting the current tenant's trail over a window (up to the whole retention period). Refused before
 *  anything is written when the window is invalid, the tenant's storage is not ready, or the window holds more
 *  entries than one file may. The job and its audit entry commit together; then its workflow starts. */
export async function startAuditExport(deps: Pick<ServiceDeps, 'sql' | 'config' | 'temporal'>, ctx: RequestContext, body: { from?: string; to?: string }) {
  const tenantId = tenantOf(ctx).tenantId
  const { from, to } = timeRange(deps.config, body, deps.config.AUDIT_RETENTION_DAYS + 1)
  const exportBucket = (await readyBuckets(deps.sql, tenantId)).find((b) => b.kind === 'export')!
  regionOf(deps.config, exportBucket.region_id)
  const cap = deps.config.AUDIT_EXPORT_MAX_ENTRIES
  await sealAuditChains(deps.sql, [tenantId])
  if ((await countTenantAudit(deps.sql, tenantId, from, to, cap)) > cap) {
    throw new ApiError('AUDIT_LOG_EXPORT_TOO_LARGE', `The window holds more than ${cap} entries; export shorter windows`)
  }
  const id = randomUUID()
  const workflowId = auditExportWorkflowId(tenantId, id)
  const row = await deps.sql.begin(async (tx) => {
    const job = await insertAuditExport(tx, { id, tenantId, from, to, requestedBy: ctx.principal.userId, workflowId })
    await recordAudit(tx, ctx, {
      action: 'audit_log.export_started',
      tenantId,
      target: { type: 'audit_export', id },
      details: { from: from.toISOString(), to: to.toISOString() },
    })
    return job
  })
  const args: [ExportAuditLogInput] = [{ tenantId, exportId: id }]
  try {
    await (await deps.temporal.get()).workflow.start(AuditWorkflowType.export, {
      workflowId,
      taskQueue: taskQueues(deps.config).audit,
      args,
      typedSearchAttributes: [{ key: TENANT_ID, value: tenantId }],
      memo: { from: from.toISOString(), to: to.toISOString() },
    })
  } catch (err) {
    // A job no workflow will ever run must not stay queued.
    await markAuditExportFailed(deps.sql, tenantId, id, 'The export could not be started')
    throw err
  }
  return toAuditExportDto(deps.config, row)
}

export async function getAuditExport({ sql, config }: Pick<ServiceDeps, 'sql' | 'config'>, ctx: RequestContext, exportId: string) {
  const tenantId = tenantOf(ctx).tenantId
  const row = isUuid(exportId) ? await findAuditExport(sql, tenantId, exportId) : undefined
  if (!row) throw new ApiError('NOT_FOUND', `No audit log export ${exportId} in this tenant`)
  return toAuditExportDto(config, row)
}

/** One entry line of the file: the entry as the API shows it, plus the chain, the subject, the exact time and the
 *  predecessor's hash, which is all api/audit/canonical.ts needs to recompute its link. */
export const toExportLine = (r: ExportRow): ExportLine => ({
  ...toAuditEntry(r),
  chain: r.chain,
  subjectUserId: r.subject_user_id,
  occurredAtMicros: r.occurred_at_micros,
  prevHash: r.prev_hash?.toString('hex') ?? null,
  personalNonce: r.personal_nonce?.toString('hex') ?? null,
  personalDigest: r.personal_digest?.toString('hex') ?? null,
})

export const exportTrailer = (entries: number, chainHead: ExportTrailer['chainHead']): ExportTrailer => ({ type: 'trailer', entries, chainHead })
