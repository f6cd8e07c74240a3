// Billing periods are calendar months in UTC, named "YYYY-MM". A subscription's first period runs from its start to
// the end of that month; every later one is a whole month. Pure functions: the close and the sweep share them.

export const periodLabel = (start: Date): string => start.toISOString().slice(0, 7)

/** The first instant of the month after `at` (UTC). */
export const monthEndAfter = (at: Date): Date => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1))

export const PERIOD_LABEL = /^\d{4}-(0[1-9]|1[0-2])$/
