import type { Db } from '../platform/db'

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

export async function tenantExists(db: Db, tenantId: string): Promise<boolean> {
  const [row] = await db`select 1 from tenants where id = ${tenantId}`
  return row !== undefined
}
