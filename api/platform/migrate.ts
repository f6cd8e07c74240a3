import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { Sql } from './db'

const MIGRATIONS_DIR = join(import.meta.dir, '..', '..', 'migrations')
// Any constant works; it only has to be the same for every replica racing to migrate at start-up.
const LOCK_ID = 727_001

/** Applies every migrations/NNNN_*.sql not yet recorded, each in its own transaction, under an advisory lock. */
export async function migrate(sql: Sql, log: (msg: string) => void = () => {}): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort()
  const applied: string[] = []
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${LOCK_ID})`
    await tx`create table if not exists schema_migrations (name text primary key, applied_at timestamptz not null default now())`
    const done = new Set((await tx<{ name: string }[]>`select name from schema_migrations`).map((r) => r.name))
    for (const file of files) {
      if (done.has(file)) continue
      await tx.unsafe(await Bun.file(join(MIGRATIONS_DIR, file)).text())
      await tx`insert into schema_migrations (name) values (${file})`
      applied.push(file)
      log(`migrated ${file}`)
    }
  })
  return applied
}
