// Where an invoice's quantities come from: the one narrow function the period close calls. It reads the usage meters
// (api/usage) by occurrence and by when each event was recorded, so an invoice never counts what arrived after its cut.
import type { Db } from '../platform/db'
import { METERS, isMeter } from '../usage/meters'
import { groupRecordedUsage } from '../usage/queries'
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

const EPOCH = new Date(0)

/** In the period: occurred in [periodStart, periodEnd) and recorded before the cut-off, by each meter's aggregation.
 *  Late: occurred before the period, recorded between the previous invoice's cut-off and this one's; only additive
 *  meters (count, sum) have late usage to bill, since a max or a distinct count belongs to the period it was seen in. */
export async function periodUsage(db: Db, w: UsageWindow): Promise<PeriodUsage> {
  const inPeriod = new Map<string, bigint>()
  for (const r of await groupRecordedUsage(db, {
    tenantId: w.tenantId,
    occurredFrom: w.periodStart,
    occurredTo: w.periodEnd,
    recordedFrom: EPOCH,
    recordedBefore: w.cutoff,
  })) {
    const aggregation = isMeter(r.meter) ? METERS[r.meter].aggregation : 'sum'
    inPeriod.set(r.meter, BigInt(aggregation === 'max' ? r.peak : aggregation === 'unique_count' ? r.distinct_subjects : r.total))
  }
  const late = new Map<string, bigint>()
  if (w.previousCutoff) {
    for (const r of await groupRecordedUsage(db, {
      tenantId: w.tenantId,
      occurredFrom: EPOCH,
      occurredTo: w.periodStart,
      recordedFrom: w.previousCutoff,
      recordedBefore: w.cutoff,
    })) {
      const aggregation = isMeter(r.meter) ? METERS[r.meter].aggregation : 'sum'
      if (aggregation === 'count' || aggregation === 'sum') late.set(r.meter, BigInt(r.total))
    }
  }
  return { inPeriod, late }
}
