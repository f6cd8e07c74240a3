import type { Db } from './db'

export interface CreatedCursor {
  createdAt: string
  id: string
}

/** created_at as text with its microseconds, for the cursor: a JS Date keeps only milliseconds. */
export const CURSOR_AT = `to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_at`

/** The keyset condition of a newest-first list on (created_at, id). The cursor travels as text: the driver would
 *  round a timestamptz parameter to milliseconds and repeat or skip rows at page boundaries. */
export const newestFirstAfter = (db: Db, after: CreatedCursor | null) =>
  after ? db`and (created_at, id) < (${after.createdAt}::text::timestamptz, ${after.id}::uuid)` : db``

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** Path ids are checked before they reach SQL, so a malformed one is a plain 404, not a database error. */
export const isUuid = (v: string): boolean => UUID.test(v)
