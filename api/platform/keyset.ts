import type { Db } from './db'

export interface CreatedCursor {
  createdAt: string
  id: string
}

/** A timestamptz column as text with its microseconds, for a cursor: a JS Date keeps only milliseconds. */
export const microsecondText = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

/** created_at as the cursor text of a newest-first list. */
export const CURSOR_AT = `${microsecondText('created_at')} as cursor_at`

/** The keyset condition of a newest-first list on (created_at, id). The cursor travels as text: the driver would
 *  round a timestamptz parameter to milliseconds and repeat or skip rows at page boundaries. */
export const newestFirstAfter = (db: Db, after: CreatedCursor | null) =>
  after ? db`and (created_at, id) < (${after.createdAt}::text::timestamptz, ${after.id}::uuid)` : db``

/** The cursor of a row selected with CURSOR_AT. */
export const createdCursorOf = (row: { cursor_at: string; id: string }): CreatedCursor => ({ createdAt: row.cursor_at, id: row.id })
