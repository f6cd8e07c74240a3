import type { Db } from '../platform/db'

/** Takes up to `want` tokens from the shared bucket: the number taken, or minus the seconds until one is there. */
export async function leaseTokens(db: Db, kind: string, id: string, perMinute: number, want: number): Promise<number> {
  const [row] = await db<{ n: number }[]>`select rate_budget_lease(${kind}, ${id}, ${perMinute}, ${perMinute / 60}, ${want}) as n`
  return row!.n
}

/** Buckets untouched for a minute are full again, so deleting them changes nothing; housekeeping calls this. */
export async function purgeIdleBudgets(db: Db, limit: number): Promise<number> {
  const rows = await db`
    delete from rate_budgets where ctid in (select ctid from rate_budgets where at < now() - interval '1 minute' limit ${limit})`
  return rows.count
}
