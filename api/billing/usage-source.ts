// Where an invoice's quantities come from: the one narrow function the period close calls, so the source can change
// without the close changing. It counts what occurred in the period and was recorded before the cut-off, and what
// was recorded since the previous invoice's cut-off for earlier periods (late arrivals, billed as adjustments).
import { countPackagesRequested } from '../edge-packages/queries'
import type { Db } from '../platform/db'
import type { PeriodUsage } from './snapshot'

export interface UsageWindow {
  tenantId: string
  periodStart: Date
  periodEnd: Date
  /** Usage recorded from this instant on belongs to the next invoice. */
  cutoff: Date
  /** The previous invoice's cut-off; null for a subscription's first invoice. */
  previousCutoff: Date | null
}

/** Edge package builds, counted from the builds table itself: a build's row is written when it is requested, so
 *  nothing can arrive late and `late` stays empty. */
export async function periodUsage(db: Db, w: UsageWindow): Promise<PeriodUsage> {
  const end = new Date(Math.min(w.periodEnd.getTime(), w.cutoff.getTime()))
  const builds = await countPackagesRequested(db, w.tenantId, w.periodStart, end)
  return { inPeriod: new Map([['edge_package.builds', builds]]), late: new Map() }
}
