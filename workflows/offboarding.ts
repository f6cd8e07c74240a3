import { ActivityFailure, ApplicationFailure, CancellationScope, condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow'
// Type-only: activity code (S3, Postgres) must never be bundled into the workflow sandbox.
import type { Activities } from '../activities'
import { ErrorType } from './contract'
import { OFFBOARDING_CANCEL_SIGNAL, OffboardingErrorType, type OffboardingOutcome, type TenantOffboardingInput } from './contract-offboarding'

const retry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' }
const permanent = [ErrorType.invalidArgument, ...Object.values(OffboardingErrorType)]

const { planTenantExport, finishTenantExport } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { ...retry, maximumAttempts: 10, nonRetryableErrorTypes: permanent },
})

// Long and streaming: the heartbeat (one per batch or page), not the overall timeout, notices a dead worker; the
// retry writes the files again from the plan in the history.
const { writeTenantExport } = proxyActivities<Activities>({
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '1 minute',
  retry: { ...retry, maximumAttempts: 5, nonRetryableErrorTypes: permanent },
})

// Recording an outcome must outlast a flaky database: more attempts, same short call. The window's end is retried
// until it lands (it is the deletion's starting point), backing off to a minute.
const { failTenantExport } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { ...retry, maximumAttempts: 30 },
})
const { offboardingWindowElapsed } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
})

const offboardingCancelled = defineSignal(OFFBOARDING_CANCEL_SIGNAL)

const failureMessage = (err: unknown) =>
  err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? err.cause.message : String((err as Error)?.message ?? err)

/** Exports the tenant, then waits out the retention window as a durable timer. DELETE /v1/tenants/current/offboarding
 *  reactivates the tenant in its own transaction and signals here: the workflow ends. At the window's end the request
 *  becomes window_elapsed (offboardingWindowElapsed), where the deletion job takes over. A failed export is recorded
 *  on the request and shown in its view; the window runs on either way. */
export async function tenantOffboardingWorkflow(input: TenantOffboardingInput): Promise<OffboardingOutcome> {
  let cancelled = false
  setHandler(offboardingCancelled, () => {
    cancelled = true
  })
  try {
    const plan = await planTenantExport(input)
    if (!cancelled) {
      const result = await writeTenantExport(plan)
      if (!cancelled) await finishTenantExport(plan, result)
    }
  } catch (err) {
    if (!cancelled) await CancellationScope.nonCancellable(() => failTenantExport(input.tenantId, input.requestId, failureMessage(err)))
  }
  // Workflow time is replay-safe: the same wait whenever this is replayed.
  const remainingMs = Date.parse(input.windowEndsAt) - Date.now()
  if (!cancelled && remainingMs > 0) await condition(() => cancelled, remainingMs)
  if (cancelled) return 'cancelled'
  // A cancellation whose signal was lost is still seen here: the activity moves only an open request.
  return (await offboardingWindowElapsed(input.tenantId, input.requestId)) ? 'window_elapsed' : 'cancelled'
}
