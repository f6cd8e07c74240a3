// The offboarding export's reads (activities/offboarding.ts): which tables hold a tenant's rows, and the COPY that
// streams those rows as NDJSON. Read-only: every table stays its own domain's to write.
import type { Db } from '../api/platform/db'

export interface TenantTable {
  table: string
  /** The column that names the tenant: `id` for tenants itself, `tenant_id` for every other table. */
  key: string
  columns: string[]
  /** Each column's type name (pg_type.typname), in the order of `columns`. */
  types: string[]
}

/** Every base table with a tenant_id column, with its columns in order, plus `tenants` itself. A table added later
 *  is exported without a change here. */
export async function tenantTables(db: Db): Promise<TenantTable[]> {
  const rows = await db<{ table: string; columns: string[]; types: string[] }[]>`
    select c.table_name as table, array_agg(c.column_name::text order by c.ordinal_position) as columns,
           array_agg(c.udt_name::text order by c.ordinal_position) as types
      from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name and t.table_type = 'BASE TABLE'
     where c.table_schema = current_schema()
       and (c.table_name = 'tenants' or exists (
             select 1 from information_schema.columns k
              where k.table_schema = c.table_schema and k.table_name = c.table_name and k.column_name = 'tenant_id'))
     group by c.table_name
     order by c.table_name`
  return rows.map((r) => ({ table: r.table, key: r.table === 'tenants' ? 'id' : 'tenant_id', columns: r.columns, types: r.types }))
}

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The COPY that writes the tenant's rows of one table as export lines, `{"table":…,"row":{…}}` and a newline each:
 *  Postgres renders every row as JSON (row_to_json; bytes as hex), so no row is parsed or serialised here. CSV with a
 *  delimiter and a quote character that JSON text never holds raw (control characters are escaped in it) writes each
 *  line exactly as it is, where the text format would double every backslash. COPY takes no parameters: names come
 *  from tenantTables (the catalogue) and are quoted, the tenant id must be a UUID. */
export function tenantRowsCopy(t: TenantTable, columns: readonly string[], tenantId: string): string {
  if (!UUID.test(tenantId)) throw new Error(`not a tenant id: ${tenantId}`)
  const cells = columns.map((c) => (t.types[t.columns.indexOf(c)] === 'bytea' ? `encode(${ident(c)}, 'hex') as ${ident(c)}` : ident(c)))
  const head = `${JSON.stringify({ table: t.table }).slice(0, -1)},"row":`
  const rows = `select ${cells.join(', ')} from ${ident(t.table)} where ${ident(t.key)} = ${literal(tenantId)}`
  return `copy (select ${literal(head)} || row_to_json(r)::text || '}' from (${rows}) r) to stdout with (format csv, delimiter e'\\x01', quote e'\\x02')`
}
