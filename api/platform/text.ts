// Free text a tenant names things with (profile names, robot types, model version names) is written into files other
// programs read: the edge package's README, logs, exports. A name is one line of visible text, so the characters that
// would end a line or reorder what is shown are refused where the name is accepted, with the field named.
import { z } from 'zod'

/** C0 and C1 controls (line feed, NEL…), DEL, the Unicode line and paragraph separators, and the bidirectional
 *  marks and overrides (U+200E/F, U+202A–E, U+2066–9) that make text display in another order than it reads. */
export const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/
const PRINTABLE = new RegExp(`^[^${UNPRINTABLE.source.slice(1, -1)}]*$`)
export const SINGLE_LINE_RULE = 'one line of visible text: no control characters, line or paragraph separators, or bidirectional overrides'

/** A trimmed name of 1 to `max` characters on one line. */
export const singleLineText = (max: number) => z.string().trim().min(1).max(max).regex(PRINTABLE, SINGLE_LINE_RULE)
