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
 *  is exported without a change here. Read from pg_catalog directly (the information_schema views are built on it
 *  with many more joins, and filter by privileges the export's owner role has anyway). */
export async function tenantTables(db: Db): Promise<TenantTable[]> {
  const rows = await db<{ table: string; columns: string[]; types: string[] }[]>`
    select c.relname::text as table, array_agg(a.attname::text order by a.attnum) as columns,
           array_agg(t.typname::text order by a.attnum) as types
      from pg_class c
      join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      join pg_type t on t.oid = a.atttypid
     where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p')
       and (c.relname = 'tenants' or exists (
             select 1 from pg_attribute k where k.attrelid = c.oid and k.attname = 'tenant_id' and k.attnum > 0 and not k.attisdropped))
     group by c.relname
     order by c.relname`
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
