import type { Db } from '../../api/platform/db'

/** Seals every audit entry committed so far, as the trail's readers do for their chains (migrations/0024): a test
 *  reading audit_log with SQL calls it first. */
export async function sealAudit(sql: Db): Promise<void> {
  await sql`select audit_seal_chains(array(select distinct chain from audit_inbox))`
}

export const hourAgo = () => new Date(Date.now() - 3_600_000).toISOString()
export const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString()
/** The from/to query of an audit read around now: the two hours every test's entries fall in. */
export const auditWindow = () => `from=${encodeURIComponent(hourAgo())}&to=${encodeURIComponent(inAnHour())}`
