import type { Db } from '../platform/db'

export type OffboardingState = 'open' | 'window_elapsed' | 'cancelled'
export type ExportStatus = 'pending' | 'ready' | 'failed'

export interface OffboardingRow {
  id: string
  tenant_id: string
  state: OffboardingState
  requested_by: string | null
  retention_days: number
  window_ends_at: Date
  workflow_id: string
  export_status: ExportStatus
  export_region_id: string | null
  export_bucket: string | null
  export_prefix: string | null
  export_sha256: string | null
  export_rows: string | null
  export_objects: string | null
  export_error: string | null
  export_ready_at: Date | null
  cancelled_by: string | null
  cancelled_at: Date | null
  window_elapsed_at: Date | null
  created_at: Date
}

const COLUMNS =
  'id, tenant_id, state, requested_by, retention_days, window_ends_at, workflow_id, export_status, export_region_id, export_bucket, export_prefix, ' +
  'export_sha256, export_rows, export_objects, export_error, export_ready_at, cancelled_by, cancelled_at, window_elapsed_at, created_at'

/** undefined when the tenant already has a live request: the unique partial index decides, so of any number of
 *  concurrent requests exactly one inserts. */
export async function insertOffboarding(
  db: Db,
  r: { id: string; tenantId: string; requestedBy: string; retentionDays: number; workflowId: string },
): Promise<OffboardingRow | undefined> {
  const [row] = await db<OffboardingRow[]>`
    insert into tenant_offboarding_requests (id, tenant_id, requested_by, retention_days, window_ends_at, workflow_id)
    values (${r.id}, ${r.tenantId}, ${r.requestedBy}, ${r.retentionDays}, now() + make_interval(days => ${r.retentionDays}), ${r.workflowId})
    on conflict (tenant_id) where state <> 'cancelled' do nothing
    returning ${db.unsafe(COLUMNS)}`
  return row
}

/** The tenant's live request (open or window elapsed), if any. */
export async function findLiveOffboarding(db: Db, tenantId: string): Promise<OffboardingRow | undefined> {
  const [row] = await db<OffboardingRow[]>`
    select ${db.unsafe(COLUMNS)} from tenant_offboarding_requests where tenant_id = ${tenantId} and state <> 'cancelled'`
  return row
}

export async function findOffboarding(db: Db, tenantId: string, id: string): Promise<OffboardingRow | undefined> {
  const [row] = await db<OffboardingRow[]>`select ${db.unsafe(COLUMNS)} from tenant_offboarding_requests where tenant_id = ${tenantId} and id = ${id}`
  return row
}

/** open → cancelled, only before the window's end; undefined when the tenant has no open request in its window. */
export async function cancelOffboarding(db: Db, tenantId: string, cancelledBy: string): Promise<OffboardingRow | undefined> {
  const [row] = await db<OffboardingRow[]>`
    update tenant_offboarding_requests set state = 'cancelled', cancelled_by = ${cancelledBy}, cancelled_at = now(), updated_at = now()
     where tenant_id = ${tenantId} and state = 'open' and window_ends_at > now()
    returning ${db.unsafe(COLUMNS)}`
  return row
}

/** open → window_elapsed (compare-and-set: a cancelled request stays cancelled); undefined when it was not open. */
export async function markWindowElapsed(db: Db, tenantId: string, id: string): Promise<OffboardingRow | undefined> {
  const [row] = await db<OffboardingRow[]>`
    update tenant_offboarding_requests set state = 'window_elapsed', window_elapsed_at = now(), updated_at = now()
     where tenant_id = ${tenantId} and id = ${id} and state = 'open'
    returning ${db.unsafe(COLUMNS)}`
  return row
}

export async function markExportPlanned(db: Db, tenantId: string, id: string, p: { regionId: string; bucket: string; prefix: string }): Promise<boolean> {
  const rows = await db`
    update tenant_offboarding_requests set export_region_id = ${p.regionId}, export_bucket = ${p.bucket}, export_prefix = ${p.prefix}, updated_at = now()
     where tenant_id = ${tenantId} and id = ${id} and state = 'open'`
  return rows.count === 1
}

export async function markExportReady(db: Db, tenantId: string, id: string, r: { sha256: string; rows: number; objects: number }): Promise<boolean> {
  const rows = await db`
    update tenant_offboarding_requests
       set export_status = 'ready', export_sha256 = ${r.sha256}, export_rows = ${r.rows}, export_objects = ${r.objects}, export_ready_at = now(),
           export_error = null, updated_at = now()
     where tenant_id = ${tenantId} and id = ${id} and export_status <> 'ready'`
  return rows.count === 1
}

export async function markExportFailed(db: Db, tenantId: string, id: string, error: string): Promise<void> {
  await db`
    update tenant_offboarding_requests set export_status = 'failed', export_error = ${error.slice(0, 500)}, updated_at = now()
     where tenant_id = ${tenantId} and id = ${id} and export_status = 'pending'`
}
