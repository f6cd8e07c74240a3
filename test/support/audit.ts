import type { Db } from '../../api/platform/db'

/** Seals every audit entry committed so far, as the trail's readers do for their chains (migrations/0024): a test
 *  reading audit_log with SQL calls it first. */
export async function sealAudit(sql: Db): Promise<void> {
  await sql`select audit_seal_chains(array(select distinct chain from audit_inbox))`
}
