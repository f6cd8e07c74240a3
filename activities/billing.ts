// Billing activities: what is due, the period close and the grace expiry. Each reuses the billing service and acts
// as the system, named by its workflow; each is safe to repeat (a second close finds the snapshot, a second expiry
// finds the subscription unpaid already).
import { ApplicationFailure } from '@temporalio/activity'
import { closePeriod, PlanNotInPriceBook } from '../api/billing/invoices'
import { periodLabel } from '../api/billing/periods'
import { subscriptionsPastGrace, subscriptionsWithEndedPeriods } from '../api/billing/queries'
import { expireGrace } from '../api/billing/service'
import { BillingErrorType, type DueBillingWork, type InvoiceCloseResult } from '../workflows/contract-billing'
import type { ActivityDeps } from './deps'
import { workflowActor } from './system-actor'

/** At most this many of each kind per sweep: the next sweep takes the rest. */
const SWEEP_BATCH = 500
const HOUR = 3_600_000

export function billingActivities(deps: ActivityDeps) {
  const { sql, config } = deps
  return {
    async findDueBillingWork(): Promise<DueBillingWork> {
      const now = new Date()
      const [ended, overdue] = await Promise.all([
        subscriptionsWithEndedPeriods(sql, now, SWEEP_BATCH),
        subscriptionsPastGrace(sql, new Date(now.getTime() - config.BILLING_GRACE_HOURS * HOUR), SWEEP_BATCH),
      ])
      return {
        closes: ended.map((s) => ({ tenantId: s.tenant_id, period: periodLabel(s.current_period_start) })),
        pastGrace: overdue.map((s) => ({ tenantId: s.tenant_id, pastDueSince: s.past_due_since.toISOString() })),
      }
    },

    async closeInvoicePeriod(tenantId: string, period: string): Promise<InvoiceCloseResult> {
      try {
        const closed = await closePeriod(sql, config, workflowActor(), tenantId, period)
        const invoiceId = closed.outcome === 'finalized' || closed.outcome === 'exists' ? closed.invoice.id : null
        if (closed.outcome === 'finalized') deps.log.info('invoice finalized', { tenantId, period, invoiceId })
        return { outcome: closed.outcome, invoiceId }
      } catch (err) {
        if (err instanceof PlanNotInPriceBook) throw ApplicationFailure.create({ type: BillingErrorType.planUnknown, message: err.message, nonRetryable: true })
        throw err
      }
    },

    async expirePaymentGrace(tenantId: string, pastDueSince: string): Promise<boolean> {
      return expireGrace(sql, config, workflowActor(), tenantId, new Date(pastDueSince))
    },
  }
}
