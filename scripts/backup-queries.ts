// The database half of scripts/backup.ts: every table's rows through COPY (binary), and back.
import { createReadStream, createWriteStream } from 'node:fs'
import { pipeline } from 'node:stream/promises'
import type { Db, Sql } from '../api/platform/db'

/** Tables whose rows are not data: buckets that start full (rate_budgets), and the migrations' own record (the
 *  restore migrates the empty database first). Audit entries waiting to be sealed (audit_inbox) are committed
 *  entries: they are backed up. */
export const NOT_BACKED_UP = new Set(['rate_budgets', 'schema_migrations'])

export async function tablesToBackUp(sql: Db): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`select tablename as name from pg_tables where schemaname = 'public' order by tablename`
  return rows.map((r) => r.name).filter((t) => !NOT_BACKED_UP.has(t))
}

export async function appliedMigrations(sql: Db): Promise<string[]> {
  return (await sql<{ name: string }[]>`select name from schema_migrations order by name`).map((r) => r.name)
}

/** One table in one consistent snapshot with the others (the caller's repeatable-read transaction). */
export async function copyOut(tx: Db, table: string, file: string): Promise<void> {
  await pipeline(await tx`copy ${tx(table)} to stdout with (format binary)`.readable(), createWriteStream(file))
}

/** Loads every table in one transaction with triggers and foreign keys off (session_replication_role = replica):
 *  the rows are already consistent, and the triggers that keep copies and counts must not run again on rows that
 *  hold their results.
 *  Needs a role that may set session_replication_role (a superuser, or pg_database_owner on PostgreSQL 15+ with
 *  the grant). */
export async function copyIn(sql: Sql, files: { table: string; file: string }[]): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`set local session_replication_role = replica`
    for (const { table, file } of files) await pipeline(createReadStream(file), await tx`copy ${tx(table)} from stdin with (format binary)`.writable())
    // COPY wrote the identity columns' values as they were; their sequences continue after the largest.
    const identities = await tx<{ table: string; column: string }[]>`
      select table_name as table, column_name as column from information_schema.columns where table_schema = 'public' and is_identity = 'YES'`
    for (const { table, column } of identities) {
      await tx`select setval(pg_get_serial_sequence(${table}, ${column}), coalesce((select max(${tx(column)}) from ${tx(table)}), 0) + 1, false)`
    }
  })
}
