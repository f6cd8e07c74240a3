import { sealAuditChains } from '../../api/audit/queries'
import type { Db } from '../../api/platform/db'

/** Seals every audit entry committed so far, as the trail's readers do for their chains (migrations/0024): a test
 *  reading audit_log with SQL calls it first. Chain by chain, as the readers do: test files share one database, and a
 *  helper holding every chain while it waits for one a test holds on purpose would hold up every other file. */
export async function sealAudit(sql: Db): Promise<void> {
  const rows = await sql<{ chain: string }[]>`select distinct chain from audit_inbox`
  await sealAuditChains(
    sql,
    rows.map((r) => r.chain),
  )
}

export const hourAgo = () => new Date(Date.now() - 3_600_000).toISOString()
export const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString()
/** The from/to query of an audit read around now: the two hours every test's entries fall in. */
export const auditWindow = () => `from=${encodeURIComponent(hourAgo())}&to=${encodeURIComponent(inAnHour())}`
