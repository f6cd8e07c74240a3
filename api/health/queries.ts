import type { Db } from '../platform/db'

/** Postgres answers a trivial query on this pool. */
export async function databaseAnswers(db: Db): Promise<boolean> {
  return (await db`select 1 as ok`).length === 1
}
