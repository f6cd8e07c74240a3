// audit_exports: the export jobs. Written by the API (a new job) and the export workflow's activities (its
// progress and outcome); every statement is scoped to the tenant.
import type { Db } from '../platform/db'

export type AuditExportStatus = 'queued' | 'running' | 'succeeded' | 'failed'

export interface AuditExportRow {
  id: string
  tenant_id: string
  from_at: Date
  to_at: Date
  status: AuditExportStatus
  entries_written: number
  bytes: number | null
  sha256: string | null
  region_id: string | null
  bucket: string | null
  object_key: string | null
  chain_head_seq: number | null
  chain_head_hash: string | null
  error: string | null
  requested_by: string | null
  workflow_id: string
  created_at: Date
  finished_at: Date | null
}

export async function insertAuditExport(
  db: Db,
  e: { id: string; tenantId: string; from: Date; to: Date; requestedBy: string; workflowId: string },
): Promise<AuditExportRow> {
  const [row] = await db<AuditExportRow[]>`
    insert into audit_exports (id, tenant_id, from_at, to_at, requested_by, workflow_id)
    values (${e.id}, ${e.tenantId}, ${e.from}, ${e.to}, ${e.requestedBy}, ${e.workflowId})
    returning *`
  return row!
}

export async function findAuditExport(db: Db, tenantId: string, id: string): Promise<AuditExportRow | undefined> {
  const [row] = await db<AuditExportRow[]>`select * from audit_exports where tenant_id = ${tenantId} and id = ${id}`
  return row
}

/** queued → running, fixing where the file goes and the head it is cut at; a retry of the activity (still running)
 *  finds the same row. Undefined when the job is gone or already finished. */
export async function markAuditExportRunning(
  db: Db,
  tenantId: string,
  id: string,
  target: { regionId: string; bucket: string; objectKey: string; headSeq: number; headHash: string | null },
) {
  const [row] = await db<AuditExportRow[]>`
    update audit_exports set status = 'running', region_id = ${target.regionId}, bucket = ${target.bucket}, object_key = ${target.objectKey},
           chain_head_seq = ${target.headSeq}, chain_head_hash = ${target.headHash}, entries_written = 0
     where tenant_id = ${tenantId} and id = ${id} and status in ('queued', 'running')
    returning *`
  return row
}

export const recordAuditExportProgress = (db: Db, tenantId: string, id: string, entriesWritten: number) =>
  db`update audit_exports set entries_written = ${entriesWritten} where tenant_id = ${tenantId} and id = ${id} and status = 'running'`

export async function markAuditExportSucceeded(db: Db, tenantId: string, id: string, f: { entries: number; bytes: number; sha256: string }) {
  const [row] = await db<AuditExportRow[]>`
    update audit_exports set status = 'succeeded', entries_written = ${f.entries}, bytes = ${f.bytes}, sha256 = ${f.sha256}, finished_at = now()
     where tenant_id = ${tenantId} and id = ${id} and status = 'running'
    returning *`
  return row
}

export async function markAuditExportFailed(db: Db, tenantId: string, id: string, error: string) {
  const [row] = await db<AuditExportRow[]>`
    update audit_exports set status = 'failed', error = ${error.slice(0, 1000)}, finished_at = now()
     where tenant_id = ${tenantId} and id = ${id} and status in ('queued', 'running')
    returning *`
  return row
}
