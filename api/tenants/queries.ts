import type { Db } from '../platform/db'
import type { TenantLifecycle } from '../identity/standing'

export interface TenantRow {
  id: string
  name: string
  slug: string
  version: number
  created_at: Date
}

/** null when the slug is taken. */
export async function insertTenant(db: Db, t: { name: string; slug: string }): Promise<TenantRow | null> {
  const [row] = await db<TenantRow[]>`insert into tenants (name, slug) values (${t.name}, ${t.slug}) on conflict (slug) do nothing returning *`
  return row ?? null
}

export async function findTenantName(db: Db, tenantId: string): Promise<string> {
  const [row] = await db<{ name: string }[]>`select name from tenants where id = ${tenantId}`
  return row?.name ?? 'your organisation'
}

/** The tenant deletion's last statement: every row of the tenant is gone by then (api/tenant-deletion). */
export async function deleteTenantRow(db: Db, tenantId: string): Promise<boolean> {
  const rows = await db`delete from tenants where id = ${tenantId} returning 1`
  return rows.length === 1
}

/** The tombstone of a deleted tenant, written in the deletion's last commit beside deleteTenantRow: nothing personal,
 *  only the id, when, and the job and receipt that prove it (migrations/0090). */
export async function insertTenantTombstone(db: Db, t: { tenantId: string; jobId: string; receiptSha256: string }): Promise<void> {
  await db`
    insert into tenant_tombstones (tenant_id, deletion_job_id, receipt_sha256) values (${t.tenantId}, ${t.jobId}, ${t.receiptSha256})
    on conflict (tenant_id) do nothing`
}

/** True when the id is a tenant that a deletion removed (never for one that does not exist or never did). */
export async function isTenantDeleted(db: Db, tenantId: string): Promise<boolean> {
  const [row] = await db`select 1 from tenant_tombstones where tenant_id = ${tenantId}`
  return row !== undefined
}

export async function tenantExists(db: Db, tenantId: string): Promise<boolean> {
  const [row] = await db`select 1 from tenants where id = ${tenantId}`
  return row !== undefined
}

/** Moves a tenant from one lifecycle state to the next (compare-and-set on `from`): false when it was not in `from`.
 *  Every cached credential of the tenant is evicted by the change (migrations/0045); a writer that narrows what the
 *  tenant may do fences before answering (CredentialCache.fence). */
export async function setTenantLifecycle(db: Db, tenantId: string, from: TenantLifecycle, to: TenantLifecycle): Promise<boolean> {
  const rows = await db`
    update tenants set lifecycle = ${to}, lifecycle_changed_at = now(), updated_at = now()
     where id = ${tenantId} and lifecycle = ${from}`
  return rows.count === 1
}

/** The tenant's lifecycle state, locked for the caller's transaction; undefined when there is no such tenant. */
export async function lockTenantLifecycle(db: Db, tenantId: string): Promise<TenantLifecycle | undefined> {
  const [row] = await db<{ lifecycle: TenantLifecycle }[]>`select lifecycle from tenants where id = ${tenantId} for update`
  return row?.lifecycle
}
