import type { Db } from '../platform/db'

export type RetiredReason = 'tenant_deleted' | 'account_erased'

/** Remembers the digests of credentials whose rows are about to be destroyed, each until it would have expired by
 *  itself (migrations/0090). Idempotent: a retried step retires nothing twice. */
export async function retireCredentials(db: Db, reason: RetiredReason, creds: readonly { digest: Buffer; expires_at: Date }[]): Promise<number> {
  if (creds.length === 0) return 0
  const rows = await db`
    insert into retired_credentials (digest, reason, expires_at)
    select decode(d, 'hex'), ${reason}, e
      from unnest(${creds.map((c) => c.digest.toString('hex'))}::text[], ${creds.map((c) => c.expires_at.toISOString())}::timestamptz[]) as t (d, e)
     where e > now()
    on conflict (digest) do nothing
    returning 1`
  return rows.length
}

/** True when a presented token's digest is one we stored and have since destroyed the record of. */
export async function isRetired(db: Db, digest: Buffer): Promise<boolean> {
  const [row] = await db`select 1 from retired_credentials where digest = ${digest} and expires_at > now()`
  return row !== undefined
}

/** Housekeeping: up to `limit` retired digests whose credential would have expired by now; returns how many. */
export async function purgeExpiredRetired(db: Db, limit: number): Promise<number> {
  const result = await db`
    delete from retired_credentials where digest in (
      select digest from retired_credentials where expires_at <= now() limit ${limit} for update skip locked)`
  return result.count
}
