import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common'
import { ActivityFailure, ApplicationFailure, ParentClosePolicy, proxyActivities, sleep, startChild } from '@temporalio/workflow'
// Type-only: activity code (Postgres) must never be bundled into the workflow sandbox.
import type { Activities } from '../activities'
import { TENANT_ID } from './contract'
import {
  BillingErrorType,
  BillingWorkflowType,
  billingWorkflowIds,
  type BillingSweepResult,
  type InvoiceCloseInput,
  type InvoiceCloseResult,
  type PaymentGraceInput,
} from './contract-billing'

// Short database calls: retried 1 s doubling to 1 minute for up to an hour (a Postgres restart is waited out); a plan
// missing from the price book is final at once.
const { findDueBillingWork, closeInvoicePeriod, expirePaymentGrace } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  scheduleToCloseTimeout: '1 hour',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', nonRetryableErrorTypes: [BillingErrorType.planUnknown] },
})

/** One tenant's period: the snapshot, the next period, the events. A second close of the same period finds the
 *  snapshot and answers `exists`. */
export async function invoiceCloseWorkflow(input: InvoiceCloseInput): Promise<InvoiceCloseResult> {
  try {
    return await closeInvoicePeriod(input.tenantId, input.period)
  } catch (err) {
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === BillingErrorType.planUnknown) throw err.cause
    throw err
  }
}

/** The grace period of one debt: sleeps until it ends, then moves the subscription to unpaid if the same debt is still
 *  open (a payment in between, or a later debt, leaves it alone). */
export async function paymentGraceWorkflow(input: PaymentGraceInput): Promise<{ expired: boolean }> {
  const wait = Date.parse(input.graceEndsAt) - Date.now()
  if (wait > 0) await sleep(wait)
  return { expired: await expirePaymentGrace(input.tenantId, input.pastDueSince) }
}

/** Every BILLING_SWEEP_INTERVAL_MINUTES: starts the close of every period that has ended, and expires the grace of any
 *  debt whose timer was lost (the API starts one per debt; this is the backstop). */
export async function billingSweepWorkflow(): Promise<BillingSweepResult> {
  const due = await findDueBillingWork()
  let closesStarted = 0
  for (const close of due.closes) {
    try {
      await startChild(BillingWorkflowType.close, {
        workflowId: billingWorkflowIds.close(close.tenantId, close.period),
        args: [close],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        typedSearchAttributes: [{ key: TENANT_ID, value: close.tenantId }],
      })
      closesStarted++
    } catch (err) {
      // Running already (or a closed run kept by the id reuse policy): that close is in hand.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err
    }
  }
  let graceExpired = 0
  for (const debt of due.pastGrace) if (await expirePaymentGrace(debt.tenantId, debt.pastDueSince)) graceExpired++
  return { closesStarted, graceExpired }
}
