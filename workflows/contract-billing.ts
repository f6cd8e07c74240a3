// The billing part of the Temporal contract (see contract.ts for the rules). Types and constants only.
export const BillingWorkflowType = {
  sweep: 'billingSweepWorkflow',
  close: 'invoiceCloseWorkflow',
  grace: 'paymentGraceWorkflow',
} as const

/** One close per tenant and period: a second start (the sweep and an early close racing) is refused by the id, and
 *  the snapshot's unique index settles whatever gets past it. One grace timer per debt (its first failed payment). */
export const billingWorkflowIds = {
  close: (tenantId: string, period: string) => `invoice-close/${tenantId}/${period}`,
  grace: (tenantId: string, pastDueSince: string) => `payment-grace/${tenantId}/${pastDueSince}`,
} as const

export const billingSweepScheduleId = (config: { TEMPORAL_TASK_QUEUE_PREFIX: string }) => `${config.TEMPORAL_TASK_QUEUE_PREFIX}-billing-sweep`

export const BillingErrorType = {
  /** The subscription's plan is not in the price book: no retry can price it; an operator fixes the book or the plan. */
  planUnknown: 'PlanNotInPriceBook',
} as const

export interface InvoiceCloseInput {
  tenantId: string
  /** YYYY-MM, UTC. */
  period: string
}

export interface InvoiceCloseResult {
  outcome: 'finalized' | 'exists' | 'not_due' | 'no_subscription'
  invoiceId: string | null
}

export interface PaymentGraceInput {
  tenantId: string
  /** The first failed payment of the debt, ISO; the timer ends BILLING_GRACE_HOURS later (graceEndsAt). */
  pastDueSince: string
  graceEndsAt: string
}

export interface DueBillingWork {
  closes: InvoiceCloseInput[]
  pastGrace: { tenantId: string; pastDueSince: string }[]
}

export interface BillingSweepResult {
  closesStarted: number
  graceExpired: number
}
