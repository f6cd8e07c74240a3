// What stops a tenant deletion, asked before the job starts and again before every batch it deletes.
import { activeHolds } from '../legal-holds/queries'
import type { Db } from '../platform/db'

export interface DeletionBlocker {
  code: 'OFFBOARDING_BLOCKED_BY_LEGAL_HOLD'
  message: string
}

/** The first blocker of the tenant's deletion, or null. Any active hold of the tenant blocks it, whatever its scope:
 *  a member's or a project's data is among what the deletion removes. */
export async function deletionBlocker(db: Db, tenantId: string): Promise<DeletionBlocker | null> {
  const holds = await activeHolds(db, tenantId)
  if (holds.length === 0) return null
  return { code: 'OFFBOARDING_BLOCKED_BY_LEGAL_HOLD', message: `The tenant is under ${holds.length} active legal hold(s); release them before deleting it` }
}
