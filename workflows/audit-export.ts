import { ActivityFailure, ApplicationFailure, CancellationScope, proxyActivities } from '@temporalio/workflow'
// Type-only: activity code (S3, Postgres) must never be bundled into the workflow sandbox.
import type { Activities } from '../activities'
import { ErrorType } from './contract'
import { AuditErrorType, type ExportAuditLogInput } from './contract-audit'

const retry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' }
const permanent = [ErrorType.invalidArgument, ...Object.values(AuditErrorType)]

const { beginAuditExport, finishAuditExport } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { ...retry, maximumAttempts: 10, nonRetryableErrorTypes: permanent },
})

// Long and streaming: the heartbeat (one per batch), not the overall timeout, notices a dead worker; the retry
// writes the file again from the plan in the history.
const { writeAuditExport } = proxyActivities<Activities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '30 seconds',
  retry: { ...retry, maximumAttempts: 5, nonRetryableErrorTypes: permanent },
})

// Recording failure must outlast a flaky database: more attempts, same short call.
const { failAuditExport } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { ...retry, maximumAttempts: 30 },
})

const failureMessage = (err: unknown) =>
  err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? err.cause.message : String((err as Error)?.message ?? err)

/** queued → running → succeeded | failed. The row carries the outcome; the workflow fails too, so the Temporal UI
 *  shows the same thing. */
export async function exportAuditLogWorkflow(input: ExportAuditLogInput): Promise<void> {
  try {
    const plan = await beginAuditExport(input)
    const file = await writeAuditExport(plan)
    await finishAuditExport(plan, file)
  } catch (err) {
    await CancellationScope.nonCancellable(() => failAuditExport(input.tenantId, input.exportId, failureMessage(err)))
    throw err
  }
}
