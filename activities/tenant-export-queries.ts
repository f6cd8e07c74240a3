// The offboarding export's reads (activities/offboarding.ts): which tables hold a tenant's rows, and those rows,
// streamed. Read-only: every table stays its own domain's to write.
import type { Db, Sql } from '../api/platform/db'

export interface TenantTable {
  table: string
  /** The column that names the tenant: `id` for tenants itself, `tenant_id` for every other table. */
  key: string
  columns: string[]
}

/** Every base table with a tenant_id column, with its columns in order, plus `tenants` itself. A table added later
 *  is exported without a change here. */
export async function tenantTables(db: Db): Promise<TenantTable[]> {
  const rows = await db<{ table: string; columns: string[] }[]>`
    select c.table_name as table, array_agg(c.column_name::text order by c.ordinal_position) as columns
      from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name and t.table_type = 'BASE TABLE'
     where c.table_schema = current_schema()
       and (c.table_name = 'tenants' or exists (
             select 1 from information_schema.columns k
              where k.table_schema = c.table_schema and k.table_name = c.table_name and k.column_name = 'tenant_id'))
     group by c.table_name
     order by c.table_name`
  return rows.map((r) => ({ table: r.table, key: r.table === 'tenants' ? 'id' : 'tenant_id', columns: r.columns }))
}

/** The tenant's rows of one table, `batch` at a time through a cursor: memory holds one batch whatever the table's
 *  size. Table and column names come from tenantTables (the catalogue), never from a request. */
export function tenantRowBatches(
  sql: Sql,
  t: { table: string; key: string; columns: string[] },
  tenantId: string,
  batch: number,
): AsyncIterable<Record<string, unknown>[]> {
  return sql<Record<string, unknown>[]>`select ${sql(t.columns)} from ${sql(t.table)} where ${sql(t.key)} = ${tenantId}`.cursor(batch)
}
