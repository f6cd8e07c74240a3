// The re-seal after a key rotation (docs/operations.md "Key rotation"): every sealed value moves to the current key of
// SECRET_KEY's ring, one column and one batch at a time (workflows/reseal.ts drives it), so the old key can leave.
// Only the re-seal's activities (reseal.ts) run it, so it lives beside them; the columns are the domains' own.
import { outboxData } from '../api/mail/queries'
import { totpSecrets } from '../api/mfa/queries'
import { idempotentResponses } from '../api/idempotency/queries'
import type { ServiceDeps } from '../api/platform/deps'
import { open, seal, sealedWithCurrent, type SealedColumn } from '../api/platform/keyring'
import { ssoClientSecrets } from '../api/sso/queries'
import { endpointSecrets } from '../api/webhook-endpoints/queries'

/** Every sealed column of the schema. A new one must be added here, or a rotation would strand it: the keys test
 *  compares this list with the bytea columns of the database. */
export const SEALED_COLUMNS: readonly SealedColumn[] = [totpSecrets, ssoClientSecrets, ...endpointSecrets, outboxData, idempotentResponses]

export const sealedColumnNamed = (name: string): SealedColumn | undefined => SEALED_COLUMNS.find((c) => c.name === name)

export interface ResealBatchResult {
  scanned: number
  resealed: number
  /** Values that changed between the read and the swap; their writer sealed them with the current key. */
  changedMeanwhile: number
  /** Values no key of the ring opens (sealed with a key already removed): left as they are, and reported, since
   *  no retry can open them. */
  unreadable: number
  /** Cursor of the next batch; null when the column is done. */
  next: string | null
}

function openable(keys: ServiceDeps['keys'], column: SealedColumn, sealed: Buffer): string | null {
  try {
    return open(keys, column.purpose, sealed)
  } catch {
    return null
  }
}

/** One batch of a column: values sealed with an earlier key (or in the format before the keyring) are opened and
 *  sealed again with the current key, each by a compare-and-swap on the old bytes. */
export async function resealBatch(
  deps: Pick<ServiceDeps, 'sql' | 'keys'>,
  column: SealedColumn,
  after: string | null,
  limit: number,
): Promise<ResealBatchResult> {
  const rows = await column.batch(deps.sql, after, limit)
  let resealed = 0
  let changedMeanwhile = 0
  let unreadable = 0
  for (const row of rows) {
    if (sealedWithCurrent(deps.keys, row.sealed)) continue
    const plaintext = openable(deps.keys, column, row.sealed)
    if (plaintext === null) {
      unreadable++
      continue
    }
    if (await column.replace(deps.sql, row.id, row.sealed, seal(deps.keys, column.purpose, plaintext))) resealed++
    else changedMeanwhile++
  }
  return { scanned: rows.length, resealed, changedMeanwhile, unreadable, next: rows.length < limit ? null : rows[rows.length - 1]!.id }
}
